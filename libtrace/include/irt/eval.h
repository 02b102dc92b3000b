// Evaluation of recorded primitive operations from their names alone: a
// table keyed by the op name a trace records ("+", "sin", "<", "^", "rand"),
// so that a trace can be re-evaluated (irt-replay) without the program or
// the adapter that produced it. The built-in table has the IR adapter's
// primitives with Julia's semantics; callers may extend a copy of it.
#ifndef IRT_EVAL_H_
#define IRT_EVAL_H_

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/status.h"
#include "irt/value.h"

namespace irt {

/// Computes a primitive's value from its argument values. Errors are values:
/// kRuntimeError with a Julia-style message ("DivideError: integer division
/// error", "MethodError: no method matching +(::String, ::Int64)").
using PrimitiveFn = std::function<Result<Value>(std::span<const Value> args)>;

struct PrimitiveEntry {
  PrimitiveFn fn;
  /// A random draw: its value cannot be recomputed, only kept (replay
  /// conditions on the recorded randomness). `fn` is unused.
  bool random = false;
};

/// Primitive operations by name. Copyable; lookups are by exact name.
class PrimitiveTable {
 public:
  /// An empty table.
  PrimitiveTable() = default;
  /// The built-in primitives, as the IR adapter evaluates them: + - * / ^
  /// div ÷ rem % (unary and binary -) < <= > >= == != & | ! xor ⊻ sin cos
  /// tan exp log sqrt abs tanh min max zero one, getindex (1-based; one index
  /// on a matrix is Julia's column-major linear index) and length, and the
  /// random draws rand and randn. Numbers promote along Bool < Int64 <
  /// Float32 < Float64; Int64 arithmetic wraps around; Int / Int is Float64;
  /// comparisons between integers and floats are exact. Elementwise
  /// primitives with a tensor operand, and names the table lacks but
  /// irt/kernels.h evaluates (matmul, transpose, sum, reshape...), go to
  /// irt::EvalPrimitive.
  static const PrimitiveTable& Builtins();

  /// Adds or replaces a primitive.
  void Register(std::string name, PrimitiveFn fn);
  /// Adds or replaces a random draw (never re-evaluated).
  void RegisterRandom(std::string name);

  /// The entry for `name`, or nullptr.
  const PrimitiveEntry* Find(std::string_view name) const;
  /// Whether Apply(name, args) with `arity` arguments evaluates something:
  /// an entry, or a tensor kernel of irt/kernels.h.
  bool Knows(std::string_view name, size_t arity) const;
  bool IsRandom(std::string_view name) const;
  /// Evaluates `name` on `args`. kUnsupported if there is no such primitive
  /// or it is a random draw; otherwise what the primitive returns.
  Result<Value> Apply(std::string_view name, std::span<const Value> args) const;
  /// All names, sorted.
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, PrimitiveEntry, std::less<>> entries_;
};

/// PrimitiveTable::Builtins().Apply(name, args).
Result<Value> ApplyPrimitive(std::string_view name, std::span<const Value> args);

}  // namespace irt

#endif  // IRT_EVAL_H_
