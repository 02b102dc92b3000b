// Derivatives from a stored trace: reverse mode (the adjoint of every
// active node, one sweep over the nodes in descending global order) and
// forward mode (tangents, one sweep in execution order), both driven by the
// rules of irt/rules.h; and the backward pass written out as a trace of
// primitive operations, or the primal trace written back with adjoints.
//
// What is differentiated: the root call's result with respect to the root
// call's arguments. Only floating-point values (Float64, Float32, and
// tensors of them) carry derivatives; a node is active when it is such a
// value and depends on a chosen argument. Jumps and their conditions carry
// none; block arguments, function arguments of nested calls and returns
// pass derivatives to what they reference; a nested call is differentiated
// through its body unless a rule names its function. A primitive that is
// active, reached by the adjoint and has no rule is an error naming it and
// the node, never a silent zero.
#ifndef IRT_GRAD_H_
#define IRT_GRAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "irt/output.h"
#include "irt/rules.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace irt {

enum class GradMode { kReverse, kForward };

struct GradOptions {
  GradMode mode = GradMode::kReverse;
  /// Positions in the root call (1-based, as printed: @2 is its first
  /// parameter) of the arguments to differentiate with respect to; empty
  /// means every argument (reverse mode).
  std::vector<uint32_t> wrt;
  /// Reverse mode: the adjoint of the result; required when the result is
  /// a tensor, 1 by default for a scalar result.
  std::optional<Value> seed;
  /// Forward mode: the tangent of each chosen argument, by position.
  std::vector<std::pair<uint32_t, Value>> tangents;
  /// Keep every node's adjoint for WriteAnnotated (reverse mode).
  bool keep_adjoints = false;
  /// Bytes of decoded node columns (format 2) that Differentiate's passes
  /// hold at once; 0 means 8 MiB. The passes decode a chunk again when
  /// they come back to it, and raise the bound themselves (up to 1 GiB)
  /// when the trace's references make them come back often.
  uint64_t column_budget = 0;
};

/// One argument of the root call and its derivative.
struct ArgumentDerivative {
  uint32_t pos = 0;  // 1-based position in the root call
  NodeId id = kNoNode;
  Location location;
  Value value;
  bool differentiable = false;  // a floating-point scalar or tensor
  bool chosen = false;          // asked for (--wrt, or a tangent in forward mode)
  Value derivative;             // reverse mode: the adjoint; forward: the tangent given
};

/// Wall-clock seconds of each phase and what was touched.
struct GradStats {
  double open_seconds = 0;      // filled in by the caller (Trace::Open)
  double activity_seconds = 0;  // the forward pass: checks, activity (and tangents)
  double sweep_seconds = 0;     // the reverse sweep
  double write_seconds = 0;     // --emit-trace / --annotate output
  uint64_t nodes = 0;
  uint64_t active_nodes = 0;  // nodes that hold an adjoint or tangent
  uint64_t rule_applications = 0;
};

struct GradResult {
  GradMode mode = GradMode::kReverse;
  std::string function;          // the root callee
  std::vector<Value> call_args;  // the root call's literal arguments
  Value result;                  // the root call's value
  Value seed;                    // reverse mode
  Value tangent;                 // forward mode: the directional derivative of the result
  std::vector<ArgumentDerivative> arguments;
  GradStats stats;
};

/// Differentiates the root result. Errors: kUsage (a bad --wrt position, a
/// misshapen seed or tangent), kInvalidArgument (no differentiable argument
/// or result), kNotFound (an active primitive without a rule, naming
/// the primitive and the node), kDataError (a trace that is malformed or
/// records a failed run), kInvalidArgument from a rule's primitive
/// (shapes), prefixed with the node.
Result<GradResult> Differentiate(const Trace& trace, const RuleSet& rules,
                                 const GradOptions& options);

struct GradPrintOptions {
  bool json = false;
  /// Tensors with more elements are abbreviated (0: never).
  int64_t max_elements = 10;
  /// In JSON, tensors with more elements are given by dtype and shape only
  /// ("data" is left out); 0 (the default) always writes all elements.
  int64_t json_max_elements = 0;
};

/// The derivatives as text (the root call, then one line per argument) or JSON.
Status PrintGradient(const GradResult& result, const GradPrintOptions& options, Output& out);

/// Reverse mode, then writes `trace` again, node for node, with each active
/// node's adjoint as metadata "adjoint" (on a nested call's marker too).
Result<GradResult> WriteAnnotated(const Trace& trace, const RuleSet& rules,
                                  const GradOptions& options, Output& out);

/// Reverse mode written as a trace: a root call "∇f" with the root's
/// arguments, the recomputed active primal (nested calls inlined, inactive
/// values as constants), then the adjoint computation in primitives, each
/// adjoint node with metadata adjoint_of = "@k" naming the primal node
/// (position k of this trace's root) whose adjoint it computes; the root
/// returns the gradient (a tuple when several arguments are chosen).
/// Differentiating that trace gives second derivatives.
Result<GradResult> EmitGradientTrace(const Trace& trace, const RuleSet& rules,
                                     const GradOptions& options, Output& out);

}  // namespace irt

#endif  // IRT_GRAD_H_
