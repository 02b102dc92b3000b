// The benchmark workloads W1-W4 written once as templates over the scalar
// type, so that a peer AD tool runs them op for op as bench/ir/*.ir does.
// Definitions, data and reference figures: bench/README.md.
#ifndef IRT_BENCH_PEERS_WORKLOADS_H_
#define IRT_BENCH_PEERS_WORKLOADS_H_

#include <cmath>
#include <cstddef>
#include <vector>

namespace irt::bench {

// W1 "powsum": h(x, n) = sum of x^i for i = 0 .. n-1, a while loop.
inline constexpr double kPowsumX = 0.999999;
inline constexpr long kPowsumN = 1000000;

template <class T>
T Powsum(const T& x, long n) {
  using std::pow;
  T sum = 0.0;
  for (long i = 0; i < n; ++i) sum += pow(x, static_cast<double>(i));
  return sum;
}

// W2 "rosenbrock": sum over i of 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2.
inline constexpr long kRosenN = 1000000;
inline double RosenX(long i) { return 0.5 + 0.001 * static_cast<double>(i % 100); }

template <class T>
T Rosenbrock(const T* x, long n) {
  T sum = 0.0;
  for (long i = 0; i + 1 < n; ++i) {
    T a = x[i + 1] - x[i] * x[i];
    T b = 1.0 - x[i];
    sum += 100.0 * (a * a) + b * b;
  }
  return sum;
}

// W3 "recursion": g(x, 0) = sin(x); g(x, d) = g(1.0001 x + 0.5 cos(x), d - 1) + x.
// The recursion is real (one C++ call per level), as in bench/ir/w3_recursion.ir.
inline constexpr double kRecursionX = 0.5;
inline constexpr long kRecursionD = 30000;

template <class T>
T Recursion(const T& x, long d) {
  using std::cos;
  using std::sin;
  if (d == 0) return sin(x);
  return Recursion<T>(1.0001 * x + 0.5 * cos(x), d - 1) + x;
}

// W4 "mlp": loss = sum(tanh(tanh(X W1 + b1) W2 + b2) W3 + b3), float64,
// batch 64, widths 512 -> 512 -> 512 -> 10. The W matrices are in x out,
// row-major; the parameter vector is W1, b1, W2, b2, W3, b3.
inline constexpr int kBatch = 64;
inline constexpr int kWidth[4] = {512, 512, 512, 10};

inline std::vector<double> MlpInput() {
  std::vector<double> x(static_cast<size_t>(kBatch) * kWidth[0]);
  for (size_t m = 0; m < x.size(); ++m) x[m] = std::sin(0.001 * static_cast<double>(m + 1));
  return x;
}

inline std::vector<double> MlpParameters() {
  std::vector<double> p;
  for (int layer = 1; layer <= 3; ++layer) {
    const long in = kWidth[layer - 1], out = kWidth[layer];
    for (long m = 0; m < in * out; ++m) p.push_back(0.05 * std::cos(0.37 * m + layer));
    for (long j = 0; j < out; ++j) p.push_back(0.01 * std::sin(static_cast<double>(j + layer)));
  }
  return p;
}

// The MLP at scalar level: one scalar op per multiply-add.
template <class T>
T Mlp(const double* x, const T* p) {
  using std::tanh;
  std::vector<T> in, out;
  long offset = 0;
  for (int layer = 1; layer <= 3; ++layer) {
    const long n_in = kWidth[layer - 1], n_out = kWidth[layer];
    const T* w = p + offset;
    const T* b = w + n_in * n_out;
    offset += n_in * n_out + n_out;
    out.assign(static_cast<size_t>(kBatch) * n_out, T(0.0));
    for (long r = 0; r < kBatch; ++r)
      for (long j = 0; j < n_out; ++j) {
        T acc = b[j];
        for (long k = 0; k < n_in; ++k) {
          if (layer == 1)
            acc += x[r * n_in + k] * w[k * n_out + j];
          else
            acc += in[r * n_in + k] * w[k * n_out + j];
        }
        out[r * n_out + j] = layer < 3 ? T(tanh(acc)) : acc;
      }
    in.swap(out);
  }
  T loss = 0.0;
  for (const T& z : in) loss += z;
  return loss;
}

}  // namespace irt::bench

#endif  // IRT_BENCH_PEERS_WORKLOADS_H_
