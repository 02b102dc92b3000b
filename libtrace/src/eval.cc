// The built-in primitive table. Julia's semantics on irt::Value scalars, the
// same as the IR adapter's interpreter (a replayed trace must reproduce the
// values a fresh run records, bit for bit): Int op Int stays Int64 with
// wrap-around (except `/`, which gives Float64), Bool counts as an integer,
// mixed operands promote along Bool < Int64 < Float32 < Float64, integer
// division by zero is a DivideError, comparisons between integers and
// floats are exact, and domain errors are errors, not NaNs.
#include "irt/eval.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "irt/kernels.h"

namespace irt {

namespace {

Value F64(double d) { return Value::FromBits(VKind::kF64, std::bit_cast<uint64_t>(d)); }
Value F32(float f) { return Value::FromBits(VKind::kF32, std::bit_cast<uint32_t>(f)); }
double AsF64(const Value& v) { return std::bit_cast<double>(v.bits()); }
float AsF32(const Value& v) { return std::bit_cast<float>(static_cast<uint32_t>(v.bits())); }

// Promotion rank: Bool 0 < Int64 1 < Float32 2 < Float64 3; -1 if not a real number.
int Rank(VKind k) {
  switch (k) {
    case VKind::kBool:
      return 0;
    case VKind::kI64:
      return 1;
    case VKind::kF32:
      return 2;
    case VKind::kF64:
      return 3;
    default:
      return -1;
  }
}
int64_t AsInt(const Value& v) {
  return v.kind() == VKind::kBool ? (v.bits() != 0 ? 1 : 0) : v.as_i64();
}
double ToF64(const Value& v) {
  switch (v.kind()) {
    case VKind::kF64:
      return AsF64(v);
    case VKind::kF32:
      return AsF32(v);
    default:
      return static_cast<double>(AsInt(v));
  }
}
float ToF32(const Value& v) {
  switch (v.kind()) {
    case VKind::kF64:
      return static_cast<float>(AsF64(v));
    case VKind::kF32:
      return AsF32(v);
    default:
      return static_cast<float>(AsInt(v));
  }
}
int64_t Wrap(uint64_t u) { return static_cast<int64_t>(u); }

Status NoMethod(std::string_view name, std::span<const Value> args) {
  std::string m = "MethodError: no method matching ";
  m += name;
  m += '(';
  bool tensor = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) m += ", ";
    m += "::";
    m += TypeName(args[i]);
    tensor = tensor || args[i].kind() == VKind::kTensor;
  }
  m += ')';
  if (tensor) m += " (tensor arithmetic is not supported yet)";
  return RuntimeError(std::move(m));
}

Status DomainError(const Value& v, const std::string& what) {
  return RuntimeError("DomainError with " + FormatValue(v) + ": " + what);
}

// +, -, * with promotion; integers wrap around.
template <typename IntOp, typename FloatOp>
Result<Value> Arith(std::string_view name, std::span<const Value> args, IntOp iop, FloatOp fop) {
  const Value& a = args[0];
  const Value& b = args[1];
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return NoMethod(name, args);
  int r = std::max(ra, rb);
  if (r <= 1) return Value::I64(iop(AsInt(a), AsInt(b)));
  if (r == 2) return F32(fop(ToF32(a), ToF32(b)));
  return F64(fop(ToF64(a), ToF64(b)));
}

// Exact comparison of an integer with a double: -1, 0, 1, or 2 if d is NaN.
int CompareIntDouble(int64_t i, double d) {
  if (std::isnan(d)) return 2;
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  double t = std::trunc(d);
  int64_t ti = static_cast<int64_t>(t);
  if (i < ti) return -1;
  if (i > ti) return 1;
  double frac = d - t;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

// Both operands real numbers. -1, 0, 1, or 2 when unordered.
int CompareReal(const Value& a, const Value& b) {
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra <= 1 && rb <= 1) {
    int64_t x = AsInt(a), y = AsInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ra >= 2 && rb >= 2) {
    double x = ToF64(a), y = ToF64(b);
    if (std::isnan(x) || std::isnan(y)) return 2;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ra <= 1) return CompareIntDouble(AsInt(a), ToF64(b));
  int c = CompareIntDouble(AsInt(b), ToF64(a));
  return c == 2 ? 2 : -c;
}

bool TensorsEqual(const Tensor& s, const Tensor& t) {
  if (s.shape != t.shape) return false;
  bool s_int = s.dtype == DType::kI64 || s.dtype == DType::kI32 || s.dtype == DType::kBool;
  if (s.dtype == t.dtype && s_int) return s.data == t.data;
  int64_t n = s.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (!(s.at(i) == t.at(i))) return false;
  }
  return true;
}

// Julia's ==, iterative over nested tuples.
bool Equal(const Value& a, const Value& b) {
  std::vector<std::pair<const Value*, const Value*>> stack{{&a, &b}};
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    if (Rank(x->kind()) >= 0 && Rank(y->kind()) >= 0) {
      if (CompareReal(*x, *y) != 0) return false;
      continue;
    }
    if (x->kind() != y->kind()) return false;
    switch (x->kind()) {
      case VKind::kString:
      case VKind::kFunction:
        if (x->str() != y->str()) return false;
        break;
      case VKind::kTensor:
        if (!TensorsEqual(x->tensor(), y->tensor())) return false;
        break;
      case VKind::kTuple: {
        const auto& s = x->tuple();
        const auto& t = y->tuple();
        if (s.size() != t.size()) return false;
        for (size_t i = 0; i < s.size(); ++i) stack.emplace_back(&s[i], &t[i]);
        break;
      }
      default:
        break;  // nothing == nothing
    }
  }
  return true;
}

// sin, cos, ...: Float32 stays Float32, integers become Float64.
template <typename F>
Result<Value> Math(std::string_view name, std::span<const Value> args, F f) {
  const Value& a = args[0];
  int r = Rank(a.kind());
  if (r < 0) return NoMethod(name, args);
  if (r == 2) return F32(f(AsF32(a)));
  return F64(f(ToF64(a)));
}

Result<Value> MinMax(std::string_view name, std::span<const Value> args, bool is_max) {
  const Value& a = args[0];
  const Value& b = args[1];
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return NoMethod(name, args);
  int r = std::max(ra, rb);
  if (r == 0) {
    bool x = a.as_bool(), y = b.as_bool();
    return Value::Bool(is_max ? (x || y) : (x && y));
  }
  if (r == 1) {
    int64_t x = AsInt(a), y = AsInt(b);
    return Value::I64(is_max ? std::max(x, y) : std::min(x, y));
  }
  double x = ToF64(a), y = ToF64(b);
  double m;
  if (std::isnan(x) || std::isnan(y)) {
    m = std::isnan(x) ? x : y;
  } else if (is_max) {
    m = (x > y || (x == y && !std::signbit(x))) ? x : y;
  } else {
    m = (x < y || (x == y && std::signbit(x))) ? x : y;
  }
  return r == 2 ? F32(static_cast<float>(m)) : F64(m);
}

Result<Value> IntPow(const Value& a, const Value& b) {
  int64_t e = AsInt(b);
  if (a.kind() == VKind::kBool) {
    bool x = a.as_bool();
    if (e < 0 && !x) {
      return DomainError(b, "cannot raise an integer x to a negative power " + FormatValue(b));
    }
    return Value::Bool(e == 0 || x);
  }
  int64_t x = AsInt(a);
  if (e < 0) {
    if (x == 1) return Value::I64(1);
    if (x == -1) return Value::I64((e & 1) ? -1 : 1);
    return DomainError(b, "cannot raise an integer x to a negative power " + FormatValue(b));
  }
  uint64_t result = 1, base = static_cast<uint64_t>(x), n = static_cast<uint64_t>(e);
  while (n != 0) {
    if (n & 1) result *= base;
    base *= base;
    n >>= 1;
  }
  return Value::I64(Wrap(result));
}

Result<Value> Pow(std::span<const Value> args) {
  const Value& a = args[0];
  const Value& b = args[1];
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return NoMethod("^", args);
  if (ra <= 1 && rb <= 1) return IntPow(a, b);
  if (rb <= 1) {
    // Float base, integer exponent: always defined.
    double n = static_cast<double>(AsInt(b));
    if (ra == 2) return F32(static_cast<float>(std::pow(static_cast<double>(AsF32(a)), n)));
    return F64(std::pow(AsF64(a), n));
  }
  int r = std::max(ra, rb);
  double x = ToF64(a), y = ToF64(b);
  if (x < 0 && std::isfinite(y) && y != std::trunc(y)) {
    return DomainError(a, "exponentiation yielding a complex result requires a complex argument");
  }
  if (r == 2) return F32(std::pow(ToF32(a), ToF32(b)));
  return F64(std::pow(x, y));
}

Result<Value> DivRem(std::string_view name, std::span<const Value> args, bool is_rem) {
  const Value& a = args[0];
  const Value& b = args[1];
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return NoMethod(name, args);
  int r = std::max(ra, rb);
  if (r <= 1) {
    int64_t x = AsInt(a), y = AsInt(b);
    if (y == 0 || (!is_rem && y == -1 && x == std::numeric_limits<int64_t>::min())) {
      return RuntimeError("DivideError: integer division error");
    }
    int64_t q =
        is_rem ? (y == -1 ? 0 : x % y) : (y == -1 ? Wrap(0 - static_cast<uint64_t>(x)) : x / y);
    return r == 0 ? Value::Bool(q != 0) : Value::I64(q);
  }
  double x = ToF64(a), y = ToF64(b);
  double q;
  if (is_rem) {
    q = std::fmod(x, y);
  } else if (y == 0 || !std::isfinite(x) || !std::isfinite(y)) {
    q = std::trunc(x / y);
  } else {
    q = std::nearbyint((x - std::fmod(x, y)) / y);
  }
  return r == 2 ? F32(static_cast<float>(q)) : F64(q);
}

enum class BitOp { kAnd, kOr, kXor };

Result<Value> Bitwise(std::string_view name, std::span<const Value> args, BitOp op) {
  int ra = Rank(args[0].kind()), rb = Rank(args[1].kind());
  if (ra < 0 || rb < 0 || ra > 1 || rb > 1) return NoMethod(name, args);
  int64_t x = AsInt(args[0]), y = AsInt(args[1]);
  int64_t z = op == BitOp::kAnd ? (x & y) : op == BitOp::kOr ? (x | y) : (x ^ y);
  return (ra == 0 && rb == 0) ? Value::Bool(z != 0) : Value::I64(z);
}

Result<Value> ZeroOne(std::string_view name, std::span<const Value> args, bool one) {
  const Value& a = args[0];
  switch (a.kind()) {
    case VKind::kBool:
      return Value::Bool(one);
    case VKind::kI64:
      return Value::I64(one ? 1 : 0);
    case VKind::kF32:
      return F32(one ? 1.0f : 0.0f);
    case VKind::kF64:
      return F64(one ? 1.0 : 0.0);
    case VKind::kTensor: {
      const Tensor& t = a.tensor();
      Result<Tensor> made = Tensor::Make(t.dtype, t.shape);
      if (!made.ok()) return made.error().Prefixed(std::string(name));
      Tensor z = std::move(*made);
      if (one) {
        // one(A) is the identity, defined for square matrices only.
        if (t.shape.size() != 2 || t.shape[0] != t.shape[1]) return NoMethod(name, args);
        size_t es = DTypeSize(t.dtype);
        for (int64_t i = 0; i < t.shape[0]; ++i) {
          uint8_t* p = z.data.data() + static_cast<size_t>(i * t.shape[0] + i) * es;
          switch (t.dtype) {
            case DType::kF64: {
              double d = 1;
              std::memcpy(p, &d, 8);
              break;
            }
            case DType::kF32: {
              float f = 1;
              std::memcpy(p, &f, 4);
              break;
            }
            case DType::kI64: {
              int64_t x = 1;
              std::memcpy(p, &x, 8);
              break;
            }
            case DType::kI32: {
              int32_t x = 1;
              std::memcpy(p, &x, 4);
              break;
            }
            case DType::kBool:
              *p = 1;
              break;
          }
        }
      }
      return Value::MakeTensor(std::move(z));
    }
    default:
      return NoMethod(name, args);
  }
}

Result<Value> Compare(std::string_view name, std::span<const Value> args, int which) {
  const Value& a = args[0];
  const Value& b = args[1];
  int c;
  if (a.kind() == VKind::kI64 && b.kind() == VKind::kI64) {
    c = a.as_i64() < b.as_i64() ? -1 : a.as_i64() > b.as_i64() ? 1 : 0;
  } else if (Rank(a.kind()) >= 0 && Rank(b.kind()) >= 0) {
    c = CompareReal(a, b);
  } else if (a.kind() == VKind::kString && b.kind() == VKind::kString) {
    int s = a.str().compare(b.str());
    c = s < 0 ? -1 : s > 0 ? 1 : 0;
  } else {
    return NoMethod(name, args);
  }
  bool r = false;
  if (c != 2) {
    switch (which) {
      case 0:
        r = c < 0;
        break;
      case 1:
        r = c <= 0;
        break;
      case 2:
        r = c > 0;
        break;
      default:
        r = c >= 0;
        break;
    }
  }
  return Value::Bool(r);
}

// sin, cos and tan are undefined at infinities; log and sqrt below zero.
Result<Value> Trig(std::string_view name, std::span<const Value> args, double (*f)(double),
                   float (*g)(float)) {
  const Value& a = args[0];
  if (Rank(a.kind()) >= 2 && std::isinf(ToF64(a))) {
    return DomainError(a, std::string(name) + "(x) is only defined for finite x");
  }
  int r = Rank(a.kind());
  if (r < 0) return NoMethod(name, args);
  if (r == 2) return F32(g(AsF32(a)));
  return F64(f(ToF64(a)));
}

Result<Value> NonNegative(std::string_view name, std::span<const Value> args, double (*f)(double),
                          float (*g)(float)) {
  const Value& a = args[0];
  if (Rank(a.kind()) >= 0 && ToF64(a) < 0) {
    return DomainError(a, std::string(name) + " was called with a negative real argument");
  }
  int r = Rank(a.kind());
  if (r < 0) return NoMethod(name, args);
  if (r == 2) return F32(g(AsF32(a)));
  return F64(f(ToF64(a)));
}

// getindex(A, i...): 1-based indices, one per dimension, or a single linear
// index in Julia's column-major order. Int32 elements become Int64.
Result<Value> GetIndex(std::span<const Value> args) {
  if (args.size() < 2 || args.size() > 4 || args[0].kind() != VKind::kTensor) {
    return NoMethod("getindex", args);
  }
  const Tensor& t = args[0].tensor();
  size_t rank = t.shape.size();
  size_t n = args.size() - 1;
  std::vector<int64_t> at(n);
  for (size_t k = 0; k < n; ++k) {
    if (args[k + 1].kind() != VKind::kI64) return NoMethod("getindex", args);
    at[k] = args[k + 1].as_i64();
  }
  auto bounds = [&]() -> Status {
    std::string dims;
    for (size_t k = 0; k < rank; ++k) dims += (k ? "×" : "") + std::to_string(t.shape[k]);
    if (rank == 1) dims += "-element";
    std::string list;
    for (size_t k = 0; k < n; ++k) list += (k ? ", " : "") + std::to_string(at[k]);
    return RuntimeError("BoundsError: attempt to access " + dims + " " + TypeName(args[0]) +
                        " at index [" + list + "]");
  };
  int64_t offset = 0;
  if (n == 1) {
    if (at[0] < 1 || at[0] > t.numel()) return bounds();
    // Column-major linear index to row-major offset.
    int64_t rest = at[0] - 1;
    std::vector<int64_t> sub(rank);
    for (size_t k = 0; k < rank; ++k) {
      sub[k] = rest % t.shape[k];
      rest /= t.shape[k];
    }
    for (size_t k = 0; k < rank; ++k) offset = offset * t.shape[k] + sub[k];
  } else {
    if (n != rank) return bounds();
    for (size_t k = 0; k < rank; ++k) {
      if (at[k] < 1 || at[k] > t.shape[k]) return bounds();
      offset = offset * t.shape[k] + (at[k] - 1);
    }
  }
  switch (t.dtype) {
    case DType::kF64:
      return F64(t.f64()[offset]);
    case DType::kF32:
      return F32(t.f32()[offset]);
    case DType::kBool:
      return Value::Bool(t.data[static_cast<size_t>(offset)] != 0);
    case DType::kI64: {
      int64_t x;
      std::memcpy(&x, t.data.data() + offset * 8, 8);
      return Value::I64(x);
    }
    default:
      return Value::I64(static_cast<int64_t>(t.at(offset)));
  }
}

// Tensor operations go to libtrace's kernels (irt/kernels.h), as the IR
// adapter does, with the same Julia-style error messages.
Result<Value> Kernel(std::string_view name, std::span<const Value> args) {
  Result<Value> r = EvalPrimitive(name, args);
  if (r.ok()) return r;
  if (r.error().code() == Code::kNotFound) return NoMethod(name, args);
  const std::string& m = r.error().message();
  bool shapes = m.find("dimension") != std::string::npos || m.find("shape") != std::string::npos ||
                m.find("broadcast") != std::string::npos || m.find("reduce") != std::string::npos ||
                m.find("reshape") != std::string::npos;
  return RuntimeError((shapes ? "DimensionMismatch: " : "ArgumentError: ") + m);
}

// An elementwise primitive: scalars by `fn`, a tensor operand by the kernels.
PrimitiveFn Elementwise(std::string name, PrimitiveFn fn) {
  return [name = std::move(name), fn = std::move(fn)](std::span<const Value> a) -> Result<Value> {
    if (!a.empty() &&
        (a[0].kind() == VKind::kTensor || (a.size() == 2 && a[1].kind() == VKind::kTensor))) {
      return Kernel(name, a);
    }
    return fn(a);
  };
}

// Wraps a fixed-arity implementation with the arity check.
PrimitiveFn Fixed(std::string name, size_t arity,
                  Result<Value> (*impl)(std::string_view, std::span<const Value>)) {
  return [name = std::move(name), arity, impl](std::span<const Value> args) -> Result<Value> {
    if (args.size() != arity) return NoMethod(name, args);
    return impl(name, args);
  };
}

PrimitiveTable MakeBuiltins() {
  PrimitiveTable t;
  using Args = std::span<const Value>;
  using SV = std::string_view;
  t.Register("+", Fixed("+", 2, [](SV n, Args a) -> Result<Value> {
               if (a[0].kind() == VKind::kF64 && a[1].kind() == VKind::kF64) {
                 return F64(AsF64(a[0]) + AsF64(a[1]));
               }
               return Arith(
                   n, a,
                   [](int64_t x, int64_t y) {
                     return Wrap(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
                   },
                   [](auto x, auto y) { return x + y; });
             }));
  // "-" is binary subtraction or unary negation.
  t.Register("-", [](Args a) -> Result<Value> {
    if (a.size() == 2) {
      return Arith(
          "-", a,
          [](int64_t x, int64_t y) {
            return Wrap(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
          },
          [](auto x, auto y) { return x - y; });
    }
    if (a.size() != 1) return NoMethod("-", a);
    switch (a[0].kind()) {
      case VKind::kBool:
      case VKind::kI64:
        return Value::I64(Wrap(0 - static_cast<uint64_t>(AsInt(a[0]))));
      case VKind::kF32:
        return F32(-AsF32(a[0]));
      case VKind::kF64:
        return F64(-AsF64(a[0]));
      default:
        return NoMethod("-", a);
    }
  });
  t.Register("*", Fixed("*", 2, [](SV n, Args a) -> Result<Value> {
               if (a[0].kind() == VKind::kF64 && a[1].kind() == VKind::kF64) {
                 return F64(AsF64(a[0]) * AsF64(a[1]));
               }
               return Arith(
                   n, a,
                   [](int64_t x, int64_t y) {
                     return Wrap(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
                   },
                   [](auto x, auto y) { return x * y; });
             }));
  t.Register("/", Fixed("/", 2, [](SV n, Args a) -> Result<Value> {
               int ra = Rank(a[0].kind()), rb = Rank(a[1].kind());
               if (ra < 0 || rb < 0) return NoMethod(n, a);
               if (std::max(ra, rb) == 2) return F32(ToF32(a[0]) / ToF32(a[1]));
               return F64(ToF64(a[0]) / ToF64(a[1]));
             }));
  t.Register("^", Fixed("^", 2, [](SV, Args a) { return Pow(a); }));
  for (const char* name : {"div", "÷"}) {
    t.Register(name, Fixed(name, 2, [](SV n, Args a) { return DivRem(n, a, false); }));
  }
  for (const char* name : {"rem", "%"}) {
    t.Register(name, Fixed(name, 2, [](SV n, Args a) { return DivRem(n, a, true); }));
  }
  t.Register("<", Fixed("<", 2, [](SV n, Args a) { return Compare(n, a, 0); }));
  t.Register("<=", Fixed("<=", 2, [](SV n, Args a) { return Compare(n, a, 1); }));
  t.Register(">", Fixed(">", 2, [](SV n, Args a) { return Compare(n, a, 2); }));
  t.Register(">=", Fixed(">=", 2, [](SV n, Args a) { return Compare(n, a, 3); }));
  t.Register("==", Fixed("==", 2, [](SV, Args a) -> Result<Value> {
               return Value::Bool(Equal(a[0], a[1]));
             }));
  t.Register("!=", Fixed("!=", 2, [](SV, Args a) -> Result<Value> {
               return Value::Bool(!Equal(a[0], a[1]));
             }));
  t.Register("&", Fixed("&", 2, [](SV n, Args a) { return Bitwise(n, a, BitOp::kAnd); }));
  t.Register("|", Fixed("|", 2, [](SV n, Args a) { return Bitwise(n, a, BitOp::kOr); }));
  for (const char* name : {"xor", "⊻"}) {
    t.Register(name, Fixed(name, 2, [](SV n, Args a) { return Bitwise(n, a, BitOp::kXor); }));
  }
  t.Register("!", Fixed("!", 1, [](SV n, Args a) -> Result<Value> {
               if (a[0].kind() != VKind::kBool) return NoMethod(n, a);
               return Value::Bool(!a[0].as_bool());
             }));
  t.Register("sin", Fixed("sin", 1, [](SV n, Args a) {
               return Trig(
                   n, a, [](double x) { return std::sin(x); }, [](float x) { return std::sin(x); });
             }));
  t.Register("cos", Fixed("cos", 1, [](SV n, Args a) {
               return Trig(
                   n, a, [](double x) { return std::cos(x); }, [](float x) { return std::cos(x); });
             }));
  t.Register("tan", Fixed("tan", 1, [](SV n, Args a) {
               return Trig(
                   n, a, [](double x) { return std::tan(x); }, [](float x) { return std::tan(x); });
             }));
  t.Register("exp", Fixed("exp", 1, [](SV n, Args a) {
               return Math(n, a, [](auto x) { return std::exp(x); });
             }));
  t.Register("tanh", Fixed("tanh", 1, [](SV n, Args a) {
               return Math(n, a, [](auto x) { return std::tanh(x); });
             }));
  t.Register("log", Fixed("log", 1, [](SV n, Args a) {
               return NonNegative(
                   n, a, [](double x) { return std::log(x); }, [](float x) { return std::log(x); });
             }));
  t.Register("sqrt", Fixed("sqrt", 1, [](SV n, Args a) {
               return NonNegative(
                   n, a, [](double x) { return std::sqrt(x); },
                   [](float x) { return std::sqrt(x); });
             }));
  t.Register("abs", Fixed("abs", 1, [](SV n, Args a) -> Result<Value> {
               switch (a[0].kind()) {
                 case VKind::kBool:
                   return a[0];
                 case VKind::kI64: {
                   int64_t x = a[0].as_i64();
                   return Value::I64(x < 0 ? Wrap(0 - static_cast<uint64_t>(x)) : x);
                 }
                 case VKind::kF32:
                   return F32(std::fabs(AsF32(a[0])));
                 case VKind::kF64:
                   return F64(std::fabs(AsF64(a[0])));
                 default:
                   return NoMethod(n, a);
               }
             }));
  t.Register("min", Fixed("min", 2, [](SV n, Args a) { return MinMax(n, a, false); }));
  t.Register("max", Fixed("max", 2, [](SV n, Args a) { return MinMax(n, a, true); }));
  t.Register("zero", Fixed("zero", 1, [](SV n, Args a) { return ZeroOne(n, a, false); }));
  t.Register("one", Fixed("one", 1, [](SV n, Args a) { return ZeroOne(n, a, true); }));
  t.Register("getindex", GetIndex);
  t.Register("length", Fixed("length", 1, [](SV n, Args a) -> Result<Value> {
               if (a[0].kind() != VKind::kTensor) return NoMethod(n, a);
               return Value::I64(a[0].tensor().numel());
             }));
  t.RegisterRandom("rand");
  t.RegisterRandom("randn");
  for (const char* name : {"+", "-", "*", "/", "^", "sin", "cos", "tan", "exp", "log", "sqrt",
                           "abs", "tanh", "min", "max"}) {
    const PrimitiveEntry* e = t.Find(name);
    t.Register(name, Elementwise(name, e->fn));
  }
  return t;
}

}  // namespace

const PrimitiveTable& PrimitiveTable::Builtins() {
  static const PrimitiveTable* table = new PrimitiveTable(MakeBuiltins());
  return *table;
}

void PrimitiveTable::Register(std::string name, PrimitiveFn fn) {
  entries_[std::move(name)] = PrimitiveEntry{std::move(fn), false};
}

void PrimitiveTable::RegisterRandom(std::string name) {
  entries_[std::move(name)] = PrimitiveEntry{nullptr, true};
}

const PrimitiveEntry* PrimitiveTable::Find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

bool PrimitiveTable::IsRandom(std::string_view name) const {
  const PrimitiveEntry* e = Find(name);
  return e != nullptr && e->random;
}

bool PrimitiveTable::Knows(std::string_view name, size_t arity) const {
  return Find(name) != nullptr || HasKernel(name, arity);
}

Result<Value> PrimitiveTable::Apply(std::string_view name, std::span<const Value> args) const {
  const PrimitiveEntry* e = Find(name);
  if (e == nullptr && HasKernel(name, args.size())) return Kernel(name, args);
  if (e == nullptr) return Unsupported("no primitive named '" + std::string(name) + "'");
  if (e->random) {
    return Unsupported("'" + std::string(name) + "' is a random draw; its value is only recorded");
  }
  return e->fn(args);
}

std::vector<std::string> PrimitiveTable::Names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : entries_) out.push_back(k);
  return out;
}

Result<Value> ApplyPrimitive(std::string_view name, std::span<const Value> args) {
  return PrimitiveTable::Builtins().Apply(name, args);
}

}  // namespace irt
