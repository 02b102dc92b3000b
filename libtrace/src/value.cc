// Values: construction and access, Julia-style text (show) for every kind,
// literal parsing (the inverse of FormatValue), and NumPy .npy files.
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
#include "irt/value.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <optional>

#include "irt/output.h"
#include "utf8.h"

namespace irt {

// ---------------------------------------------------------------------------
// Value and Tensor

struct Value::Heap {
  std::string str;
  Tensor tensor;
  std::vector<Value> items;
  ~Heap();
};

Value::Heap::~Heap() {
  // Releases nested tuples iteratively, so that a long chain of tuples
  // nested in tuples does not recurse once per level.
  std::vector<Value> pending = std::move(items);
  while (!pending.empty()) {
    Value v = std::move(pending.back());
    pending.pop_back();
    if (v.kind_ == VKind::kTuple && v.heap_ && v.heap_.use_count() == 1) {
      auto& inner = const_cast<Heap&>(*v.heap_).items;
      for (Value& x : inner) pending.push_back(std::move(x));
      inner.clear();
    }
  }
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF64:
    case DType::kI64:
      return 8;
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kBool:
      return 1;
  }
  return 0;
}

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF64:
      return "Float64";
    case DType::kF32:
      return "Float32";
    case DType::kI64:
      return "Int64";
    case DType::kI32:
      return "Int32";
    case DType::kBool:
      return "Bool";
  }
  return "Unknown";
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

double Tensor::at(int64_t i) const {
  size_t size = DTypeSize(dtype);
  size_t off = static_cast<size_t>(i) * size;
  if (i < 0 || size == 0 || off + size > data.size()) return std::nan("");
  const uint8_t* p = data.data() + off;
  switch (dtype) {
    case DType::kF64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::kI64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      return static_cast<double>(x);
    }
    case DType::kI32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case DType::kBool:
      return *p != 0 ? 1.0 : 0.0;
  }
  return std::nan("");
}

Result<int64_t> CheckedNumel(std::span<const int64_t> shape) {
  auto text = [&] {
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "×" : "") + std::to_string(shape[i]);
    return s;
  };
  if (shape.size() > kMaxTensorDims) {
    return DataError(std::to_string(shape.size()) + " dimensions, more than " +
                     std::to_string(kMaxTensorDims));
  }
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return DataError("negative dimension in shape " + text());
    empty = empty || d == 0;
  }
  if (empty) return int64_t{0};
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d > kMaxTensorElements / n) {
      return DataError("shape " + text() + " has more than " + std::to_string(kMaxTensorElements) +
                       " elements");
    }
    n *= d;
  }
  return n;
}

Result<Tensor> Tensor::Make(DType dtype, std::vector<int64_t> shape) {
  IRT_ASSIGN_OR_RETURN(int64_t n, CheckedNumel(shape));
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  size_t bytes = static_cast<size_t>(n) * DTypeSize(dtype);
  try {
    t.data.assign(bytes, 0);
  } catch (const std::bad_alloc&) {
    return IoError("out of memory for a tensor of " + std::to_string(bytes) + " bytes");
  }
  return t;
}

Tensor Tensor::Zeros(DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.assign(static_cast<size_t>(t.numel()) * DTypeSize(dtype), 0);
  return t;
}

Tensor Tensor::FromF64(std::vector<int64_t> shape, std::span<const double> values) {
  Tensor t = Zeros(DType::kF64, std::move(shape));
  size_t n = std::min(values.size(), t.data.size() / 8);
  if (n > 0) std::memcpy(t.data.data(), values.data(), n * 8);
  return t;
}

Tensor Tensor::FromF32(std::vector<int64_t> shape, std::span<const float> values) {
  Tensor t = Zeros(DType::kF32, std::move(shape));
  size_t n = std::min(values.size(), t.data.size() / 4);
  if (n > 0) std::memcpy(t.data.data(), values.data(), n * 4);
  return t;
}

Value Value::F64(double d) { return Value(VKind::kF64, std::bit_cast<uint64_t>(d)); }

Value Value::F32(float f) { return Value(VKind::kF32, std::bit_cast<uint32_t>(f)); }

Value Value::String(std::string s) {
  Value v(VKind::kString, 0);
  auto h = std::make_shared<Heap>();
  h->str = std::move(s);
  v.heap_ = std::move(h);
  return v;
}

Value Value::Function(std::string name) {
  Value v = String(std::move(name));
  v.kind_ = VKind::kFunction;
  return v;
}

Value Value::MakeTensor(Tensor t) {
  Value v(VKind::kTensor, 0);
  auto h = std::make_shared<Heap>();
  h->tensor = std::move(t);
  v.heap_ = std::move(h);
  return v;
}

Value Value::MakeTuple(std::vector<Value> items) {
  Value v(VKind::kTuple, 0);
  auto h = std::make_shared<Heap>();
  h->items = std::move(items);
  v.heap_ = std::move(h);
  return v;
}

double Value::as_f64() const { return std::bit_cast<double>(bits_); }

float Value::as_f32() const { return std::bit_cast<float>(static_cast<uint32_t>(bits_)); }

double Value::to_double() const {
  switch (kind_) {
    case VKind::kBool:
      return bits_ != 0 ? 1.0 : 0.0;
    case VKind::kI64:
      return static_cast<double>(as_i64());
    case VKind::kF64:
      return as_f64();
    case VKind::kF32:
      return as_f32();
    default:
      return std::nan("");
  }
}

const std::string& Value::str() const {
  static const std::string kEmpty;
  if (heap_ && (kind_ == VKind::kString || kind_ == VKind::kFunction)) return heap_->str;
  return kEmpty;
}

const Tensor& Value::tensor() const {
  static const Tensor kEmpty;
  if (heap_ && kind_ == VKind::kTensor) return heap_->tensor;
  return kEmpty;
}

const std::vector<Value>& Value::tuple() const {
  static const std::vector<Value> kEmpty;
  if (heap_ && kind_ == VKind::kTuple) return heap_->items;
  return kEmpty;
}

bool BitEqual(const Value& a, const Value& b) {
  std::vector<std::pair<const Value*, const Value*>> stack;
  stack.emplace_back(&a, &b);
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    if (x->kind() != y->kind()) return false;
    switch (x->kind()) {
      case VKind::kString:
      case VKind::kFunction:
        if (x->str() != y->str()) return false;
        break;
      case VKind::kTensor: {
        const Tensor& s = x->tensor();
        const Tensor& t = y->tensor();
        if (s.dtype != t.dtype || s.shape != t.shape || s.data != t.data) return false;
        break;
      }
      case VKind::kTuple: {
        const auto& s = x->tuple();
        const auto& t = y->tuple();
        if (s.size() != t.size()) return false;
        for (size_t i = 0; i < s.size(); ++i) stack.emplace_back(&s[i], &t[i]);
        break;
      }
      default:
        if (x->bits() != y->bits()) return false;
        break;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Numbers as Julia shows them

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
            static const char kHex[] = "0123456789abcdef";
            out += "\\u";
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

// One tensor element; Float32 and Int32 elements rely on the array's type prefix.
void AppendElement(std::string& out, const Tensor& t, int64_t i) {
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

void AppendElements(std::string& out, const Tensor& t, int64_t n, bool abbreviate,
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

void AppendTensor(std::string& out, const Tensor& t, const FormatOptions& opts) {
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
    case VKind::kTensor:
      AppendTensor(out, v.tensor(), opts);
      break;
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
    case VKind::kTensor: {
      const Tensor& t = v.tensor();
      if (t.shape.size() == 1) {
        out += "Vector{";
        out += DTypeName(t.dtype);
        out += '}';
      } else if (t.shape.size() == 2) {
        out += "Matrix{";
        out += DTypeName(t.dtype);
        out += '}';
      } else {
        out += "Array{";
        out += DTypeName(t.dtype);
        out += ", ";
        out += std::to_string(t.shape.size());
        out += '}';
      }
      break;
    }
    case VKind::kTuple:
      break;
  }
}

}  // namespace

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

// ---------------------------------------------------------------------------
// Literals

namespace {

constexpr std::string_view kTimes = "×";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c) || c == '!'; }

// A recursive-descent parser over one literal. Only tuples nest (arrays hold
// scalars), and their depth is limited by kMaxLiteralDepth.
class LiteralParser {
 public:
  explicit LiteralParser(std::string_view s) : s_(s) {}

  Result<Value> Parse(int depth) {
    SkipSpace();
    if (depth > kMaxLiteralDepth) {
      return Fail(pos_,
                  "literal nested more than " + std::to_string(kMaxLiteralDepth) + " levels deep");
    }
    if (AtEnd()) return Fail(pos_, "expected a literal");
    char c = s_[pos_];
    if (c == '"') return ParseString();
    if (c == '[') return ParseArray(std::nullopt);
    if (c == '(') return ParseTuple(depth);
    if (IsDigit(c)) {
      size_t k = pos_;
      while (k < s_.size() && IsDigit(s_[k])) ++k;
      if (s_.substr(k, kTimes.size()) == kTimes) return ParseShaped();
    }
    if (IsIdentStart(c)) {
      size_t start = pos_;
      std::string_view word = Word();
      if (word == "fill") return ParseFill();
      if (auto dt = DTypeFromName(word); dt && Peek() == '[') return ParseArray(dt);
      pos_ = start;
    }
    return ParseScalar();
  }

  size_t pos() const { return pos_; }
  size_t error_pos() const { return error_pos_; }

 private:
  Status Fail(size_t at, std::string message) {
    error_pos_ = at;
    return DataError(std::move(message));
  }
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[pos_]; }
  bool SkipSpace() {
    size_t start = pos_;
    while (!AtEnd() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
    return pos_ > start;
  }
  std::string_view Word() {
    size_t start = pos_;
    while (!AtEnd() && IsIdentChar(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  static std::optional<DType> DTypeFromName(std::string_view w) {
    if (w == "Float64") return DType::kF64;
    if (w == "Float32") return DType::kF32;
    if (w == "Int64") return DType::kI64;
    if (w == "Int32") return DType::kI32;
    if (w == "Bool") return DType::kBool;
    return std::nullopt;
  }
  std::string Snippet(size_t from, size_t to) const {
    std::string_view w = s_.substr(from, to - from);
    if (w.size() > 24) return std::string(w.substr(0, 24)) + "…";
    return std::string(w);
  }

  // Numbers, true/false/nothing, Inf/NaN (and their 32/64 spellings).
  Result<Value> ParseScalar() {
    size_t start = pos_;
    bool neg = false;
    if (Peek() == '-' || Peek() == '+') {
      neg = Peek() == '-';
      ++pos_;
    }
    if (IsIdentStart(Peek())) {
      std::string_view w = Word();
      Value v;
      bool signable = true;
      if (w == "Inf" || w == "Inf64") {
        v = Value::F64(neg ? -HUGE_VAL : HUGE_VAL);
      } else if (w == "NaN" || w == "NaN64") {
        v = Value::F64(std::numeric_limits<double>::quiet_NaN());
      } else if (w == "Inf32") {
        v = Value::F32(neg ? -HUGE_VALF : HUGE_VALF);
      } else if (w == "NaN32") {
        v = Value::F32(std::numeric_limits<float>::quiet_NaN());
      } else if (w == "true" || w == "false") {
        v = Value::Bool(w == "true");
        signable = false;
      } else if (w == "nothing") {
        v = Value::Nothing();
        signable = false;
      } else {
        return Fail(start, "unknown name '" + std::string(w) + "' in literal");
      }
      if (!signable && pos_ - w.size() != start) {
        return Fail(start, "a sign cannot precede '" + std::string(w) + "'");
      }
      return v;
    }
    // sign? (digits ('.' digits?)? | '.' digits) ([eEf] sign? digits)?
    std::string mant = neg ? "-" : "";
    bool any_digit = false, is_float = false;
    auto digits = [&](std::string& into) {
      bool any = false;
      while (!AtEnd()) {
        char c = s_[pos_];
        if (IsDigit(c)) {
          into += c;
          any = true;
          ++pos_;
        } else if (c == '_' && any && pos_ + 1 < s_.size() && IsDigit(s_[pos_ + 1])) {
          ++pos_;
        } else {
          break;
        }
      }
      return any;
    };
    any_digit = digits(mant);
    if (Peek() == '.' && !(pos_ + 1 < s_.size() && s_[pos_ + 1] == '.')) {
      is_float = true;
      ++pos_;
      if (!any_digit) mant += '0';
      mant += '.';
      bool frac = digits(mant);
      if (!any_digit && !frac) return Fail(start, "expected a literal");
      if (!frac) mant += '0';
      any_digit = true;
    }
    if (!any_digit) {
      if (AtEnd()) return Fail(start, "expected a literal");
      return Fail(start, "expected a literal, found '" + Snippet(start, start + 1) + "'");
    }
    char expc = Peek();
    bool f32 = false;
    std::string exp;
    if (expc == 'e' || expc == 'E' || expc == 'f') {
      size_t at = pos_;
      ++pos_;
      if (Peek() == '-' || Peek() == '+') exp += s_[pos_++];
      if (!digits(exp)) return Fail(at, "bad exponent in number '" + Snippet(start, pos_) + "'");
      is_float = true;
      f32 = expc == 'f';
    }
    if (!AtEnd() && (IsIdentChar(s_[pos_]) || s_[pos_] == '.')) {
      while (!AtEnd() && (IsIdentChar(s_[pos_]) || s_[pos_] == '.')) ++pos_;
      return Fail(start, "bad number '" + Snippet(start, pos_) + "'");
    }
    if (!is_float) {
      int64_t x = 0;
      auto r = std::from_chars(mant.data(), mant.data() + mant.size(), x);
      if (r.ec != std::errc() || r.ptr != mant.data() + mant.size()) {
        return Fail(start, "integer '" + Snippet(start, pos_) + "' does not fit in Int64");
      }
      return Value::I64(x);
    }
    std::string text = mant;
    if (!exp.empty()) text += "e" + exp;
    if (f32) {
      float f = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), f);
      if (r.ec == std::errc::result_out_of_range) f = std::strtof(text.c_str(), nullptr);
      if (std::isinf(f))
        return Fail(start, "number '" + Snippet(start, pos_) + "' overflows Float32");
      return Value::F32(f);
    }
    double d = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), d);
    if (r.ec == std::errc::result_out_of_range) d = std::strtod(text.c_str(), nullptr);
    if (std::isinf(d))
      return Fail(start, "number '" + Snippet(start, pos_) + "' overflows Float64");
    return Value::F64(d);
  }

  Result<Value> ParseString() {
    size_t start = pos_;
    ++pos_;
    std::string out;
    while (true) {
      if (AtEnd()) return Fail(start, "unterminated string literal");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return Value::String(std::move(out));
      }
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      size_t esc = pos_;
      ++pos_;
      if (AtEnd()) return Fail(start, "unterminated string literal");
      char e = s_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case 'e':
          out += '\x1b';
          break;
        case '\\':
        case '"':
        case '$':
        case '\'':
          out += e;
          break;
        case 'x':
        case 'u':
        case 'U': {
          size_t max = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          size_t n = 0;
          while (n < max && !AtEnd() && std::isxdigit(static_cast<unsigned char>(s_[pos_]))) {
            char h = s_[pos_++];
            cp = cp * 16 + static_cast<uint32_t>(IsDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
            ++n;
          }
          if (n == 0) return Fail(esc, "escape \\" + std::string(1, e) + " needs hex digits");
          if (e == 'x') {
            out += static_cast<char>(cp);
          } else if (!AppendUtf8(out, cp)) {
            return Fail(esc, "escape is not a valid Unicode code point");
          }
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && !AtEnd() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++k) {
              v = v * 8 + static_cast<uint32_t>(s_[pos_++] - '0');
            }
            if (v > 0xFF) return Fail(esc, "octal escape out of range");
            out += static_cast<char>(v);
            break;
          }
          return Fail(esc, "invalid escape sequence '\\" + std::string(1, e) + "'");
      }
    }
  }

  static bool AppendUtf8(std::string& out, uint32_t cp) {
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return true;
  }

  Result<Value> ParseTuple(int depth) {
    size_t open = pos_;
    ++pos_;
    SkipSpace();
    std::vector<Value> items;
    if (Peek() == ')') {
      ++pos_;
      return Value::MakeTuple({});
    }
    bool comma = false;
    while (true) {
      IRT_ASSIGN_OR_RETURN(Value v, Parse(depth + 1));
      items.push_back(std::move(v));
      SkipSpace();
      if (Peek() == ',') {
        comma = true;
        ++pos_;
        SkipSpace();
        if (Peek() == ')') {
          ++pos_;
          break;
        }
        continue;
      }
      if (Peek() == ')') {
        ++pos_;
        break;
      }
      if (AtEnd()) return Fail(open, "missing ')' to close the tuple");
      return Fail(pos_, "expected ',' or ')' in tuple, found '" + Snippet(pos_, pos_ + 1) + "'");
    }
    if (!comma && items.size() == 1) return std::move(items[0]);  // just parentheses
    return Value::MakeTuple(std::move(items));
  }

  // A scalar array element.
  Result<Value> ParseElement() {
    size_t at = pos_;
    IRT_ASSIGN_OR_RETURN(Value v, ParseScalar());
    if (v.kind() == VKind::kNothing) return Fail(at, "array elements must be numbers or booleans");
    return v;
  }

  // Elements "[a, b, c]" after '[' for the shape-prefixed form.
  Status ParseCommaList(size_t open, std::vector<Value>* elems) {
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return Status::Ok();
    }
    while (true) {
      SkipSpace();
      IRT_ASSIGN_OR_RETURN(Value v, ParseElement());
      elems->push_back(std::move(v));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        return Status::Ok();
      }
      if (AtEnd()) return Fail(open, "missing ']' to close the array");
      return Fail(pos_, "expected ',' or ']' in array, found '" + Snippet(pos_, pos_ + 1) + "'");
    }
  }

  Result<Value> ParseArray(std::optional<DType> dtype) {
    size_t open = pos_;
    ++pos_;  // '['
    std::vector<Value> elems;
    std::vector<size_t> row_sizes;  // matrix syntax: elements per row
    enum { kUnknown, kComma, kRows } mode = kUnknown;
    bool force_matrix = false;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return MakeTensor(dtype.value_or(DType::kF64), {0}, elems, open);
    }
    row_sizes.push_back(0);
    while (true) {
      if (force_matrix) return Fail(pos_, "';;' must end the array");
      IRT_ASSIGN_OR_RETURN(Value v, ParseElement());
      elems.push_back(std::move(v));
      ++row_sizes.back();
      bool space = SkipSpace();
      char c = Peek();
      if (c == ']') {
        ++pos_;
        break;
      }
      if (c == ',') {
        if (mode == kRows) return Fail(pos_, "cannot mix ',' with ';' or spaces in an array");
        mode = kComma;
        ++pos_;
        SkipSpace();
        continue;
      }
      if (c == ';') {
        if (mode == kComma) return Fail(pos_, "cannot mix ',' with ';' in an array");
        mode = kRows;
        ++pos_;
        if (Peek() == ';') {
          ++pos_;
          force_matrix = true;
          SkipSpace();
          if (Peek() != ']') return Fail(pos_, "';;' must end the array");
          ++pos_;
          break;
        }
        SkipSpace();
        row_sizes.push_back(0);
        continue;
      }
      if (AtEnd()) return Fail(open, "missing ']' to close the array");
      if (space && mode != kComma) {
        mode = kRows;
        continue;
      }
      return Fail(pos_,
                  "expected ',', ';' or ']' in array, found '" + Snippet(pos_, pos_ + 1) + "'");
    }
    std::vector<int64_t> shape;
    if (mode != kRows) {
      shape = {static_cast<int64_t>(elems.size())};
    } else {
      size_t cols = row_sizes[0];
      for (size_t r : row_sizes) {
        if (r != cols) return Fail(open, "matrix rows have different lengths");
      }
      if (cols == 1 && row_sizes.size() > 1 && !force_matrix) {
        shape = {static_cast<int64_t>(elems.size())};  // [a; b; c] is a vector
      } else {
        shape = {static_cast<int64_t>(row_sizes.size()), static_cast<int64_t>(cols)};
      }
    }
    return MakeTensor(dtype, std::move(shape), elems, open);
  }

  // 2×3×4[...] or 2×3 Float32[...]
  Result<Value> ParseShaped() {
    size_t start = pos_;
    std::vector<int64_t> shape;
    int64_t total = 1;
    while (true) {
      size_t at = pos_;
      int64_t d = 0;
      auto r = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), d);
      if (r.ec != std::errc() || d < 0) return Fail(at, "bad dimension in tensor shape");
      pos_ = static_cast<size_t>(r.ptr - s_.data());
      if (d > 0 && total > (int64_t{1} << 40) / d) return Fail(at, "tensor shape too large");
      total *= d;
      shape.push_back(d);
      if (s_.substr(pos_, kTimes.size()) != kTimes) break;
      pos_ += kTimes.size();
    }
    SkipSpace();
    std::optional<DType> dtype;
    if (IsIdentStart(Peek())) {
      size_t at = pos_;
      std::string_view w = Word();
      dtype = DTypeFromName(w);
      if (!dtype) return Fail(at, "unknown element type '" + std::string(w) + "'");
    }
    if (Peek() != '[') return Fail(pos_, "expected '[' after the tensor shape");
    size_t open = pos_++;
    std::vector<Value> elems;
    IRT_RETURN_IF_ERROR(ParseCommaList(open, &elems));
    if (static_cast<int64_t>(elems.size()) != total) {
      return Fail(start, "tensor shape needs " + std::to_string(total) + " elements, found " +
                             std::to_string(elems.size()));
    }
    if (elems.empty() && !dtype) dtype = DType::kF64;
    return MakeTensor(dtype, std::move(shape), elems, start);
  }

  // fill(1.0), fill(Int32(3)): a 0-dimensional tensor.
  Result<Value> ParseFill() {
    size_t start = pos_ - 4;
    SkipSpace();
    if (Peek() != '(') return Fail(pos_, "expected '(' after 'fill'");
    ++pos_;
    SkipSpace();
    std::optional<DType> dtype;
    bool int32 = false;
    size_t save = pos_;
    if (Word() == "Int32") {
      SkipSpace();
      if (Peek() != '(') return Fail(pos_, "expected '(' after 'Int32'");
      ++pos_;
      SkipSpace();
      int32 = true;
      dtype = DType::kI32;
    } else {
      pos_ = save;
    }
    std::vector<Value> elems;
    IRT_ASSIGN_OR_RETURN(Value v, ParseElement());
    elems.push_back(std::move(v));
    for (int k = int32 ? 2 : 1; k > 0; --k) {
      SkipSpace();
      if (Peek() != ')') return Fail(pos_, "expected ')' to close 'fill('");
      ++pos_;
    }
    return MakeTensor(dtype, {}, elems, start);
  }

  // Builds a tensor from scalar elements: with `dtype` converting each, else
  // with Julia's promotion (Bool < Int64 < Float32 < Float64).
  Result<Value> MakeTensor(std::optional<DType> dtype, std::vector<int64_t> shape,
                           const std::vector<Value>& elems, size_t at) {
    DType dt = DType::kBool;
    if (dtype) {
      dt = *dtype;
    } else if (elems.empty()) {
      dt = DType::kF64;
    } else {
      int rank = 0;
      for (const Value& e : elems) {
        int r = e.kind() == VKind::kF64   ? 3
                : e.kind() == VKind::kF32 ? 2
                : e.kind() == VKind::kI64 ? 1
                                          : 0;
        rank = std::max(rank, r);
      }
      static constexpr DType kByRank[] = {DType::kBool, DType::kI64, DType::kF32, DType::kF64};
      dt = kByRank[rank];
    }
    Tensor t = Tensor::Zeros(dt, std::move(shape));
    uint8_t* p = t.data.data();
    for (const Value& e : elems) {
      switch (dt) {
        case DType::kF64: {
          double d = e.to_double();
          std::memcpy(p, &d, 8);
          break;
        }
        case DType::kF32: {
          float f = e.kind() == VKind::kF32 ? e.as_f32() : static_cast<float>(e.to_double());
          std::memcpy(p, &f, 4);
          break;
        }
        case DType::kI64:
        case DType::kI32: {
          int64_t x;
          if (e.kind() == VKind::kI64 || e.kind() == VKind::kBool) {
            x = e.kind() == VKind::kBool ? (e.as_bool() ? 1 : 0) : e.as_i64();
          } else {
            double d = e.to_double();
            if (!(d == std::trunc(d) && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)) {
              return Fail(at, FormatValue(e) + " is not an integer");
            }
            x = static_cast<int64_t>(d);
          }
          if (dt == DType::kI64) {
            std::memcpy(p, &x, 8);
          } else {
            if (x < INT32_MIN || x > INT32_MAX)
              return Fail(at, std::to_string(x) + " does not fit in Int32");
            int32_t y = static_cast<int32_t>(x);
            std::memcpy(p, &y, 4);
          }
          break;
        }
        case DType::kBool: {
          double d = e.to_double();
          if (d != 0 && d != 1) return Fail(at, FormatValue(e) + " is not a Bool");
          *p = d != 0 ? 1 : 0;
          break;
        }
      }
      p += DTypeSize(dt);
    }
    return Value::MakeTensor(std::move(t));
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t error_pos_ = 0;
};

}  // namespace

Result<Value> ParseLiteralPrefix(std::string_view text, size_t* length, size_t* error_offset) {
  LiteralParser p(text);
  Result<Value> r = p.Parse(0);
  if (!r.ok()) {
    if (error_offset != nullptr) *error_offset = p.error_pos();
    return r;
  }
  if (length != nullptr) *length = p.pos();
  return r;
}

Result<Value> ParseLiteral(std::string_view text) {
  size_t len = 0, err = 0;
  Result<Value> r = ParseLiteralPrefix(text, &len, &err);
  auto where = [&](size_t off) {
    // Columns count characters, not bytes.
    size_t col = 1;
    for (size_t i = 0; i < off && i < text.size(); ++i) {
      if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) ++col;
    }
    return "column " + std::to_string(col);
  };
  if (!r.ok()) {
    return DataError("bad literal '" + std::string(text) + "': " + r.error().message() + " (" +
                     where(err) + ")");
  }
  size_t end = len;
  while (end < text.size() &&
         (text[end] == ' ' || text[end] == '\t' || text[end] == '\n' || text[end] == '\r')) {
    ++end;
  }
  if (end != text.size()) {
    return DataError("bad literal '" + std::string(text) + "': unexpected '" +
                     std::string(text.substr(end, 1)) + "' after the literal (" + where(end) + ")");
  }
  return r;
}

// ---------------------------------------------------------------------------
// NumPy .npy

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr uint64_t kMaxNpyHeader = 1 << 20;

struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  bool has_descr = false, has_fortran = false, has_shape = false;
};

// Parses the Python dict literal of a .npy header.
Status ParseNpyDict(std::string_view h, NpyHeader* out) {
  size_t i = 0;
  auto space = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r')) ++i;
  };
  auto quoted = [&](std::string* s) -> bool {
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) return false;
    char q = h[i++];
    size_t start = i;
    while (i < h.size() && h[i] != q) ++i;
    if (i >= h.size()) return false;
    *s = std::string(h.substr(start, i - start));
    ++i;
    return true;
  };
  space();
  if (i >= h.size() || h[i] != '{') return DataError("header is not a dictionary");
  ++i;
  while (true) {
    space();
    if (i < h.size() && h[i] == '}') {
      ++i;
      break;
    }
    std::string key;
    if (!quoted(&key)) return DataError("bad key in header dictionary");
    space();
    if (i >= h.size() || h[i] != ':') return DataError("expected ':' in header dictionary");
    ++i;
    space();
    if (key == "descr") {
      if (!quoted(&out->descr)) return DataError("'descr' must be a string");
      out->has_descr = true;
    } else if (key == "fortran_order") {
      if (h.substr(i, 4) == "True") {
        out->fortran = true;
        i += 4;
      } else if (h.substr(i, 5) == "False") {
        out->fortran = false;
        i += 5;
      } else {
        return DataError("'fortran_order' must be True or False");
      }
      out->has_fortran = true;
    } else if (key == "shape") {
      if (i >= h.size() || h[i] != '(') return DataError("'shape' must be a tuple");
      ++i;
      while (true) {
        space();
        if (i < h.size() && h[i] == ')') {
          ++i;
          break;
        }
        int64_t d = -1;
        auto r = std::from_chars(h.data() + i, h.data() + h.size(), d);
        if (r.ec != std::errc() || d < 0) return DataError("bad dimension in 'shape'");
        if (out->shape.size() >= 64) return DataError("'shape' has too many dimensions");
        i = static_cast<size_t>(r.ptr - h.data());
        if (i < h.size() && h[i] == 'L') ++i;  // Python 2 long
        out->shape.push_back(d);
        space();
        if (i < h.size() && h[i] == ',') {
          ++i;
        } else if (i < h.size() && h[i] == ')') {
          ++i;
          break;
        } else {
          return DataError("bad 'shape' tuple");
        }
      }
      out->has_shape = true;
    } else {
      return DataError("unexpected key '" + key + "' in header");
    }
    space();
    if (i < h.size() && h[i] == ',') {
      ++i;
      continue;
    }
    if (i < h.size() && h[i] == '}') {
      ++i;
      break;
    }
    return DataError("expected ',' or '}' in header dictionary");
  }
  if (!out->has_descr || !out->has_fortran || !out->has_shape) {
    return DataError("header lacks 'descr', 'fortran_order' or 'shape'");
  }
  return Status::Ok();
}

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

}  // namespace

Result<Value> ReadNpy(const std::string& path) {
  auto fail = [&](Code code, const std::string& m) { return Status(code, "'" + path + "': " + m); };
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return fail(Code::kIoError, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (fstat(fileno(f.get()), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(Code::kIoError, "not a regular file");
  }
  uint64_t file_size = static_cast<uint64_t>(st.st_size);
  uint8_t pre[12];
  if (file_size < 10 || std::fread(pre, 1, 10, f.get()) != 10 ||
      std::memcmp(pre, kNpyMagic, 6) != 0) {
    return fail(Code::kDataError, "not a .npy file");
  }
  int major = pre[6], minor = pre[7];
  uint64_t header_len;
  uint64_t prefix;
  if (major == 1) {
    header_len = pre[8] | (static_cast<uint64_t>(pre[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (file_size < 12 || std::fread(pre + 10, 1, 2, f.get()) != 2) {
      return fail(Code::kDataError, "truncated .npy header");
    }
    header_len = pre[8] | (static_cast<uint64_t>(pre[9]) << 8) |
                 (static_cast<uint64_t>(pre[10]) << 16) | (static_cast<uint64_t>(pre[11]) << 24);
    prefix = 12;
  } else {
    return fail(Code::kUnsupported, ".npy format version " + std::to_string(major) + "." +
                                        std::to_string(minor) + " is not supported (1.0 to 3.0)");
  }
  if (header_len > kMaxNpyHeader) return fail(Code::kDataError, ".npy header is too large");
  if (prefix + header_len > file_size) return fail(Code::kDataError, "truncated .npy header");
  std::string header(header_len, '\0');
  if (std::fread(header.data(), 1, header_len, f.get()) != header_len) {
    return fail(Code::kIoError, "read error");
  }
  NpyHeader h;
  if (Status s = ParseNpyDict(header, &h); !s.ok()) return fail(Code::kDataError, s.message());

  DType dtype;
  std::string_view d = h.descr;
  if (d.size() >= 2 && d[0] == '>' && d.substr(1) != "b1" && d.substr(1) != "u1") {
    return fail(Code::kUnsupported, "big-endian dtype '" + h.descr + "' is not supported");
  }
  if (d == "<f8") {
    dtype = DType::kF64;
  } else if (d == "<f4") {
    dtype = DType::kF32;
  } else if (d == "<i8") {
    dtype = DType::kI64;
  } else if (d == "<i4") {
    dtype = DType::kI32;
  } else if (d == "|b1" || d == "<b1" || d == ">b1") {
    dtype = DType::kBool;
  } else {
    return fail(Code::kUnsupported,
                "dtype '" + h.descr + "' is not supported (<f8, <f4, <i8, <i4, |b1)");
  }
  // Validate the shape against the format's limits and the file size before
  // allocating anything.
  if (h.shape.size() > kMaxTensorDims) {
    return fail(Code::kDataError, std::to_string(h.shape.size()) + " dimensions, more than " +
                                      std::to_string(kMaxTensorDims));
  }
  uint64_t avail = file_size - prefix - header_len;
  uint64_t esize = DTypeSize(dtype);
  uint64_t numel = 1;
  bool empty = std::find(h.shape.begin(), h.shape.end(), 0) != h.shape.end();
  if (empty) {
    numel = 0;
  } else {
    for (int64_t dim : h.shape) {
      if (__builtin_mul_overflow(numel, static_cast<uint64_t>(dim), &numel) || numel > avail) {
        return fail(Code::kDataError, "truncated: the shape needs more elements than the file's " +
                                          std::to_string(avail) + " data bytes hold");
      }
    }
  }
  if (numel * esize > avail) {
    return fail(Code::kDataError, "truncated: the shape needs " + std::to_string(numel) +
                                      " elements, the file holds " + std::to_string(avail / esize));
  }
  if (numel * esize < avail) {
    return fail(Code::kDataError,
                std::to_string(avail - numel * esize) + " unexpected bytes after the data");
  }
  if (Result<int64_t> n = CheckedNumel(h.shape); !n.ok()) {
    return fail(Code::kDataError, n.error().message());
  }
  Tensor t;
  t.dtype = dtype;
  t.shape = h.shape;
  t.data.resize(numel * esize);
  if (numel > 0 && std::fread(t.data.data(), 1, t.data.size(), f.get()) != t.data.size()) {
    return fail(Code::kIoError, "read error");
  }
  if (dtype == DType::kBool) {
    for (uint8_t& b : t.data) b = b != 0 ? 1 : 0;
  }
  if (h.fortran && h.shape.size() >= 2 && numel > 1) {
    // Column-major to row-major: walk the C-order index and find each
    // element's Fortran offset.
    size_t rank = h.shape.size();
    std::vector<uint64_t> fstride(rank);
    uint64_t s = 1;
    for (size_t k = 0; k < rank; ++k) {
      fstride[k] = s;
      s *= static_cast<uint64_t>(h.shape[k]);
    }
    std::vector<uint8_t> c(t.data.size());
    std::vector<int64_t> idx(rank, 0);
    for (uint64_t i = 0; i < numel; ++i) {
      uint64_t off = 0;
      for (size_t k = 0; k < rank; ++k) off += static_cast<uint64_t>(idx[k]) * fstride[k];
      std::memcpy(c.data() + i * esize, t.data.data() + off * esize, esize);
      for (size_t k = rank; k-- > 0;) {
        if (++idx[k] < h.shape[k]) break;
        idx[k] = 0;
      }
    }
    t.data = std::move(c);
  }
  return Value::MakeTensor(std::move(t));
}

Status WriteNpy(const Value& v, const std::string& path) {
  Tensor scalar;
  const Tensor* t = &scalar;
  switch (v.kind()) {
    case VKind::kTensor:
      t = &v.tensor();
      break;
    case VKind::kF64: {
      double d = v.as_f64();
      scalar = Tensor::FromF64({}, std::span<const double>(&d, 1));
      break;
    }
    case VKind::kF32: {
      float x = v.as_f32();
      scalar = Tensor::FromF32({}, std::span<const float>(&x, 1));
      break;
    }
    case VKind::kI64: {
      scalar = Tensor::Zeros(DType::kI64, {});
      int64_t x = v.as_i64();
      std::memcpy(scalar.data.data(), &x, 8);
      break;
    }
    case VKind::kBool:
      scalar = Tensor::Zeros(DType::kBool, {});
      scalar.data[0] = v.as_bool() ? 1 : 0;
      break;
    default:
      return InvalidArgument("'" + path + "': cannot write a " + TypeName(v) + " as .npy");
  }
  static constexpr const char* kDescr[] = {"<f8", "<f4", "<i8", "<i4", "|b1"};
  std::string dict = "{'descr': '";
  dict += kDescr[static_cast<int>(t->dtype)];
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t->shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(t->shape[i]);
  }
  if (t->shape.size() == 1) dict += ',';
  dict += "), }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xFFFF) return InvalidArgument("'" + path + "': shape too long for .npy 1.0");
  IRT_ASSIGN_OR_RETURN(auto out, Output::Open(path));
  out->Write(kNpyMagic, 6);
  const char version[2] = {1, 0};
  out->Write(version, 2);
  const char len[2] = {static_cast<char>(dict.size() & 0xFF), static_cast<char>(dict.size() >> 8)};
  out->Write(len, 2);
  out->Write(dict);
  if (!t->data.empty()) out->Write(t->data.data(), t->data.size());
  return out->Commit();
}

}  // namespace irt
