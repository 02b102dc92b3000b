// Internal: the binary64 arithmetic behind the scalar primitives, shared by
// the Value kernels (kernels.cc) and the compiled derivative programs
// (rules.cc), so that a gradient computed by the sweep and the same gradient
// computed by the nodes of an emitted backward trace agree bit for bit.
#ifndef IRT_SRC_SCALAR_OPS_H_
#define IRT_SRC_SCALAR_OPS_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace irt::internal {

enum class SOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMin,
  kMax,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
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
};

inline double Sign(double x) {
  if (std::isnan(x) || x == 0) return x;
  return x > 0 ? 1.0 : -1.0;
}

// Julia's min and max: NaN wins, -0.0 < 0.0.
inline double Max(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
  return (x > y || (x == y && !std::signbit(x))) ? x : y;
}
inline double Min(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
  return (x < y || (x == y && std::signbit(x))) ? x : y;
}

inline double Apply1(SOp op, double a) {
  switch (op) {
    case SOp::kNeg:
      return -a;
    case SOp::kNot:
      return a != 0 ? 0.0 : 1.0;
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
      return 0.0;
    case SOp::kOne:
      return 1.0;
    case SOp::kCopy:
      return a;
    default:
      return std::nan("");
  }
}

inline double Apply2(SOp op, double a, double b) {
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
      return a < b ? 1.0 : 0.0;
    case SOp::kLe:
      return a <= b ? 1.0 : 0.0;
    case SOp::kGt:
      return a > b ? 1.0 : 0.0;
    case SOp::kGe:
      return a >= b ? 1.0 : 0.0;
    case SOp::kEq:
      return a == b ? 1.0 : 0.0;
    case SOp::kNe:
      return a != b ? 1.0 : 0.0;
    case SOp::kCopy:
      return a;  // sum_to(x, like), broadcast_to(x, like) on scalars
    default:
      return std::nan("");
  }
}

/// The scalar operation a primitive performs on binary64 scalars, if it is
/// one of the operations above.
inline std::optional<SOp> ScalarOpFor(std::string_view op, size_t arity) {
  struct Entry {
    std::string_view name;
    size_t arity;
    SOp op;
  };
  static constexpr Entry kTable[] = {
      {"+", 2, SOp::kAdd},         {"-", 2, SOp::kSub},
      {"*", 2, SOp::kMul},         {"/", 2, SOp::kDiv},
      {"^", 2, SOp::kPow},         {"min", 2, SOp::kMin},
      {"max", 2, SOp::kMax},       {"<", 2, SOp::kLt},
      {"<=", 2, SOp::kLe},         {">", 2, SOp::kGt},
      {">=", 2, SOp::kGe},         {"==", 2, SOp::kEq},
      {"!=", 2, SOp::kNe},         {"-", 1, SOp::kNeg},
      {"!", 1, SOp::kNot},         {"sin", 1, SOp::kSin},
      {"cos", 1, SOp::kCos},       {"tan", 1, SOp::kTan},
      {"exp", 1, SOp::kExp},       {"log", 1, SOp::kLog},
      {"sqrt", 1, SOp::kSqrt},     {"tanh", 1, SOp::kTanh},
      {"abs", 1, SOp::kAbs},       {"sign", 1, SOp::kSign},
      {"zero", 1, SOp::kZero},     {"one", 1, SOp::kOne},
      {"identity", 1, SOp::kCopy}, {"transpose", 1, SOp::kCopy},
      {"sum", 1, SOp::kCopy},      {"mean", 1, SOp::kCopy},
      {"sum_to", 2, SOp::kCopy},   {"broadcast_to", 2, SOp::kCopy},
      {"ifelse", 3, SOp::kIfElse},
  };
  for (const Entry& e : kTable) {
    if (e.name == op && e.arity == arity) return e.op;
  }
  return std::nullopt;
}

}  // namespace irt::internal

#endif  // IRT_SRC_SCALAR_OPS_H_
