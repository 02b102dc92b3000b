// Julia semantics for the built-in primitives: Int op Int stays Int64 with
// wrap-around (except `/`, which gives Float64), Bool counts as an integer,
// mixed operands promote along Bool < Int64 < Float32 < Float64, integer
// division by zero is a DivideError, comparisons between integers and
// floats are exact, and domain errors are errors, not NaNs.
#include "primitives.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace irt::ir {

namespace {

inline Value F64(double d) { return Value::FromBits(VKind::kF64, std::bit_cast<uint64_t>(d)); }
inline Value F32(float f) { return Value::FromBits(VKind::kF32, std::bit_cast<uint32_t>(f)); }
inline double AsF64(const Value& v) { return std::bit_cast<double>(v.bits()); }
inline float AsF32(const Value& v) { return std::bit_cast<float>(static_cast<uint32_t>(v.bits())); }

// Promotion rank: Bool 0 < Int64 1 < Float32 2 < Float64 3; -1 if not a real number.
inline int Rank(VKind k) {
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
inline int64_t AsInt(const Value& v) {
  return v.kind() == VKind::kBool ? (v.bits() != 0 ? 1 : 0) : v.as_i64();
}
inline double ToF64(const Value& v) {
  switch (v.kind()) {
    case VKind::kF64:
      return AsF64(v);
    case VKind::kF32:
      return AsF32(v);
    default:
      return static_cast<double>(AsInt(v));
  }
}
inline float ToF32(const Value& v) {
  switch (v.kind()) {
    case VKind::kF64:
      return static_cast<float>(AsF64(v));
    case VKind::kF32:
      return AsF32(v);
    default:
      return static_cast<float>(AsInt(v));
  }
}
inline int64_t Wrap(uint64_t u) { return static_cast<int64_t>(u); }

// +, -, * with promotion; integers wrap around like Julia's.
template <typename IntOp, typename FloatOp>
bool Arith(const Value& a, const Value& b, Value* out, IntOp iop, FloatOp fop) {
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return false;
  int r = std::max(ra, rb);
  if (r <= 1) {
    *out = Value::I64(iop(AsInt(a), AsInt(b)));
  } else if (r == 2) {
    *out = F32(fop(ToF32(a), ToF32(b)));
  } else {
    *out = F64(fop(ToF64(a), ToF64(b)));
  }
  return true;
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
  int64_t n = s.numel();
  bool s_int = s.dtype == DType::kI64 || s.dtype == DType::kI32 || s.dtype == DType::kBool;
  bool t_int = t.dtype == DType::kI64 || t.dtype == DType::kI32 || t.dtype == DType::kBool;
  if (s.dtype == t.dtype && s_int) return s.data == t.data;
  (void)t_int;
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

std::string DomainError(const Value& v, const std::string& what) {
  return "DomainError with " + FormatValue(v) + ": " + what;
}

// sin, cos, ...: Float32 stays Float32, integers become Float64.
template <typename F>
bool Math(const Value& a, Value* out, F f) {
  int r = Rank(a.kind());
  if (r < 0) return false;
  if (r == 2) {
    *out = F32(f(AsF32(a)));
  } else {
    *out = F64(f(ToF64(a)));
  }
  return true;
}

bool MinMax(const Value& a, const Value& b, bool is_max, Value* out) {
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return false;
  int r = std::max(ra, rb);
  if (r == 0) {
    bool x = a.as_bool(), y = b.as_bool();
    *out = Value::Bool(is_max ? (x || y) : (x && y));
  } else if (r == 1) {
    int64_t x = AsInt(a), y = AsInt(b);
    *out = Value::I64(is_max ? std::max(x, y) : std::min(x, y));
  } else {
    double x = ToF64(a), y = ToF64(b);
    double m;
    if (std::isnan(x) || std::isnan(y)) {
      m = std::isnan(x) ? x : y;
    } else if (is_max) {
      m = (x > y || (x == y && !std::signbit(x))) ? x : y;
    } else {
      m = (x < y || (x == y && std::signbit(x))) ? x : y;
    }
    *out = r == 2 ? F32(static_cast<float>(m)) : F64(m);
  }
  return true;
}

bool IntPow(const Value& a, const Value& b, Value* out, std::string* error) {
  int64_t e = AsInt(b);
  if (a.kind() == VKind::kBool) {
    bool x = a.as_bool();
    if (e < 0 && !x) {
      *error = DomainError(b, "cannot raise an integer x to a negative power " + FormatValue(b));
      return false;
    }
    *out = Value::Bool(e == 0 || x);
    return true;
  }
  int64_t x = AsInt(a);
  if (e < 0) {
    if (x == 1) {
      *out = Value::I64(1);
    } else if (x == -1) {
      *out = Value::I64((e & 1) ? -1 : 1);
    } else {
      *error = DomainError(b, "cannot raise an integer x to a negative power " + FormatValue(b));
      return false;
    }
    return true;
  }
  uint64_t result = 1, base = static_cast<uint64_t>(x), n = static_cast<uint64_t>(e);
  while (n != 0) {
    if (n & 1) result *= base;
    base *= base;
    n >>= 1;
  }
  *out = Value::I64(Wrap(result));
  return true;
}

bool Pow(const Value& a, const Value& b, Value* out, std::string* error) {
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return false;
  if (ra <= 1 && rb <= 1) return IntPow(a, b, out, error);
  if (rb <= 1) {
    // Float base, integer exponent: always defined.
    double n = static_cast<double>(AsInt(b));
    if (ra == 2) {
      *out = F32(static_cast<float>(std::pow(static_cast<double>(AsF32(a)), n)));
    } else {
      *out = F64(std::pow(AsF64(a), n));
    }
    return true;
  }
  int r = std::max(ra, rb);
  double x = ToF64(a), y = ToF64(b);
  if (x < 0 && std::isfinite(y) && y != std::trunc(y)) {
    *error = DomainError(a, "exponentiation yielding a complex result requires a complex argument");
    return false;
  }
  if (r == 2) {
    *out = F32(std::pow(ToF32(a), ToF32(b)));
  } else {
    *out = F64(std::pow(x, y));
  }
  return true;
}

bool DivRem(const Value& a, const Value& b, bool is_rem, Value* out, std::string* error) {
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return false;
  int r = std::max(ra, rb);
  if (r <= 1) {
    int64_t x = AsInt(a), y = AsInt(b);
    if (y == 0 || (!is_rem && y == -1 && x == std::numeric_limits<int64_t>::min())) {
      *error = "DivideError: integer division error";
      return false;
    }
    int64_t q =
        is_rem ? (y == -1 ? 0 : x % y) : (y == -1 ? Wrap(0 - static_cast<uint64_t>(x)) : x / y);
    *out = r == 0 ? Value::Bool(q != 0) : Value::I64(q);
    return true;
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
  *out = r == 2 ? F32(static_cast<float>(q)) : F64(q);
  return true;
}

bool Bitwise(Prim p, const Value& a, const Value& b, Value* out) {
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0 || ra > 1 || rb > 1) return false;
  int64_t x = AsInt(a), y = AsInt(b);
  int64_t z = p == Prim::kAnd ? (x & y) : p == Prim::kOr ? (x | y) : (x ^ y);
  *out = (ra == 0 && rb == 0) ? Value::Bool(z != 0) : Value::I64(z);
  return true;
}

// A[i], A[i, j], ...: 1-based indices, one per dimension, or a single
// linear index in Julia's column-major order. Int32 elements become Int64.
bool GetIndex(const Value& a, const Value* const* idx, size_t n, Value* out, std::string* error) {
  const Tensor& t = a.tensor();
  size_t rank = t.shape.size();
  std::vector<int64_t> at(n);
  for (size_t k = 0; k < n; ++k) {
    if (idx[k]->kind() != VKind::kI64) {
      const Value* args[kMaxPrimArity + 1] = {&a};
      for (size_t j = 0; j < n; ++j) args[j + 1] = idx[j];
      *error = NoMethodMessage("getindex", args, n + 1);
      return false;
    }
    at[k] = idx[k]->as_i64();
  }
  auto bounds = [&]() {
    std::string dims;
    for (size_t k = 0; k < rank; ++k) dims += (k ? "×" : "") + std::to_string(t.shape[k]);
    if (rank == 1) dims += "-element";
    std::string list;
    for (size_t k = 0; k < n; ++k) list += (k ? ", " : "") + std::to_string(at[k]);
    *error =
        "BoundsError: attempt to access " + dims + " " + TypeName(a) + " at index [" + list + "]";
    return false;
  };
  int64_t offset = 0;
  if (n == 1) {
    int64_t numel = t.numel();
    if (at[0] < 1 || at[0] > numel) return bounds();
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
      *out = F64(t.f64()[offset]);
      break;
    case DType::kF32:
      *out = F32(t.f32()[offset]);
      break;
    case DType::kBool:
      *out = Value::Bool(t.data[static_cast<size_t>(offset)] != 0);
      break;
    default:
      *out = Value::I64(static_cast<int64_t>(t.at(offset)));
      if (t.dtype == DType::kI64) {
        int64_t x;
        std::memcpy(&x, t.data.data() + offset * 8, 8);
        *out = Value::I64(x);
      }
      break;
  }
  return true;
}

bool ZeroOne(const Value& a, bool one, Value* out) {
  switch (a.kind()) {
    case VKind::kBool:
      *out = Value::Bool(one);
      return true;
    case VKind::kI64:
      *out = Value::I64(one ? 1 : 0);
      return true;
    case VKind::kF32:
      *out = F32(one ? 1.0f : 0.0f);
      return true;
    case VKind::kF64:
      *out = F64(one ? 1.0 : 0.0);
      return true;
    case VKind::kTensor: {
      const Tensor& t = a.tensor();
      Tensor z = Tensor::Zeros(t.dtype, t.shape);
      if (one) {
        // one(A) is the identity, defined for square matrices only.
        if (t.shape.size() != 2 || t.shape[0] != t.shape[1]) return false;
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
      *out = Value::MakeTensor(std::move(z));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

std::string NoMethodMessage(std::string_view name, const Value* const* args, size_t n) {
  std::string m = "MethodError: no method matching ";
  m += name;
  m += '(';
  bool tensor = false;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) m += ", ";
    m += "::";
    m += TypeName(*args[i]);
    tensor = tensor || args[i]->kind() == VKind::kTensor;
  }
  m += ')';
  if (tensor) m += " (tensor arithmetic is not supported yet)";
  return m;
}

bool EvalPrim(Prim p, const Value* const* args, size_t nargs, RandomSource& random, Value* out,
              std::string* error) {
  const Value& a = *args[0];
  if (IsElementwise(p) &&
      (a.kind() == VKind::kTensor || (nargs == 2 && args[1]->kind() == VKind::kTensor))) {
    return EvalKernel(PrimName(p), args, nargs, out, error);
  }
  bool ok = true;
  switch (p) {
    case Prim::kAdd:
      if (a.kind() == VKind::kF64 && args[1]->kind() == VKind::kF64) {
        *out = F64(AsF64(a) + AsF64(*args[1]));
        return true;
      }
      ok = Arith(
          a, *args[1], out,
          [](int64_t x, int64_t y) {
            return Wrap(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
          },
          [](auto x, auto y) { return x + y; });
      break;
    case Prim::kSub:
      ok = Arith(
          a, *args[1], out,
          [](int64_t x, int64_t y) {
            return Wrap(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
          },
          [](auto x, auto y) { return x - y; });
      break;
    case Prim::kMul:
      if (a.kind() == VKind::kF64 && args[1]->kind() == VKind::kF64) {
        *out = F64(AsF64(a) * AsF64(*args[1]));
        return true;
      }
      ok = Arith(
          a, *args[1], out,
          [](int64_t x, int64_t y) {
            return Wrap(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
          },
          [](auto x, auto y) { return x * y; });
      break;
    case Prim::kDiv: {
      int ra = Rank(a.kind()), rb = Rank(args[1]->kind());
      if (ra < 0 || rb < 0) {
        ok = false;
      } else if (std::max(ra, rb) == 2) {
        *out = F32(ToF32(a) / ToF32(*args[1]));
      } else {
        *out = F64(ToF64(a) / ToF64(*args[1]));
      }
      break;
    }
    case Prim::kPow:
      if (!Pow(a, *args[1], out, error)) {
        if (!error->empty()) return false;
        ok = false;
      }
      break;
    case Prim::kIntDiv:
    case Prim::kRem:
      if (!DivRem(a, *args[1], p == Prim::kRem, out, error)) {
        if (!error->empty()) return false;
        ok = false;
      }
      break;
    case Prim::kNeg:
      switch (a.kind()) {
        case VKind::kBool:
        case VKind::kI64:
          *out = Value::I64(Wrap(0 - static_cast<uint64_t>(AsInt(a))));
          break;
        case VKind::kF32:
          *out = F32(-AsF32(a));
          break;
        case VKind::kF64:
          *out = F64(-AsF64(a));
          break;
        default:
          ok = false;
      }
      break;
    case Prim::kLt:
    case Prim::kLe:
    case Prim::kGt:
    case Prim::kGe: {
      const Value& b = *args[1];
      int c;
      if (a.kind() == VKind::kI64 && b.kind() == VKind::kI64) {
        c = a.as_i64() < b.as_i64() ? -1 : a.as_i64() > b.as_i64() ? 1 : 0;
      } else if (Rank(a.kind()) >= 0 && Rank(b.kind()) >= 0) {
        c = CompareReal(a, b);
      } else if (a.kind() == VKind::kString && b.kind() == VKind::kString) {
        int s = a.str().compare(b.str());
        c = s < 0 ? -1 : s > 0 ? 1 : 0;
      } else {
        ok = false;
        break;
      }
      bool r = false;
      if (c != 2) {
        r = p == Prim::kLt ? c < 0 : p == Prim::kLe ? c <= 0 : p == Prim::kGt ? c > 0 : c >= 0;
      }
      *out = Value::Bool(r);
      break;
    }
    case Prim::kEq:
      *out = Value::Bool(Equal(a, *args[1]));
      break;
    case Prim::kNe:
      *out = Value::Bool(!Equal(a, *args[1]));
      break;
    case Prim::kAnd:
    case Prim::kOr:
    case Prim::kXor:
      ok = Bitwise(p, a, *args[1], out);
      break;
    case Prim::kNot:
      if (a.kind() != VKind::kBool) {
        ok = false;
      } else {
        *out = Value::Bool(!a.as_bool());
      }
      break;
    case Prim::kSin:
    case Prim::kCos:
    case Prim::kTan:
      if (Rank(a.kind()) >= 2 && std::isinf(ToF64(a))) {
        *error = DomainError(a, std::string(PrimName(p)) + "(x) is only defined for finite x");
        return false;
      }
      if (p == Prim::kSin) ok = Math(a, out, [](auto x) { return std::sin(x); });
      if (p == Prim::kCos) ok = Math(a, out, [](auto x) { return std::cos(x); });
      if (p == Prim::kTan) ok = Math(a, out, [](auto x) { return std::tan(x); });
      break;
    case Prim::kExp:
      ok = Math(a, out, [](auto x) { return std::exp(x); });
      break;
    case Prim::kTanh:
      ok = Math(a, out, [](auto x) { return std::tanh(x); });
      break;
    case Prim::kLog:
    case Prim::kSqrt:
      if (Rank(a.kind()) >= 0 && ToF64(a) < 0) {
        *error =
            DomainError(a, std::string(PrimName(p)) + " was called with a negative real argument");
        return false;
      }
      if (p == Prim::kLog) {
        ok = Math(a, out, [](auto x) { return std::log(x); });
      } else {
        ok = Math(a, out, [](auto x) { return std::sqrt(x); });
      }
      break;
    case Prim::kAbs:
      switch (a.kind()) {
        case VKind::kBool:
          *out = a;
          break;
        case VKind::kI64: {
          int64_t x = a.as_i64();
          *out = Value::I64(x < 0 ? Wrap(0 - static_cast<uint64_t>(x)) : x);
          break;
        }
        case VKind::kF32:
          *out = F32(std::fabs(AsF32(a)));
          break;
        case VKind::kF64:
          *out = F64(std::fabs(AsF64(a)));
          break;
        default:
          ok = false;
      }
      break;
    case Prim::kMin:
    case Prim::kMax:
      ok = MinMax(a, *args[1], p == Prim::kMax, out);
      break;
    case Prim::kZero:
    case Prim::kOne:
      ok = ZeroOne(a, p == Prim::kOne, out);
      break;
    case Prim::kRand:
    case Prim::kRandn: {
      double d;
      if (!(p == Prim::kRand ? random.Uniform(&d) : random.Normal(&d))) {
        *error = random.ExhaustedMessage();
        return false;
      }
      *out = F64(d);
      return true;
    }
    case Prim::kGetIndex:
      if (a.kind() != VKind::kTensor) {
        ok = false;
        break;
      }
      return GetIndex(a, args + 1, nargs - 1, out, error);
    case Prim::kLength:
      if (a.kind() != VKind::kTensor) {
        ok = false;
        break;
      }
      *out = Value::I64(a.tensor().numel());
      return true;
    case Prim::kKernel:
      *error = "internal error: a tensor primitive evaluated without its name";
      return false;
  }
  if (!ok) {
    size_t n = nargs;
    if (p == Prim::kGetIndex) {
      *error = NoMethodMessage(PrimName(p), args, n);
      return false;
    }
    switch (p) {
      case Prim::kNeg:
      case Prim::kNot:
      case Prim::kSin:
      case Prim::kCos:
      case Prim::kTan:
      case Prim::kExp:
      case Prim::kLog:
      case Prim::kSqrt:
      case Prim::kAbs:
      case Prim::kTanh:
      case Prim::kZero:
      case Prim::kOne:
        n = 1;
        break;
      default:
        n = 2;
    }
    *error = NoMethodMessage(PrimName(p), args, n);
    return false;
  }
  return true;
}

}  // namespace irt::ir
