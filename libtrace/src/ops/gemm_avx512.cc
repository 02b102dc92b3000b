// The binary64 matrix product compiled for AVX-512 (F, DQ, VL; this file
// alone is built with those flags on x86-64; see libtrace/CMakeLists.txt),
// used by the kernels when the processor has them (chosen in ops/matmul.cc,
// by code built for the baseline). Eigen's 8-wide kernels multiply W4's
// 512×512 products about 1.5 times as fast as its AVX2 ones.
#include "ops/kernels_internal.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__FMA__)
#define IRT_GEMM_ENABLED
#define Eigen IrtEigenAvx512
#include <Eigen/Core>
#endif

#define IRT_GEMM_NAME GemmF64Avx512
#include "ops/gemm_isa.inc"
