// Built-in primitives with Julia's semantics on irt::Value scalars. Internal
// to the IR adapter; the interpreter calls EvalPrim in its hot loop.
#ifndef IRT_IR_SRC_PRIMITIVES_H_
#define IRT_IR_SRC_PRIMITIVES_H_

#include <string>

#include "irt/ir/interpreter.h"
#include "irt/ir/module.h"
#include "irt/value.h"

namespace irt::ir {

/// Evaluates `p` on `args` (as many as the primitive takes). On failure
/// returns false and sets `*error` to a Julia-style message
/// ("DivideError: integer division error").
bool EvalPrim(Prim p, const Value* const* args, RandomSource& random, Value* out,
              std::string* error);

/// "MethodError: no method matching name(::T1, ::T2)".
std::string NoMethodMessage(std::string_view name, const Value* const* args, size_t n);

}  // namespace irt::ir

#endif  // IRT_IR_SRC_PRIMITIVES_H_
