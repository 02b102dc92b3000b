// Evaluation of recorded primitive operations from their names alone, so
// that a trace can be re-evaluated (irt-replay) without the program or the
// adapter that produced it: the standard operation set (irt/ops.h), which a
// caller may extend or override for the operations its adapter records.
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

/// Primitive operations by name: the standard operation set (irt/ops.h)
/// with additions and replacements registered by the caller. Copyable;
/// lookups are by exact name.
class PrimitiveTable {
 public:
  /// The standard operation set alone.
  PrimitiveTable() = default;
  /// A shared empty table: the standard operation set alone.
  static const PrimitiveTable& Builtins();

  /// Adds or replaces a primitive.
  void Register(std::string name, PrimitiveFn fn);
  /// Adds or replaces a random draw (never re-evaluated).
  void RegisterRandom(std::string name);

  /// The registered entry for `name` (not a standard operation), or nullptr.
  const PrimitiveEntry* Find(std::string_view name) const;
  /// Whether Apply(name, args) with `arity` arguments evaluates something:
  /// a registered entry, or a standard operation taking `arity` arguments.
  bool Knows(std::string_view name, size_t arity) const;
  bool IsRandom(std::string_view name) const;
  /// Evaluates `name` on `args`: the registered entry, else the standard
  /// operation. kUnsupported if there is neither or it is a random draw;
  /// otherwise what the operation returns.
  Result<Value> Apply(std::string_view name, std::span<const Value> args) const;
  /// All names, standard and registered, sorted.
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, PrimitiveEntry, std::less<>> entries_;
};

/// PrimitiveTable::Builtins().Apply(name, args).
Result<Value> ApplyPrimitive(std::string_view name, std::span<const Value> args);

}  // namespace irt

#endif  // IRT_EVAL_H_
