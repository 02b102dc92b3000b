// Internal: kernel entry points used by the derivative programs but not
// primitives of their own.
#ifndef IRT_SRC_KERNELS_INTERNAL_H_
#define IRT_SRC_KERNELS_INTERNAL_H_

#include <cstdint>

#include "irt/status.h"
#include "irt/value.h"

namespace irt::internal {

/// matmul(ta ? transpose(a) : a, tb ? transpose(b) : b) without forming the
/// transposes (Eigen multiplies transposed views). Operands that are not
/// matrices are transposed as the primitive would (a vector becomes 1×n).
Result<Value> MatmulTransposed(const Value& a, bool ta, const Value& b, bool tb);

/// C (m×n) += op(A) op(B) for row-major binary64 matrices A (ar×ac) and B
/// (br×bc), op transposing when asked, with the fastest instruction set
/// this build has and the processor supports (AVX-512, then AVX2 with
/// FMA). Returns false when there is none: the caller multiplies with the
/// baseline build.
bool GemmF64Isa(const double* a, int64_t ar, int64_t ac, bool ta, const double* b, int64_t br,
                int64_t bc, bool tb, double* c, int64_t m, int64_t n);

/// GemmF64Isa's builds (gemm_avx2.cc, gemm_avx512.cc): false when this build
/// has no such code; call one only when the processor has its instructions.
bool GemmF64Avx2(const double* a, int64_t ar, int64_t ac, bool ta, const double* b, int64_t br,
                 int64_t bc, bool tb, double* c, int64_t m, int64_t n);
bool GemmF64Avx512(const double* a, int64_t ar, int64_t ac, bool ta, const double* b, int64_t br,
                   int64_t bc, bool tb, double* c, int64_t m, int64_t n);

}  // namespace irt::internal

#endif  // IRT_SRC_KERNELS_INTERNAL_H_
