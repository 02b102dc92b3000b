// The call tree and IRTracker's graph API over a Trace: a call's children,
// parents, paths like "@8/@4", and the dependency queries referenced,
// backward, dependents and forward within one call. Nothing here recurses
// on trace data, and listing a call's children costs time proportional to
// the children, not to the nodes of their bodies.
#ifndef IRT_GRAPH_H_
#define IRT_GRAPH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "irt/status.h"
#include "irt/trace.h"

namespace irt {

/// A child of a call: one node, or a nested call from its marker to the
/// Return/Error that closes it (end == kNoNode while it never closed).
struct Child {
  NodeId id = kNoNode;
  NodeId end = kNoNode;  // == id for nodes that are not calls
  bool is_call() const { return end != id; }
};

/// The root call of a trace: its marker and its closing node (kNoNode if the
/// trace is partial and the root never closed).
Result<Child> RootCall(const Trace& trace);

/// The children of `call` in execution order. When the call is closed this
/// walks back from its end, hopping over nested bodies; otherwise it scans
/// forward from the marker.
Result<std::vector<Child>> Children(const Trace& trace, const Child& call);

/// The positions of a node path: "@8/@4" gives {8, 4}; "" or "@" (the root)
/// gives none. kUsage for anything else ("@0", "8x", "@8/").
Result<std::vector<uint64_t>> ParseNodePath(std::string_view path);

/// Resolves "@8/@4" (1-based positions, from the root). "" or "@" is the root.
/// kUsage for a malformed path or a step below a node that is not a call;
/// kNotFound when a call has fewer children than the path asks.
Result<Child> ResolvePath(const Trace& trace, std::string_view path);

/// A stretch of a call's body: either one nested call (from its marker to
/// its closing node) or a run of consecutive plain nodes.
struct Segment {
  NodeId first = 0;
  NodeId last = 0;
  bool call = false;
  uint64_t children() const { return call ? 1 : last - first + 1; }
};

/// The segments of `call`'s body in execution order, found by walking back
/// from its end (or forward from its marker while it is unfinished). Memory
/// is proportional to the number of nested calls, not to the body's length;
/// on a trace read with transient columns, the walk gives back the decoded
/// chunks it leaves (Trace::ReleaseColumns).
Result<std::vector<Segment>> BodySegments(const Trace& trace, const Child& call);

/// One call's body with its local numbering, for IRTracker's queries.
/// Positions are 0-based here (printed as @1, @2, ...).
class CallBody {
 public:
  static Result<CallBody> Load(const Trace& trace, const Child& call);
  size_t size() const { return size_; }
  /// The child at `pos` (O(log segments)).
  Child operator[](size_t pos) const;
  const Child& call() const { return call_; }
  const std::vector<Segment>& segments() const { return segments_; }
  /// Position of the first child of segment `i`.
  uint64_t segment_start(size_t i) const { return starts_[i]; }
  /// The position of a node of this body, or of the nested call a Return or
  /// Error of this body's nested calls closes; -1 if not in this body.
  int64_t PositionOf(NodeId id) const;

  /// Direct references of the child at `pos` to earlier children, in operand
  /// order, without duplicates; constants and references that leave the call
  /// (function arguments) are left out.
  Result<std::vector<size_t>> Referenced(size_t pos) const;
  /// The same numbered by argument position, IRTracker style: for calls the
  /// function itself is 1 and the first argument 2; otherwise operands count from 1.
  Result<std::vector<std::pair<int, size_t>>> ReferencedNumbered(size_t pos) const;
  /// Transitive Referenced, in descending position.
  Result<std::vector<size_t>> Backward(size_t pos) const;
  /// Children that reference `pos` directly, in ascending position.
  Result<std::vector<size_t>> Dependents(size_t pos) const;
  /// Transitive Dependents, in ascending position.
  Result<std::vector<size_t>> Forward(size_t pos) const;

 private:
  const Trace* trace_ = nullptr;
  Child call_;
  std::vector<Segment> segments_;
  std::vector<uint64_t> starts_;  // first position of each segment
  uint64_t size_ = 0;
};

/// The parent call of a node (the marker of the innermost call that
/// contains it), found by walking back; kNoNode for the root marker.
Result<NodeId> Parent(const Trace& trace, NodeId id);

}  // namespace irt

#endif  // IRT_GRAPH_H_
