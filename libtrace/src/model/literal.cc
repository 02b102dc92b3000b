// ParseLiteral: values written as text in IR and on command lines, the
// inverse of FormatValue (format.cc). It reads every tensor form FormatValue
// writes except abbreviated ones (see format.cc), plus an element type
// prefix on any tensor (Float32[1.5], Int32[1, 2], Float64[]).
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include "irt/value.h"

namespace irt {

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
}  // namespace irt
