// The workloads of bench/ (bench/ir/w*.ir) written with irt/record.h, and
// the same programs on plain numbers.
#ifndef IRT_BENCH_CPP_WORKLOADS_H_
#define IRT_BENCH_CPP_WORKLOADS_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "irt/record.h"

namespace workloads {

using irt::rec::Int;
using irt::rec::Real;
using irt::rec::Tensor;

// W1 "powsum": h(x, n) = sum of x^i for i = 0 .. n-1.
inline constexpr double kW1X = 0.999999;
inline constexpr int64_t kW1N = 1000000;

inline Real Powsum(Real x, Int n) {
  IRT_FUNCTION(h, x, n);
  Real r = 0.0;
  Int i = 0;
  while (IRT_WHILE(i, r)(i < n)) {
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

// W2 "rosenbrock": sum over i < n of 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2,
// x a Float64 vector, 1-based indices; x[k] = 0.5 + 0.001 (k mod 100).
inline constexpr int64_t kW2N = 1000000;

inline std::vector<double> RosenData(int64_t n) {
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    x[static_cast<size_t>(i)] = 0.5 + 0.001 * static_cast<double>(i % 100);
  return x;
}

inline Real Rosen(Tensor x, Int n) {
  IRT_FUNCTION(rosen, x, n);
  Real r = 0.0;
  Int i = 1;
  while (IRT_WHILE(i, r)(i < n)) {
    Real a = getindex(x, i);
    Int j = i + 1;
    Real b = getindex(x, j);
    Real t = b - a * a;
    Real u = 1.0 - a;
    Real t2 = t * t;
    Real term = 100.0 * t2;
    Real u2 = u * u;
    Real s = term + u2;
    r = r + s;
    i = j;
  }
  return IRT_RETURN(r);
}

inline double RosenPlain(const std::vector<double>& x, int64_t n) {
  double r = 0.0;
  for (int64_t i = 1; i < n; ++i) {
    double a = x[static_cast<size_t>(i - 1)], b = x[static_cast<size_t>(i)];
    double t = b - a * a, u = 1.0 - a;
    r = r + (100.0 * (t * t) + u * u);
  }
  return r;
}

// W4 "mlp": loss = sum(tanh(tanh(X W1 + b1) W2 + b2) W3 + b3), X 64x512,
// widths 512 -> 512 -> 512 -> 10, the data of bench/grad_bench.py.
struct MlpData {
  std::vector<Tensor> t;  // X, W1, b1, W2, b2, W3, b3
};

inline MlpData MlpInputs() {
  MlpData d;
  std::vector<double> x(64 * 512);
  for (int b = 0; b < 64; ++b) {
    for (int k = 0; k < 512; ++k)
      x[static_cast<size_t>(b * 512 + k)] = std::sin(0.001 * (b * 512 + k + 1));
  }
  d.t.emplace_back(std::vector<int64_t>{64, 512}, x);
  const int dims[3][2] = {{512, 512}, {512, 512}, {512, 10}};
  for (int l = 1; l <= 3; ++l) {
    int in = dims[l - 1][0], out = dims[l - 1][1];
    std::vector<double> w(static_cast<size_t>(in * out)), b(static_cast<size_t>(out));
    for (int m = 0; m < in * out; ++m) w[static_cast<size_t>(m)] = 0.05 * std::cos(0.37 * m + l);
    for (int j = 0; j < out; ++j) b[static_cast<size_t>(j)] = 0.01 * std::sin(j + l);
    d.t.emplace_back(std::vector<int64_t>{in, out}, w);
    d.t.emplace_back(std::vector<int64_t>{out}, b);
  }
  return d;
}

inline Real Mlp(Tensor X, Tensor W1, Tensor b1, Tensor W2, Tensor b2, Tensor W3, Tensor b3) {
  IRT_FUNCTION(mlp, X, W1, b1, W2, b2, W3, b3);
  Tensor h1 = tanh(matmul(X, W1) + b1);
  Tensor h2 = tanh(matmul(h1, W2) + b2);
  return IRT_RETURN(sum(matmul(h2, W3) + b3));
}

inline double MlpPlain(const MlpData& d) {
  using M = Tensor::Matrix;
  M h = d.t[0].matrix();
  for (int l = 0; l < 3; ++l) {
    M z = h * d.t[1 + 2 * l].matrix();
    z.rowwise() += d.t[2 + 2 * l].matrix().row(0);
    h = l < 2 ? M(z.array().tanh()) : z;
  }
  return h.sum();
}

}  // namespace workloads

#endif  // IRT_BENCH_CPP_WORKLOADS_H_
