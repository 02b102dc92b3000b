// Values as text, the way Julia shows them: shortest round-trip numbers
// (FormatDouble, FormatFloat), FormatValue and TypeName for every kind, and
// DisplayString, the escaping every tool applies to strings from a trace.
//
// Text forms of tensors (FormatValue writes them, ParseLiteral reads them;
// elements are listed in row-major order):
//   vector            [1.0, 2.0]            empty: Float64[]
//   matrix            [1.0 2.0; 3.0 4.0]    1×n: [1.0 2.0]   n×1: [1.0; 2.0;;]
//   other ranks       2×2×2[1.0, 2.0, ...]  (shape prefix) 0×3 Float64[]
//   0-dimensional     fill(1.0)
// Float32 and Int32 tensors carry their element type, as Julia prints them:
// Float32[1.5, 2.0], Int32[1 2; 3 4], 2×2×2 Int32[...]. A tensor with more
// than FormatOptions::max_elements elements is abbreviated to its first
// three and its last element: [0.1, 0.2, 0.3, …, 0.9] for vectors and
// 100×100[0.1, 0.2, 0.3, …, 0.9] (shape prefixed) for other ranks.
#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <span>
#include <unordered_map>

#include "irt/value.h"
#include "model/utf8.h"

namespace irt {

namespace {

// Appends a finite, nonzero number given by its shortest decimal digits and
// the power of ten of its first digit, the way Julia's Ryu.writeshortest
// does for show(): plain notation when 1e-4 <= |x| < 1e6, otherwise
// d.ddd{expchar}N; plain Float32 gets the suffix "f0".
void AppendShortest(std::string& out, bool neg, std::string_view digits, int exp10, char expchar,
                    bool f0_suffix) {
  if (neg) out += '-';
  int n = static_cast<int>(digits.size());
  int pt = exp10 + 1;  // digits before the decimal point
  if (pt > -4 && pt <= 6) {
    if (pt <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-pt), '0');
      out += digits;
    } else if (pt >= n) {
      out += digits;
      out.append(static_cast<size_t>(pt - n), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(pt));
      out += '.';
      out += digits.substr(static_cast<size_t>(pt));
    }
    if (f0_suffix) out += "f0";
    return;
  }
  out += digits[0];
  out += '.';
  if (n > 1) {
    out += digits.substr(1);
  } else {
    out += '0';
  }
  out += expchar;
  out += std::to_string(exp10);
}

// Splits std::to_chars' shortest scientific form ("-8.4147e-01") into
// sign, significant digits and decimal exponent.
template <typename T>
void AppendFloat(std::string& out, T x, char expchar, bool f0_suffix) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  bool neg = false;
  if (!s.empty() && s[0] == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  size_t e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e)) {
    if (c != '.') digits += c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exp10 = 0;
  std::string_view es = s.substr(e + 1);
  if (!es.empty() && es[0] == '+') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp10);
  AppendShortest(out, neg, digits, exp10, expchar, f0_suffix);
}

void AppendDouble(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "NaN";
  } else if (std::isinf(d)) {
    out += d > 0 ? "Inf" : "-Inf";
  } else if (d == 0) {
    out += std::signbit(d) ? "-0.0" : "0.0";
  } else {
    AppendFloat(out, d, 'e', false);
  }
}

// `typed`: as a standalone Float32 (1.5f0, NaN32); otherwise as an element of
// a Float32 array, where Julia leaves the type implicit (1.5, NaN).
void AppendF32(std::string& out, float f, bool typed) {
  if (std::isnan(f)) {
    out += typed ? "NaN32" : "NaN";
  } else if (std::isinf(f)) {
    out += f > 0 ? "Inf" : "-Inf";
    if (typed) out += "32";
  } else if (f == 0) {
    out += std::signbit(f) ? "-0.0" : "0.0";
    if (typed) out += "f0";
  } else {
    AppendFloat(out, f, typed ? 'f' : 'e', typed);
  }
}

}  // namespace

std::string FormatDouble(double d) {
  std::string out;
  AppendDouble(out, d);
  return out;
}

std::string FormatFloat(float f) {
  std::string out;
  AppendF32(out, f, true);
  return out;
}

namespace internal {

size_t Utf8Length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

}  // namespace internal

// ---------------------------------------------------------------------------
// FormatValue and TypeName

namespace {

void AppendHexByte(std::string& out, uint8_t c) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

// Julia's escape_string as used by show(::String) when `quoted`; without
// it, only what could act on a terminal or is not UTF-8 is escaped (for
// names). Either way a string longer than kMaxDisplayBytes is cut.
void AppendEscaped(std::string& out, std::string_view s, bool quoted) {
  size_t full = s.size();
  if (full > kMaxDisplayBytes) {
    size_t cut = kMaxDisplayBytes;
    while (cut > 0 && (static_cast<uint8_t>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut);
  }
  if (quoted) out += '"';
  for (size_t i = 0; i < s.size();) {
    uint8_t c = static_cast<uint8_t>(s[i]);
    if (!quoted && (c == '"' || c == '\\' || c == '$')) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '$':
        out += "\\$";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\v':
        out += "\\v";
        break;
      case 0x1B:
        out += "\\e";
        break;
      case 0:
        if (i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7') {
          AppendHexByte(out, 0);
        } else {
          out += "\\0";
        }
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          AppendHexByte(out, c);
        } else if (c < 0x80) {
          out += static_cast<char>(c);
        } else if (size_t n = internal::Utf8Length(s, i); n > 0) {
          uint8_t c2 = static_cast<uint8_t>(s[i + 1]);
          if (c == 0xC2 && c2 < 0xA0) {
            // C1 controls (U+0080..U+009F): some terminals act on them.
            // Four digits when a hex digit follows, which the escape
            // would otherwise take in, as Julia's escape_string does.
            static const char kHex[] = "0123456789abcdef";
            out += "\\u";
            if (i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 2])))
              out += "00";
            out += kHex[c2 >> 4];
            out += kHex[c2 & 15];
          } else {
            out.append(s.substr(i, n));
          }
          i += n;
          continue;
        } else {
          AppendHexByte(out, c);
        }
        break;
    }
    ++i;
  }
  if (full > s.size()) out += "…(" + std::to_string(full) + " bytes)";
  if (quoted) out += '"';
}

void AppendQuoted(std::string& out, std::string_view s) { AppendEscaped(out, s, true); }

// A tensor's parts, wherever its elements are (a Tensor, or a trace).
struct TensorParts {
  DType dtype;
  std::span<const int64_t> shape;
  std::span<const uint8_t> data;
};

// One tensor element; Float32 and Int32 elements rely on the array's type prefix.
void AppendElement(std::string& out, const TensorParts& t, int64_t i) {
  const uint8_t* p = t.data.data() + static_cast<size_t>(i) * DTypeSize(t.dtype);
  switch (t.dtype) {
    case DType::kF64: {
      double d;
      std::memcpy(&d, p, 8);
      AppendDouble(out, d);
      break;
    }
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      AppendF32(out, f, false);
      break;
    }
    case DType::kI64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      out += std::to_string(x);
      break;
    }
    case DType::kI32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      out += std::to_string(x);
      break;
    }
    case DType::kBool:
      out += *p != 0 ? "true" : "false";
      break;
  }
}

void AppendElements(std::string& out, const TensorParts& t, int64_t n, bool abbreviate,
                    int64_t max_elements) {
  int64_t head = n, tail = 0;
  if (abbreviate) {
    head = std::max<int64_t>(1, std::min<int64_t>(3, max_elements - 1));
    tail = 1;
  }
  for (int64_t i = 0; i < head; ++i) {
    if (i > 0) out += ", ";
    AppendElement(out, t, i);
  }
  if (tail > 0) {
    out += ", …";
    for (int64_t i = n - tail; i < n; ++i) {
      out += ", ";
      AppendElement(out, t, i);
    }
  }
}

void AppendTensor(std::string& out, const TensorParts& t, const FormatOptions& opts) {
  size_t esize = DTypeSize(t.dtype);
  int64_t n = 1;
  bool valid = esize > 0;
  for (int64_t d : t.shape) {
    if (d < 0 || (d > 0 && n > std::numeric_limits<int64_t>::max() / d)) valid = false;
    if (valid) n *= d;
  }
  if (!valid || t.data.size() / esize < static_cast<uint64_t>(n)) {
    out += "<invalid tensor>";
    return;
  }
  bool needs_type = t.dtype == DType::kF32 || t.dtype == DType::kI32;
  bool abbreviate = opts.max_elements > 0 && n > opts.max_elements;
  size_t rank = t.shape.size();
  if (rank == 0) {
    out += "fill(";
    if (t.dtype == DType::kF32) {
      float f;
      std::memcpy(&f, t.data.data(), 4);
      AppendF32(out, f, true);
    } else if (t.dtype == DType::kI32) {
      out += "Int32(";
      AppendElement(out, t, 0);
      out += ')';
    } else {
      AppendElement(out, t, 0);
    }
    out += ')';
    return;
  }
  if (rank == 1 && n == 0) {
    out += DTypeName(t.dtype);
    out += "[]";
    return;
  }
  if (rank == 1) {
    if (needs_type) out += DTypeName(t.dtype);
    out += '[';
    AppendElements(out, t, n, abbreviate, opts.max_elements);
    out += ']';
    return;
  }
  if (rank == 2 && n > 0 && !abbreviate) {
    int64_t rows = t.shape[0], cols = t.shape[1];
    if (needs_type) out += DTypeName(t.dtype);
    out += '[';
    for (int64_t r = 0; r < rows; ++r) {
      if (r > 0) out += "; ";
      for (int64_t c = 0; c < cols; ++c) {
        if (c > 0) out += ' ';
        AppendElement(out, t, r * cols + c);
      }
    }
    if (cols == 1) out += ";;";
    out += ']';
    return;
  }
  for (size_t i = 0; i < rank; ++i) {
    if (i > 0) out += "×";
    out += std::to_string(t.shape[i]);
  }
  if (needs_type || n == 0) {
    out += ' ';
    out += DTypeName(t.dtype);
  }
  out += '[';
  AppendElements(out, t, n, abbreviate, opts.max_elements);
  out += ']';
}

void AppendLeaf(std::string& out, const Value& v, const FormatOptions& opts) {
  switch (v.kind()) {
    case VKind::kNone:
      out += "none";
      break;
    case VKind::kNothing:
      out += "nothing";
      break;
    case VKind::kBool:
      out += v.as_bool() ? "true" : "false";
      break;
    case VKind::kI64:
      out += std::to_string(v.as_i64());
      break;
    case VKind::kF64:
      AppendDouble(out, v.as_f64());
      break;
    case VKind::kF32:
      AppendF32(out, v.as_f32(), true);
      break;
    case VKind::kString:
      AppendQuoted(out, v.str());
      break;
    case VKind::kFunction:
      AppendEscaped(out, v.str(), false);
      break;
    case VKind::kTensor: {
      const Tensor& t = v.tensor();
      AppendTensor(out, {t.dtype, t.shape, t.data}, opts);
      break;
    }
    case VKind::kTuple:
      break;  // handled by the callers
  }
}

}  // namespace

std::string DisplayString(std::string_view s) {
  std::string out;
  AppendEscaped(out, s, false);
  return out;
}

// The longest text of an abbreviated tuple, in bytes (then "…").
constexpr size_t kMaxTupleTextBytes = 64 * 1024;

std::string FormatValue(const Value& v, const FormatOptions& opts) {
  std::string out;
  if (v.kind() != VKind::kTuple) {
    AppendLeaf(out, v, opts);
    return out;
  }
  // Tuples iteratively: nesting depth comes from data.
  struct Frame {
    const std::vector<Value>* items;
    size_t next;
  };
  std::vector<Frame> stack;
  out += '(';
  stack.push_back({&v.tuple(), 0});
  while (!stack.empty()) {
    // Items may share tuples, so a tuple's text can grow with its decoded
    // size (up to 2^24 leaves); abbreviated like a large tensor, it is cut.
    if (opts.max_elements != 0 && out.size() > kMaxTupleTextBytes) {
      out += "…";
      return out;
    }
    Frame& f = stack.back();
    if (f.next == f.items->size()) {
      if (f.items->size() == 1) out += ',';
      out += ')';
      stack.pop_back();
      continue;
    }
    if (f.next > 0) out += ", ";
    const Value& item = (*f.items)[f.next++];
    if (item.kind() == VKind::kTuple) {
      out += '(';
      stack.push_back({&item.tuple(), 0});
    } else {
      AppendLeaf(out, item, opts);
    }
  }
  return out;
}

namespace {

void AppendTypeLeaf(std::string& out, const Value& v) {
  switch (v.kind()) {
    case VKind::kNone:
      out += "None";
      break;
    case VKind::kNothing:
      out += "Nothing";
      break;
    case VKind::kBool:
      out += "Bool";
      break;
    case VKind::kI64:
      out += "Int64";
      break;
    case VKind::kF64:
      out += "Float64";
      break;
    case VKind::kF32:
      out += "Float32";
      break;
    case VKind::kString:
      out += "String";
      break;
    case VKind::kFunction:
      out += "typeof(";
      AppendEscaped(out, v.str(), false);
      out += ')';
      break;
    case VKind::kTensor:
      out += TensorTypeName(v.tensor().dtype, v.tensor().shape.size());
      break;
    case VKind::kTuple:
      break;
  }
}

}  // namespace

// The longest type name shown, in bytes (then "…").
constexpr size_t kMaxTypeNameBytes = 1024;

std::string FormatTensor(DType dtype, std::span<const int64_t> shape, std::span<const uint8_t> data,
                         const FormatOptions& opts) {
  std::string out;
  AppendTensor(out, {dtype, shape, data}, opts);
  return out;
}

std::string TensorTypeName(DType dtype, size_t rank) {
  std::string out(rank == 1 ? "Vector{" : rank == 2 ? "Matrix{" : "Array{");
  out += DTypeName(dtype);
  if (rank != 1 && rank != 2) {
    out += ", ";
    out += std::to_string(rank);
  }
  out += '}';
  return out;
}

std::string TypeName(const Value& v) {
  std::string out;
  if (v.kind() != VKind::kTuple) {
    AppendTypeLeaf(out, v);
    return out;
  }
  struct Frame {
    const std::vector<Value>* items;
    size_t next;
  };
  std::vector<Frame> stack;
  out += "Tuple{";
  stack.push_back({&v.tuple(), 0});
  while (!stack.empty()) {
    // Items may share tuples, so the name of a tuple can grow with its
    // decoded size (up to 2^24 leaves): it is cut, like long strings.
    if (out.size() > kMaxTypeNameBytes) {
      out += "…";
      return out;
    }
    Frame& f = stack.back();
    if (f.next == f.items->size()) {
      out += '}';
      stack.pop_back();
      continue;
    }
    if (f.next > 0) out += ", ";
    const Value& item = (*f.items)[f.next++];
    if (item.kind() == VKind::kTuple) {
      out += "Tuple{";
      stack.push_back({&item.tuple(), 0});
    } else {
      AppendTypeLeaf(out, item);
    }
  }
  return out;
}
namespace {

void AppendKeyLeaf(std::string& out, const Value& v) {
  out += std::to_string(static_cast<int>(v.kind()));
  switch (v.kind()) {
    case VKind::kString:
    case VKind::kFunction:
      out += ':' + std::to_string(v.str().size()) + ':';
      out += v.str();
      break;
    case VKind::kTensor: {
      const Tensor& t = v.tensor();
      out += ':' + std::to_string(static_cast<int>(t.dtype));
      for (int64_t d : t.shape) out += 'x' + std::to_string(d);
      out += ':' + std::to_string(t.data.size()) + ':';
      out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
      break;
    }
    default:
      out += ':' + std::to_string(v.bits());
  }
}

}  // namespace

std::string ValueKey(const Value& v) {
  std::string out;
  if (v.kind() != VKind::kTuple) {
    AppendKeyLeaf(out, v);
    return out;
  }
  std::unordered_map<const void*, size_t> seen;  // tuple items -> first-seen number
  struct Frame {
    const std::vector<Value>* items;
    size_t next;
  };
  std::vector<Frame> stack;
  seen.emplace(&v.tuple(), 0);
  out += '(';
  stack.push_back({&v.tuple(), 0});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == f.items->size()) {
      out += ')';
      stack.pop_back();
      continue;
    }
    const Value& item = (*f.items)[f.next++];
    out += ',';
    if (item.kind() != VKind::kTuple) {
      AppendKeyLeaf(out, item);
      continue;
    }
    auto [it, fresh] = seen.emplace(&item.tuple(), seen.size());
    if (!fresh) {
      out += '#' + std::to_string(it->second);
      continue;
    }
    out += '(';
    stack.push_back({&item.tuple(), 0});
  }
  return out;
}

}  // namespace irt
