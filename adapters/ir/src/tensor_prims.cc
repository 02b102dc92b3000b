// Tensor primitives of the IR adapter: matmul, transpose, reductions,
// reshape, construction and sizes, and the elementwise primitives (+ - * /
// ^, unary -, sin, cos, tan, exp, log, sqrt, abs, tanh, min, max) when an
// operand is a tensor. They are evaluated by libtrace's kernels
// (irt/kernels.h, Eigen), the same code that evaluates the derivative rules,
// so a trace and its emitted backward pass compute alike.
#include "irt/kernels.h"
#include "primitives.h"

namespace irt::ir {

bool IsElementwise(Prim p) {
  switch (p) {
    case Prim::kAdd:
    case Prim::kSub:
    case Prim::kMul:
    case Prim::kDiv:
    case Prim::kPow:
    case Prim::kNeg:
    case Prim::kSin:
    case Prim::kCos:
    case Prim::kTan:
    case Prim::kExp:
    case Prim::kLog:
    case Prim::kSqrt:
    case Prim::kAbs:
    case Prim::kTanh:
    case Prim::kMin:
    case Prim::kMax:
      return true;
    default:
      return false;
  }
}

bool EvalKernel(std::string_view name, const Value* const* args, size_t n, Value* out,
                std::string* error) {
  std::vector<Value> a;
  a.reserve(n);
  for (size_t i = 0; i < n; ++i) a.push_back(*args[i]);
  Result<Value> r = EvalPrimitive(name, a);
  if (r.ok()) {
    *out = std::move(r).value();
    return true;
  }
  if (r.error().code() == Code::kNotFound) {
    *error = NoMethodMessage(name, args, n);
  } else if (r.error().code() == Code::kIoError) {
    *error = "OutOfMemoryError: " + r.error().message();
  } else {
    const std::string& m = r.error().message();
    bool shapes = m.find("dimension") != std::string::npos ||
                  m.find("shape") != std::string::npos ||
                  m.find("broadcast") != std::string::npos ||
                  m.find("reduce") != std::string::npos || m.find("reshape") != std::string::npos;
    *error = (shapes ? "DimensionMismatch: " : "ArgumentError: ") + m;
  }
  return false;
}

}  // namespace irt::ir
