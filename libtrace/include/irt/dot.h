// Graphviz DOT for a trace, built with libcgraph: one node per trace node
// (its line in irt-print's format: position, location, operation, value),
// data edges from every reference, control edges for jumps, and each
// expanded nested call as a cluster labelled with the call, its location and
// its value. Rendering walks the call tree top-down with an explicit stack
// and touches only the calls it draws, so a few levels of a huge trace cost
// little; it refuses to build a graph larger than a limit (Graphviz layout
// stalls around 5,000 nodes). Output is deterministic: nodes are named after
// their global ids and created in execution order.
#ifndef IRT_DOT_H_
#define IRT_DOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "irt/output.h"
#include "irt/status.h"
#include "irt/trace.h"

namespace irt {

// Only highlighted through a pointer: a caller that computes a slice
// includes irt/slice.h itself.
class Slice;

/// The most nodes irt-dot draws unless told otherwise.
inline constexpr uint64_t kDefaultDotMaxNodes = 2000;

struct DotOptions {
  /// Levels drawn: 1 is the call itself as one node, 2 adds its children
  /// (nested calls as single nodes), ... 0 draws everything.
  uint32_t levels = 0;
  /// Path of the subtree to draw ("@8/@4"); empty draws the root call.
  std::string node_path;
  /// Refuse graphs with more nodes than this (0: no limit).
  uint64_t max_nodes = kDefaultDotMaxNodes;
  /// Metadata keys shown under node labels; "*" shows all.
  std::vector<std::string> show_meta;
  /// Nodes of this slice (and the calls holding them) are highlighted.
  const Slice* highlight = nullptr;
  /// Tensors with more elements are abbreviated in labels.
  int64_t max_elements = 6;
};

/// Writes the DOT text of the trace (or of the subtree at opts.node_path).
/// Errors: kUsage for a bad path or a graph over opts.max_nodes
/// (the message names the options that draw less), kNotFound for a position
/// out of range, kDataError for a malformed trace.
Status WriteDot(const Trace& trace, const DotOptions& opts, Output& out);

}  // namespace irt

#endif  // IRT_DOT_H_
