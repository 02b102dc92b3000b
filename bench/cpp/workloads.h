// The workloads of bench/ (bench/ir/w*.ir) written with irt/record.h, and
// the same programs on plain numbers.
#ifndef IRT_BENCH_CPP_WORKLOADS_H_
#define IRT_BENCH_CPP_WORKLOADS_H_

#include <cmath>
#include <cstdint>

#include "irt/record.h"

namespace workloads {

using irt::rec::Int;
using irt::rec::Real;

// W1 "powsum": h(x, n) = sum of x^i for i = 0 .. n-1.
inline constexpr double kW1X = 0.999999;
inline constexpr int64_t kW1N = 1000000;

inline Real Powsum(Real x, Int n) {
  IRT_FUNCTION(h, x, n);
  Real r = 0.0;
  Int i = 0;
  while (IRT_WHILE(i < n, i, r)) {
    r = r + pow(x, i);
    i = i + 1;
  }
  return IRT_RETURN(r);
}

inline double PowsumPlain(double x, int64_t n) {
  double r = 0.0;
  for (int64_t i = 0; i < n; ++i) r = r + std::pow(x, static_cast<double>(i));
  return r;
}

// W3 "recursion": g(x, 0) = sin(x); g(x, d) = g(1.0001 x + 0.5 cos(x), d - 1) + x.
inline constexpr double kW3X = 0.5;
inline constexpr int64_t kW3D = 30000;

inline Real Recursion(Real x, Int d) {
  IRT_FUNCTION(g, x, d);
  if (IRT_IF(d == 0)) return IRT_RETURN(sin(x));
  return IRT_RETURN(Recursion(1.0001 * x + 0.5 * cos(x), d - 1) + x);
}

inline double RecursionPlain(double x, int64_t d) {
  if (d == 0) return std::sin(x);
  return RecursionPlain(1.0001 * x + 0.5 * std::cos(x), d - 1) + x;
}

}  // namespace workloads

#endif  // IRT_BENCH_CPP_WORKLOADS_H_
