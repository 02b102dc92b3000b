// The binary64 matrix product compiled for AVX2 and FMA (this file alone is
// built with -mavx2 -mfma on x86-64; see libtrace/CMakeLists.txt), used by
// the kernels when the processor has both (checked in ops/matmul.cc, by code
// built for the baseline). Its Eigen lives in a namespace of its own, so no
// inline function or template instance is shared with the baseline build.
#include "ops/kernels_internal.h"

#if defined(__AVX2__) && defined(__FMA__)
#define Eigen IrtEigenAvx2
#include <Eigen/Core>
#endif

namespace irt::internal {

bool GemmF64Avx2(const double* a, int64_t ar, int64_t ac, bool ta, const double* b, int64_t br,
                 int64_t bc, bool tb, double* c, int64_t m, int64_t n) {
#if defined(__AVX2__) && defined(__FMA__)
  using M = IrtEigenAvx2::Matrix<double, IrtEigenAvx2::Dynamic, IrtEigenAvx2::Dynamic,
                                 IrtEigenAvx2::RowMajor>;
  IrtEigenAvx2::Map<const M> A(a, ar, ac), B(b, br, bc);
  IrtEigenAvx2::Map<M> C(c, m, n);
  if (!ta && !tb) {
    C.noalias() = A * B;
  } else if (ta && !tb) {
    C.noalias() = A.transpose() * B;
  } else if (!ta && tb) {
    C.noalias() = A * B.transpose();
  } else {
    C.noalias() = A.transpose() * B.transpose();
  }
  return true;
#else
  (void)a, (void)ar, (void)ac, (void)ta, (void)b, (void)br, (void)bc, (void)tb, (void)c, (void)m,
      (void)n;
  return false;
#endif
}

}  // namespace irt::internal
