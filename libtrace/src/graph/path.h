// Internal: the one resolver of node paths ("@8/@4", 1-based positions from
// the root) behind irt::ResolvePath, irt-slice's start and irt-replay's
// --set, so that every tool reports a bad path with the same words: a
// malformed path or a step into a node that is not a call is a usage error
// (kUsage), a well-formed path that names no node of the trace is kNotFound.
#ifndef IRT_SRC_GRAPH_PATH_H_
#define IRT_SRC_GRAPH_PATH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "irt/graph.h"
#include "irt/status.h"
#include "irt/trace.h"

namespace irt::internal {

/// How LocatePath finds a child of a call.
enum class PathWalk {
  /// Loads each call's body on the way (CallBody): the ends of the calls are
  /// known and the body holding the node is kept. Costs the body's length.
  kBodies,
  /// Scans forward from each call's marker over node kinds: costs the nodes
  /// before the child, however long the body. The ends of nested calls are
  /// not looked up (Child::end is kNoNode for them) and no body is kept.
  kScan,
  /// The nodes and ends kBodies finds, without a body: each child is found
  /// by two walks at once, forward from the call's marker (as kScan) and
  /// back from its end (as CallBody, hopping over nested bodies), and a
  /// call's end the same way (forward over its body, back over the
  /// siblings after it). The first walk to finish answers, so each step
  /// costs at most twice the cheaper walk: a node near either end of a
  /// long body is found without reading the body.
  kEnds,
};

/// A node path resolved.
struct NodePath {
  /// The calls from the root down to the one whose body holds `node`;
  /// chain[0] is the root (and `node` itself for "" and "@").
  std::vector<Child> chain;
  Child node;
  /// `node`'s 0-based position in chain.back()'s body; -1 for the root.
  int64_t pos = -1;
  /// chain.back()'s body (PathWalk::kBodies only, and not for the root).
  std::optional<CallBody> body;
};

/// Resolves `path` ("" or "@" is the root). Errors: kUsage for a malformed
/// path or a step below a node that is not a call ("bad node path '@4/@2':
/// @4 is not a nested call"); kNotFound when a call has fewer children than
/// the path asks ("node path '@30': the root call has 26 children, no @30");
/// kDataError from RootCall.
Result<NodePath> LocatePath(const Trace& trace, std::string_view path, PathWalk walk);

/// The errors of a closed call's body walked back from its end (CallBody,
/// LocatePath): a closer whose link is not to a call marker of the body,
/// and a call marker met at the body's own level.
Status BadLink(const Trace& t, NodeId at, NodeId marker);
Status UnclosedInParent(const Trace& t, NodeId at);

/// The path of node `id` ("@8/@6": its position and those of the calls
/// that hold it; "@" for the root), found by walking back over node kinds.
Result<std::string> PathOf(const Trace& trace, NodeId id);

}  // namespace irt::internal

#endif  // IRT_SRC_GRAPH_PATH_H_
