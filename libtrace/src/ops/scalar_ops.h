// Internal: the floating-point arithmetic of the standard operations (one
// function per operation, for binary64 and binary32), shared by the scalar
// and tensor evaluations (ops/) and the compiled derivative programs
// (rule_program.cc), so that a recorded value, a replayed value, a gradient
// computed by the sweep and the same gradient computed by the nodes of an
// emitted backward trace agree bit for bit.
#ifndef IRT_SRC_SCALAR_OPS_H_
#define IRT_SRC_SCALAR_OPS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "irt/ops.h"

namespace irt::internal {

enum class SOp : uint8_t {
  kNone = 0,
  kAdd = 1,
  kSub = 2,
  kMul = 3,
  kDiv = 4,
  kPow = 5,
  kMin = 6,
  kMax = 7,
  kLt = 8,
  kLe = 9,
  kGt = 10,
  kGe = 11,
  kEq = 12,
  kNe = 13,
  kNeg,
  kNot,
  kSin,
  kCos,
  kTan,
  kExp,
  kLog,
  kSqrt,
  kTanh,
  kAbs,
  kSign,
  kZero,
  kOne,
  kCopy,    // identity on scalars: identity, sum_to, broadcast_to, transpose, sum, mean
  kIfElse,  // three operands
  kAtan,
  kLog1p,
  kExpm1,
  kLgamma,
  kAtan2,
  kFld,  // floor division (Python's //)
  kMod,  // modulo with the sign of the divisor (Python's %)
  kRem,  // remainder with the sign of the dividend (C's fmod)
  kDigamma,
  kPolygamma,
  kSinh,
  kCosh,
  kAsin,
  kAcos,
  kAsinh,
  kAcosh,
  kAtanh,
  kLog2,
  kLog10,
  kExp2,
  kCbrt,
  kErf,
  kErfc,
  kHypot,
};
static_assert(
    static_cast<uint8_t>(SOp::kAdd) == kFastAdd && static_cast<uint8_t>(SOp::kSub) == kFastSub &&
        static_cast<uint8_t>(SOp::kMul) == kFastMul &&
        static_cast<uint8_t>(SOp::kDiv) == kFastDiv && static_cast<uint8_t>(SOp::kLt) == kFastLt &&
        static_cast<uint8_t>(SOp::kLe) == kFastLe && static_cast<uint8_t>(SOp::kGt) == kFastGt &&
        static_cast<uint8_t>(SOp::kGe) == kFastGe && static_cast<uint8_t>(SOp::kEq) == kFastEq &&
        static_cast<uint8_t>(SOp::kNe) == kFastNe,
    "the inline fast path of irt/ops.h uses these codes");

template <typename T>
inline T Sign(T x) {
  if (std::isnan(x) || x == 0) return x;
  return x > 0 ? T(1) : T(-1);
}

// Julia's min and max: NaN wins, -0.0 < 0.0.
template <typename T>
inline T Max(T x, T y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
  return (x > y || (x == y && !std::signbit(x))) ? x : y;
}
template <typename T>
inline T Min(T x, T y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
  return (x < y || (x == y && std::signbit(x))) ? x : y;
}

// Floor division and modulo (Python's // and %, Julia's fld and mod): the
// quotient rounded toward -Inf and a remainder with the divisor's sign.
// A zero divisor gives x / 0 and NaN, as IEEE division does.
template <typename T>
inline T Mod(T x, T y) {
  if (y == 0) return std::fmod(x, y);
  T r = std::fmod(x, y);
  if (r != 0) {
    if ((y < 0) != (r < 0)) r += y;
  } else {
    r = std::copysign(T(0), y);
  }
  return r;
}
template <typename T>
inline T Fld(T x, T y) {
  if (y == 0 || !std::isfinite(x) || !std::isfinite(y)) return std::floor(x / y);
  T r = std::fmod(x, y);
  T q = (x - r) / y;
  if (r != 0 && (y < 0) != (r < 0)) q -= 1;
  if (q == 0) return std::copysign(T(0), x / y);
  T f = std::floor(q);
  if (q - f > T(0.5)) f += 1;
  return f;
}

// The digamma function (the derivative of lgamma): the recurrence up to
// x >= 10, then the asymptotic series; reflection below 0.
template <typename T>
inline T Digamma(T xt) {
  double x = xt;
  if (std::isnan(x) || x == -INFINITY) return std::numeric_limits<T>::quiet_NaN();
  if (x <= 0 && x == std::floor(x)) return std::numeric_limits<T>::quiet_NaN();
  double r = 0;
  if (x < 0) {
    // psi(1 - x) - psi(x) = pi cot(pi x)
    r = -M_PI / std::tan(M_PI * x);
    x = 1 - x;
  }
  while (x < 10) {
    r -= 1 / x;
    x += 1;
  }
  double f = 1 / (x * x);
  double t =
      f * (-1.0 / 12 +
           f * (1.0 / 120 +
                f * (-1.0 / 252 +
                     f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))));
  return static_cast<T>(r + std::log(x) - 0.5 / x + t);
}

// The polygamma function psi^(n)(x), n = 1, 2, ...: the recurrence
// psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n+1) up to x >= n + 10, then
// the asymptotic series with Bernoulli numbers. n = 0 is Digamma. NaN for
// n < 0, a non-integral n, n > 100, a pole, NaN, or x < -10^4 (where the
// recurrence would take too long).
template <typename T>
inline T Polygamma(T nt, T xt) {
  double nd = nt, x = xt;
  if (!(nd >= 0) || nd != std::floor(nd) || nd > 100) return std::numeric_limits<T>::quiet_NaN();
  if (nd == 0) return Digamma(xt);
  if (std::isnan(x) || std::isinf(x) || (x <= 0 && x == std::floor(x)) || x < -1e4) {
    return x == INFINITY ? T(0) : std::numeric_limits<T>::quiet_NaN();
  }
  int n = static_cast<int>(nd);
  double fact = 1;  // n!
  for (int i = 2; i <= n; ++i) fact *= i;
  double sign = (n % 2 == 1) ? 1.0 : -1.0;  // (-1)^(n+1)
  double shift = 0;                         // sum of 1 / (x + k)^(n+1)
  while (x < n + 10) {
    shift += std::pow(x, -(n + 1));
    x += 1;
  }
  // (n-1)!/x^n + n!/(2 x^(n+1)) + sum_k B_2k (2k+n-1)! / ((2k)! x^(2k+n))
  static constexpr double kB[] = {1.0 / 6,  -1.0 / 30,     1.0 / 42, -1.0 / 30,
                                  5.0 / 66, -691.0 / 2730, 7.0 / 6};
  double series = fact / n / std::pow(x, n) + fact / 2 / std::pow(x, n + 1);
  double c = fact;  // (2k + n - 1)! / (2k)!, k = 1: (n+1)! / 2
  for (int k = 1; k <= 7; ++k) {
    c = k == 1 ? fact * (n + 1) / 2
               : c * (2 * k + n - 2) * (2 * k + n - 1) / ((2 * k - 1) * (2 * k));
    series += kB[k - 1] * c / std::pow(x, 2 * k + n);
  }
  return static_cast<T>(sign * (series + fact * shift));
}

template <typename T>
inline T Apply1(SOp op, T a) {
  switch (op) {
    case SOp::kNeg:
      return -a;
    case SOp::kNot:
      return a != 0 ? T(0) : T(1);
    case SOp::kSin:
      return std::sin(a);
    case SOp::kCos:
      return std::cos(a);
    case SOp::kTan:
      return std::tan(a);
    case SOp::kExp:
      return std::exp(a);
    case SOp::kLog:
      return std::log(a);
    case SOp::kSqrt:
      return std::sqrt(a);
    case SOp::kTanh:
      return std::tanh(a);
    case SOp::kAbs:
      return std::fabs(a);
    case SOp::kSign:
      return Sign(a);
    case SOp::kZero:
      return T(0);
    case SOp::kOne:
      return T(1);
    case SOp::kCopy:
      return a;
    case SOp::kAtan:
      return std::atan(a);
    case SOp::kLog1p:
      return std::log1p(a);
    case SOp::kExpm1:
      return std::expm1(a);
    case SOp::kLgamma:
      return std::lgamma(a);
    case SOp::kDigamma:
      return Digamma(a);
    case SOp::kSinh:
      return std::sinh(a);
    case SOp::kCosh:
      return std::cosh(a);
    case SOp::kAsin:
      return std::asin(a);
    case SOp::kAcos:
      return std::acos(a);
    case SOp::kAsinh:
      return std::asinh(a);
    case SOp::kAcosh:
      return std::acosh(a);
    case SOp::kAtanh:
      return std::atanh(a);
    case SOp::kLog2:
      return std::log2(a);
    case SOp::kLog10:
      return std::log10(a);
    case SOp::kExp2:
      return std::exp2(a);
    case SOp::kCbrt:
      return std::cbrt(a);
    case SOp::kErf:
      return std::erf(a);
    case SOp::kErfc:
      return std::erfc(a);
    default:
      return std::numeric_limits<T>::quiet_NaN();
  }
}

template <typename T>
inline T Apply2(SOp op, T a, T b) {
  switch (op) {
    case SOp::kAdd:
      return a + b;
    case SOp::kSub:
      return a - b;
    case SOp::kMul:
      return a * b;
    case SOp::kDiv:
      return a / b;
    case SOp::kPow:
      return std::pow(a, b);
    case SOp::kMin:
      return Min(a, b);
    case SOp::kMax:
      return Max(a, b);
    case SOp::kLt:
      return a < b ? T(1) : T(0);
    case SOp::kLe:
      return a <= b ? T(1) : T(0);
    case SOp::kGt:
      return a > b ? T(1) : T(0);
    case SOp::kGe:
      return a >= b ? T(1) : T(0);
    case SOp::kEq:
      return a == b ? T(1) : T(0);
    case SOp::kNe:
      return a != b ? T(1) : T(0);
    case SOp::kCopy:
      return a;  // sum_to(x, like), broadcast_to(x, like) on scalars
    case SOp::kAtan2:
      return std::atan2(a, b);
    case SOp::kFld:
      return Fld(a, b);
    case SOp::kMod:
      return Mod(a, b);
    case SOp::kRem:
      return std::fmod(a, b);
    case SOp::kPolygamma:
      return Polygamma(a, b);
    case SOp::kHypot:
      return std::hypot(a, b);
    default:
      return std::numeric_limits<T>::quiet_NaN();
  }
}

/// Whether Apply1 / Apply2 compute `op` (on floating-point operands).
inline bool HasFloatKernel(SOp op, size_t arity) {
  if (arity == 1) {
    switch (op) {
      case SOp::kNeg:
      case SOp::kSin:
      case SOp::kCos:
      case SOp::kTan:
      case SOp::kExp:
      case SOp::kLog:
      case SOp::kSqrt:
      case SOp::kTanh:
      case SOp::kAbs:
      case SOp::kSign:
      case SOp::kZero:
      case SOp::kOne:
      case SOp::kCopy:
      case SOp::kAtan:
      case SOp::kLog1p:
      case SOp::kExpm1:
      case SOp::kLgamma:
      case SOp::kDigamma:
      case SOp::kSinh:
      case SOp::kCosh:
      case SOp::kAsin:
      case SOp::kAcos:
      case SOp::kAsinh:
      case SOp::kAcosh:
      case SOp::kAtanh:
      case SOp::kLog2:
      case SOp::kLog10:
      case SOp::kExp2:
      case SOp::kCbrt:
      case SOp::kErf:
      case SOp::kErfc:
        return true;
      default:
        return false;
    }
  }
  if (arity == 2) {
    switch (op) {
      case SOp::kAdd:
      case SOp::kSub:
      case SOp::kMul:
      case SOp::kDiv:
      case SOp::kPow:
      case SOp::kMin:
      case SOp::kMax:
      case SOp::kAtan2:
      case SOp::kFld:
      case SOp::kMod:
      case SOp::kRem:
      case SOp::kPolygamma:
      case SOp::kHypot:
        return true;
      default:
        return false;
    }
  }
  return false;
}

/// The binary64 operation of operation `op` with `arity` operands, if it
/// has one (irt/ops.h's OpDef::scalar_op).
SOp ScalarOpFor(std::string_view op, size_t arity);

}  // namespace irt::internal

#endif  // IRT_SRC_SCALAR_OPS_H_
