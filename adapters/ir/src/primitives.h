// Built-in primitives with Julia's semantics on irt::Value scalars. Internal
// to the IR adapter; the interpreter calls EvalPrim in its hot loop.
#ifndef IRT_IR_SRC_PRIMITIVES_H_
#define IRT_IR_SRC_PRIMITIVES_H_

#include <string>

#include "irt/ir/interpreter.h"
#include "irt/ir/module.h"
#include "irt/value.h"

namespace irt::ir {

/// Evaluates `p` on `args[0, n)`; args[0] and args[1] are valid pointers even
/// when n is smaller. On failure
/// returns false and sets `*error` to a Julia-style message
/// ("DivideError: integer division error").
bool EvalPrim(Prim p, const Value* const* args, size_t n, RandomSource& random, Value* out,
              std::string* error);

/// Evaluates the tensor primitive `name` (matmul, transpose, sum, ...) or an
/// elementwise primitive with a tensor operand, with libtrace's kernels
/// (NumPy broadcasting, row-major storage, 1-based dimensions). Errors as
/// EvalPrim's ("DimensionMismatch: ...", "MethodError: ..."). tensor_prims.cc.
bool EvalKernel(std::string_view name, const Value* const* args, size_t n, Value* out,
                std::string* error);
/// Whether `p` applies elementwise to tensors (EvalPrim hands those to EvalKernel).
bool IsElementwise(Prim p);

/// "MethodError: no method matching name(::T1, ::T2)".
std::string NoMethodMessage(std::string_view name, const Value* const* args, size_t n);

}  // namespace irt::ir

#endif  // IRT_IR_SRC_PRIMITIVES_H_
