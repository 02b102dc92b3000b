// Dynamic slices of a trace: the nodes a value depends on (backward) or
// that depend on a node (forward), over data dependences, optionally across
// call boundaries and with control dependences, computed in one pass over
// the global node order with explicit stacks (never recursion), and written
// out either as a trace in the same format or as a listing.
//
// Semantics (the contract the golden tests pin down):
//
//  * Data dependences are the references the trace records, read the way
//    IRTracker's `referenced` reads them: an operand reference, a block
//    argument's reference to the jump that passed it, a jump's references to
//    its block arguments and its condition, a return's reference to the
//    returned value. Without `through_calls` the slice stays in the call
//    holding the start node, a nested call counts as one node whose
//    references are its arguments (so a backward slice equals
//    CallBody::Backward plus the start, a forward slice CallBody::Forward
//    plus the start).
//  * With `through_calls`, a use of a call's result leads into the callee's
//    return and on through its body, and a callee's argument leads out to
//    the caller's operand; a nested call's marker is never a dependence in
//    itself. A start that is a nested call (or the root) starts at its
//    closing node, the call's result.
//  * With `control`, a node also depends on the branches that decided that
//    its block ran: every jump taken earlier in its call (the chain of
//    blocks that led to it) with the condition that decided it, and, for a
//    jump or return at branch position &k > 1, the conditions of the
//    branches &1..&k-1 of its block, which were evaluated and not taken
//    (found in the callee's control-flow facts). With `through_calls` as well, a
//    call's body depends on the branches that led to its call site, up to
//    the root. Forward, everything a selected condition decided is
//    selected: once a jump's decision depends on the slice, the rest of its
//    call (nested calls included) is too. All of this applies transitively.
//  * A jump has no value: slicing from one is an error unless `control` is
//    set, in which case the slice is what decided the branch (backward) or
//    what it decided (forward).
#ifndef IRT_SLICE_H_
#define IRT_SLICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "irt/graph.h"
#include "irt/output.h"
#include "irt/print.h"
#include "irt/status.h"
#include "irt/trace.h"

namespace irt {

enum class SliceDirection : uint8_t { kBackward, kForward };

struct SliceOptions {
  SliceDirection direction = SliceDirection::kBackward;
  /// Follow dependences into callees (through their returns and arguments)
  /// and out to callers, at any depth.
  bool through_calls = false;
  /// Add control dependences (see the file comment).
  bool control = false;
};

/// "backward @26 --through-calls --control": how a slice was asked for.
std::string DescribeSlice(std::string_view path, const SliceOptions& opts);

/// A computed slice. Node sets are bitmaps over the trace's global order
/// whose pages are only touched where the slice went, so memory follows the
/// part of the trace the slice visited.
class Slice {
 public:
  Slice();
  Slice(Slice&&) noexcept;
  Slice& operator=(Slice&&) noexcept;
  ~Slice();

  /// Whether node `id` is selected. A nested call selected as one node
  /// (without through_calls) is represented by its closing node.
  bool Contains(NodeId id) const;
  /// Whether the call opened by marker `id` (or closed by node `id`) holds
  /// selected nodes, so that it is kept as context.
  bool IsContext(NodeId id) const;
  /// Number of selected nodes.
  uint64_t size() const;
  /// The first selected node >= `from`, or kNoNode.
  NodeId NextSelected(NodeId from) const;
  /// The node the slice started from (the closing node for calls).
  NodeId start() const;
  const SliceOptions& options() const;
  /// The path it was asked for, and DescribeSlice of it.
  const std::string& path() const;
  std::string description() const;
  /// What the slice may lack: with `control`, one line per function whose
  /// control-flow facts the trace does not carry (schema/README.md §7.1),
  /// so that the conditions of its branches not taken are unknown (the
  /// slice keeps only the jumps taken).
  const std::vector<std::string>& warnings() const;

  struct Impl;  // opaque; defined in slice.cc

 private:
  friend Result<Slice> ComputeSlice(const Trace&, std::string_view, const SliceOptions&);
  friend Status WriteSliceTrace(const Trace&, const Slice&, Output&);
  friend Status PrintSliceList(const Trace&, const Slice&, const PrintOptions&, Output&);
  std::unique_ptr<Impl> impl_;
};

/// Computes the slice from the node at `path` ("@8/@4", as irt-print --node
/// takes it). Errors: kUsage for a malformed path or a jump
/// without `control`, kNotFound for a position out of range, kDataError for
/// a malformed trace (with the chunk and node).
Result<Slice> ComputeSlice(const Trace& trace, std::string_view path, const SliceOptions& opts);

/// Writes the slice as a trace in the same format through TraceWriter:
///  * the root call and every call holding a selected node are kept (their
///    markers and closing nodes, "context"), with their arguments;
///  * selected nodes keep their kind, location, operands and metadata;
///  * a nested call selected as one node (without through_calls) becomes a
///    Primitive node of the callee with the call's arguments and result;
///  * a node outside the slice that a kept node references (an "input") is
///    kept as a Constant with its recorded value and location (a function
///    argument stays an Argument; the result of a call left out becomes a
///    Constant at the call's place, with the call's location);
///  * a selected block argument whose jump is left out loses its reference;
///  * trace metadata is copied, plus `slice` = DescribeSlice(...).
/// Nodes are renumbered; the output passes irt-check.
Status WriteSliceTrace(const Trace& trace, const Slice& slice, Output& out);

/// The branches a trace does not record: a jump or return at branch position
/// &k > 1 of its block was reached because branches &1..&k-1 were evaluated
/// and not taken. This reads their conditions from the control-flow facts
/// the trace carries for each function (cached per function).
class BranchConditions {
 public:
  explicit BranchConditions(const Trace& trace);
  ~BranchConditions();
  /// SSA ids of the conditions of branches &1..&k-1 of `block`, in the
  /// function called at `marker` (the call holding the branch); empty when
  /// the trace has no control-flow facts for that function or the branches
  /// have no condition.
  std::vector<uint32_t> NotTaken(NodeId marker, uint32_t block, uint32_t k);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Lists the slice in irt-print's text format with the original positions:
/// the root call's line, then every selected node under the lines of the
/// calls that hold it, indented by depth.
Status PrintSliceList(const Trace& trace, const Slice& slice, const PrintOptions& opts,
                      Output& out);

}  // namespace irt

#endif  // IRT_SLICE_H_
