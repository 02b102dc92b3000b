// Scalar evaluation of the standard operations: Julia's promotion (Bool <
// Int64 < Float32 < Float64), Int64 arithmetic that wraps around, `/` always
// floating point, exact comparisons between integers and floats, integer
// division by zero an error, floating-point domain errors NaN (IEEE 754).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "ops_internal.h"

namespace irt::ops {

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

Status NoMethod(std::string_view name, OpArgs args) {
  return RuntimeError(NoMethodMessage(name, args));
}

Status ShapeError(std::string_view name, const std::string& what) {
  return RuntimeError("DimensionMismatch: " + std::string(name) + ": " + what);
}

Status ArgError(std::string_view name, const std::string& what) {
  return RuntimeError("ArgumentError: " + std::string(name) + ": " + what);
}

Status BoundsError(std::string_view name, const std::string& what) {
  return RuntimeError("BoundsError: " + std::string(name) + ": " + what);
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "()";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += "×";
    s += std::to_string(shape[i]);
  }
  return s;
}

bool ToIndex(const Value& v, int64_t* out) {
  switch (v.kind()) {
    case VKind::kI64:
    case VKind::kBool:
      *out = AsInt(v);
      return true;
    case VKind::kF64:
    case VKind::kF32: {
      double d = v.to_double();
      if (d != std::trunc(d) || std::fabs(d) > 9.0e15) return false;
      *out = static_cast<int64_t>(d);
      return true;
    }
    default:
      return false;
  }
}

namespace {

// A floating-point result of rank r (2: Float32, 3: Float64).
template <typename F>
Value FloatResult(int r, const Value& a, const Value& b, F f) {
  if (r == 2) return F32(f(ToF32(a), ToF32(b)));
  return F64(f(ToF64(a), ToF64(b)));
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

Result<Value> Arith(const OpDef& op, OpArgs args) {
  const Value& a = args[0];
  const Value& b = args[1];
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return NoMethod(op.name, args);
  int r = std::max(ra, rb);
  SOp s = SOpOf(op);
  if (r <= 1) {
    uint64_t x = static_cast<uint64_t>(AsInt(a)), y = static_cast<uint64_t>(AsInt(b));
    return Value::I64(Wrap(s == SOp::kAdd ? x + y : s == SOp::kSub ? x - y : x * y));
  }
  return FloatResult(r, a, b, [s](auto x, auto y) { return internal::Apply2(s, x, y); });
}

Result<Value> Divide(const OpDef& op, OpArgs args) {
  int ra = Rank(args[0].kind()), rb = Rank(args[1].kind());
  if (ra < 0 || rb < 0) return NoMethod(op.name, args);
  return FloatResult(std::max(ra, rb) == 2 ? 2 : 3, args[0], args[1],
                     [](auto x, auto y) { return x / y; });
}

Result<Value> IntPow(const Value& a, const Value& b) {
  int64_t e = AsInt(b);
  auto negative = [&]() {
    return RuntimeError("DomainError with " + FormatValue(b) +
                        ": cannot raise an integer x to a negative power " + FormatValue(b));
  };
  if (a.kind() == VKind::kBool) {
    bool x = a.as_bool();
    if (e < 0 && !x) return negative();
    return Value::Bool(e == 0 || x);
  }
  int64_t x = AsInt(a);
  if (e < 0) {
    if (x == 1) return Value::I64(1);
    if (x == -1) return Value::I64((e & 1) ? -1 : 1);
    return negative();
  }
  uint64_t result = 1, base = static_cast<uint64_t>(x), n = static_cast<uint64_t>(e);
  while (n != 0) {
    if (n & 1) result *= base;
    base *= base;
    n >>= 1;
  }
  return Value::I64(Wrap(result));
}

Result<Value> Pow(const OpDef& op, OpArgs args) {
  const Value& a = args[0];
  const Value& b = args[1];
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return NoMethod(op.name, args);
  if (ra <= 1 && rb <= 1) return IntPow(a, b);
  if (rb <= 1) {
    // Float base, integer exponent: computed in binary64.
    double n = static_cast<double>(AsInt(b));
    if (ra == 2) return F32(static_cast<float>(std::pow(static_cast<double>(AsF32(a)), n)));
    return F64(std::pow(AsF64(a), n));
  }
  return FloatResult(std::max(ra, rb), a, b, [](auto x, auto y) { return std::pow(x, y); });
}

// div (truncated), rem (sign of the dividend), fld (floored) and mod (sign
// of the divisor).
Result<Value> IntegerDivision(const OpDef& op, OpArgs args) {
  const Value& a = args[0];
  const Value& b = args[1];
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return NoMethod(op.name, args);
  SOp s = SOpOf(op);
  bool truncated = s == SOp::kNone;  // div
  int r = std::max(ra, rb);
  if (r <= 1) {
    int64_t x = AsInt(a), y = AsInt(b);
    bool quotient = truncated || s == SOp::kFld;
    if (y == 0 || (quotient && y == -1 && x == std::numeric_limits<int64_t>::min())) {
      return RuntimeError("DivideError: integer division error");
    }
    int64_t q;
    if (y == -1) {
      q = quotient ? Wrap(0 - static_cast<uint64_t>(x)) : 0;
    } else {
      q = quotient ? x / y : x % y;
      int64_t rem = x % y;
      if (!truncated && rem != 0 && ((rem < 0) != (y < 0))) {
        if (s == SOp::kFld) {
          q -= 1;
        } else if (s == SOp::kMod) {
          q += y;
        }
      }
    }
    return r == 0 ? Value::Bool(q != 0) : Value::I64(q);
  }
  if (truncated) {
    auto div = [](auto x, auto y) {
      using T = decltype(x);
      if (y == 0 || !std::isfinite(x) || !std::isfinite(y)) return std::trunc(x / y);
      return static_cast<T>(std::nearbyint((x - std::fmod(x, y)) / y));
    };
    return FloatResult(r, a, b, div);
  }
  return FloatResult(r, a, b, [s](auto x, auto y) { return internal::Apply2(s, x, y); });
}

Result<Value> Compare(const OpDef& op, OpArgs args) {
  const Value& a = args[0];
  const Value& b = args[1];
  int c;
  if (Rank(a.kind()) >= 0 && Rank(b.kind()) >= 0) {
    c = CompareReal(a, b);
  } else if (a.kind() == VKind::kString && b.kind() == VKind::kString) {
    int s = a.str().compare(b.str());
    c = s < 0 ? -1 : s > 0 ? 1 : 0;
  } else {
    return NoMethod(op.name, args);
  }
  if (c == 2) return Value::Bool(false);
  switch (SOpOf(op)) {
    case SOp::kLt:
      return Value::Bool(c < 0);
    case SOp::kLe:
      return Value::Bool(c <= 0);
    case SOp::kGt:
      return Value::Bool(c > 0);
    default:
      return Value::Bool(c >= 0);
  }
}

Result<Value> MinMax(const OpDef& op, OpArgs args) {
  const Value& a = args[0];
  const Value& b = args[1];
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return NoMethod(op.name, args);
  bool is_max = SOpOf(op) == SOp::kMax;
  int r = std::max(ra, rb);
  if (r == 0) {
    bool x = a.as_bool(), y = b.as_bool();
    return Value::Bool(is_max ? (x || y) : (x && y));
  }
  if (r == 1) {
    int64_t x = AsInt(a), y = AsInt(b);
    return Value::I64(is_max ? std::max(x, y) : std::min(x, y));
  }
  double m = is_max ? internal::Max(ToF64(a), ToF64(b)) : internal::Min(ToF64(a), ToF64(b));
  return r == 2 ? F32(static_cast<float>(m)) : F64(m);
}

Result<Value> Bitwise(const OpDef& op, OpArgs args) {
  int ra = Rank(args[0].kind()), rb = Rank(args[1].kind());
  if (ra < 0 || rb < 0 || ra > 1 || rb > 1) return NoMethod(op.name, args);
  int64_t x = AsInt(args[0]), y = AsInt(args[1]);
  int64_t z = op.name == "&" ? (x & y) : op.name == "|" ? (x | y) : (x ^ y);
  return (ra == 0 && rb == 0) ? Value::Bool(z != 0) : Value::I64(z);
}

// Unary operations that keep integers integers: -, abs, sign, zero, one,
// identity, !.
Result<Value> IntegerUnary(const OpDef& op, OpArgs args) {
  const Value& a = args[0];
  SOp s = SOpOf(op);
  if (s == SOp::kCopy) return a;
  int r = Rank(a.kind());
  if (r < 0) return NoMethod(op.name, args);
  if (s == SOp::kNot) {
    if (r != 0) return NoMethod(op.name, args);
    return Value::Bool(!a.as_bool());
  }
  if (r == 0 && (s == SOp::kAbs || s == SOp::kZero || s == SOp::kOne)) {
    return s == SOp::kAbs ? a : Value::Bool(s == SOp::kOne);
  }
  if (r <= 1) {
    int64_t x = AsInt(a);
    switch (s) {
      case SOp::kNeg:
        return Value::I64(Wrap(0 - static_cast<uint64_t>(x)));
      case SOp::kAbs:
        return Value::I64(x < 0 ? Wrap(0 - static_cast<uint64_t>(x)) : x);
      case SOp::kSign:
        return Value::I64(x > 0 ? 1 : x < 0 ? -1 : 0);
      case SOp::kZero:
        return Value::I64(0);
      case SOp::kOne:
        return Value::I64(1);
      default:
        break;
    }
  }
  if (r == 2) return F32(internal::Apply1(s, AsF32(a)));
  return F64(internal::Apply1(s, ToF64(a)));
}

// sin, cos, log, ...: Float32 stays Float32, integers become Float64.
Result<Value> Math1(const OpDef& op, OpArgs args) {
  const Value& a = args[0];
  int r = Rank(a.kind());
  if (r < 0) return NoMethod(op.name, args);
  if (r == 2) return F32(internal::Apply1(SOpOf(op), AsF32(a)));
  return F64(internal::Apply1(SOpOf(op), ToF64(a)));
}

Result<Value> Math2(const OpDef& op, OpArgs args) {
  int ra = Rank(args[0].kind()), rb = Rank(args[1].kind());
  if (ra < 0 || rb < 0) return NoMethod(op.name, args);
  SOp s = SOpOf(op);
  int r = std::max(ra, rb) == 2 ? 2 : 3;
  return FloatResult(r, args[0], args[1],
                     [s](auto x, auto y) { return internal::Apply2(s, x, y); });
}

}  // namespace

Result<Value> ScalarElementwise(const OpDef& op, OpArgs a) {
  switch (SOpOf(op)) {
    case SOp::kAdd:
    case SOp::kSub:
    case SOp::kMul:
      return Arith(op, a);
    case SOp::kDiv:
      return Divide(op, a);
    case SOp::kPow:
      return Pow(op, a);
    case SOp::kMin:
    case SOp::kMax:
      return MinMax(op, a);
    case SOp::kLt:
    case SOp::kLe:
    case SOp::kGt:
    case SOp::kGe:
      return Compare(op, a);
    case SOp::kEq:
    case SOp::kNe:
      return ScalarEqual(op, a);
    case SOp::kNeg:
    case SOp::kAbs:
    case SOp::kSign:
    case SOp::kZero:
    case SOp::kOne:
    case SOp::kCopy:
    case SOp::kNot:
      return IntegerUnary(op, a);
    case SOp::kFld:
    case SOp::kMod:
    case SOp::kRem:
      return IntegerDivision(op, a);
    case SOp::kIfElse:
      return ScalarIfElse(op, a);
    case SOp::kNone:
      if (op.name == "div") return IntegerDivision(op, a);
      if (op.name == "&" || op.name == "|" || op.name == "xor") return Bitwise(op, a);
      break;
    default:
      // Every other operation is a floating-point function of scalar_ops.h
      // (sin, log, atan2, ...): Float32 stays Float32, integers become
      // Float64. A new function needs no case here.
      if (internal::HasFloatKernel(SOpOf(op), 1) && a.size() == 1) return Math1(op, a);
      if (internal::HasFloatKernel(SOpOf(op), 2) && a.size() == 2) return Math2(op, a);
      break;
  }
  return Internal("operation " + std::string(op.name) + " has no scalar evaluation");
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

Result<Value> ScalarEqual(const OpDef& op, OpArgs a) {
  bool eq = Equal(a[0], a[1]);
  return Value::Bool(SOpOf(op) == SOp::kEq ? eq : !eq);
}

Result<Value> ScalarIfElse(const OpDef& op, OpArgs a) {
  if (!IsReal(a[0])) {
    return ArgError(op.name, "the condition must be a Bool, not " + TypeName(a[0]));
  }
  return a[0].to_double() != 0 ? a[1] : a[2];
}

Result<Value> MakeTuple(const OpDef&, OpArgs a) { return Value::MakeTuple(a.ToVector()); }

}  // namespace irt::ops
