// Evaluation of primitive operations on values: the scalar arithmetic and
// mathematical functions with Julia's promotion rules, and dense tensor
// operations (broadcasting elementwise arithmetic, matmul, transpose,
// reductions, reshape, construction, indexing) computed with Eigen. The
// derivative rules are written in these primitives, so irt-grad evaluates
// them here; an adapter may use them for its own tensor primitives.
//
// Conventions: tensors are row-major; elementwise operations broadcast as
// NumPy does (trailing dimensions aligned, size-1 dimensions stretched); a
// scalar combined with a Float32 tensor takes the tensor's element type;
// dimensions and indices are 1-based (`sum(x, 1)` sums over the first
// dimension and keeps it with size 1, `getindex(v, 1)` is the first element,
// a single index into a matrix is Julia's column-major linear index);
// floating-point domain errors give NaN, as IEEE arithmetic does.
#ifndef IRT_KERNELS_H_
#define IRT_KERNELS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/status.h"
#include "irt/value.h"

namespace irt {

/// Evaluates primitive `op` on `args`. Errors: kNotFound when no primitive
/// `op` takes that many arguments, kInvalidArgument when the arguments'
/// types or shapes do not fit ("matmul: inner dimensions 3 and 4 differ").
Result<Value> EvalPrimitive(std::string_view op, std::span<const Value> args);

/// Whether EvalPrimitive knows `op` with `arity` arguments.
bool HasKernel(std::string_view op, size_t arity);

/// The names of all primitives EvalPrimitive evaluates, sorted.
std::vector<std::string> KernelNames();

}  // namespace irt

#endif  // IRT_KERNELS_H_
