// The binary64 matrix product compiled for AVX2 and FMA (this file alone is
// built with -mavx2 -mfma on x86-64; see libtrace/CMakeLists.txt), used by
// the kernels when the processor has both and not AVX-512 (chosen in
// ops/matmul.cc, by code built for the baseline).
#include "ops/kernels_internal.h"

#if defined(__AVX2__) && defined(__FMA__)
#define IRT_GEMM_ENABLED
#define Eigen IrtEigenAvx2
#include <Eigen/Core>
#endif

#define IRT_GEMM_NAME GemmF64Avx2
#include "ops/gemm_isa.inc"
