// Structural comparison of two traces. Nested calls are matched with nested
// calls; the children of two matched calls are aligned by (kind, location,
// operation) with Myers' O(ND) algorithm, run only where the two sequences
// stop agreeing, so that a loop that ran once more or a branch that went the
// other way shows as the inserted, deleted and changed nodes it really is.
// Both traces are walked once, forward, keeping one frame per open call on
// each side: memory does not grow with the traces' length, and alignment
// work is bounded by the size of the regions that differ.
#ifndef IRT_DIFF_H_
#define IRT_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "irt/output.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace irt {

enum class DiffFormat {
  kText,  // unified-diff-like hunks, call paths as headers, irt-print's node notation
  kStat,  // a summary only
  kJson,  // one JSON document
};

struct DiffOptions {
  DiffFormat format = DiffFormat::kText;
  /// Floating-point values (and tensor elements) a and b are equal when
  /// |a - b| <= atol + rtol * |b|, or when both are NaN. With both 0 (the
  /// default) values must be bit-for-bit equal.
  double rtol = 0;
  double atol = 0;
  /// Metadata keys neither compared nor shown (node and trace metadata).
  std::vector<std::string> ignore_meta;
  /// Unchanged children shown around each change (text).
  uint32_t context = 3;
  /// Tensors with more elements are abbreviated when printed (0: never).
  int64_t max_elements = 10;
  /// Names shown for the two traces.
  std::string name_a = "a", name_b = "b";
  /// Colour the text output (removed and added lines, headers).
  bool color = false;
  /// Alignment budget: edit distance explored, and children looked ahead on
  /// each side, before a differing region is reported as wholly replaced.
  uint32_t max_edits = 2000;
  uint32_t max_lookahead = 1u << 16;
};

/// The first place where the two executions took different paths.
struct DiffDivergence {
  std::string path_a, path_b;  // of the two diverging nodes, "@8/@6"
  std::string line_a, line_b;  // the two nodes in irt-print notation
  /// The branch condition that decided it, when either node is a Jump with
  /// a condition: its path on each side and its value in each trace (kNone
  /// if the other trace has no node at that location nearby).
  bool has_condition = false;
  std::string cond_path_a, cond_path_b;
  Value cond_a, cond_b;
};

struct DiffSummary {
  uint64_t nodes_a = 0, nodes_b = 0;
  std::string producer_a, producer_b;  // "name version"
  /// Nodes present in both traces (matched).
  uint64_t matched = 0;
  /// Matched nodes whose value differs.
  uint64_t changed_values = 0;
  /// Matched nodes whose operands differ (another literal, or a reference to
  /// a node of another statement).
  uint64_t changed_operands = 0;
  /// Matched nodes whose metadata differs (ignored keys left out).
  uint64_t changed_meta = 0;
  /// Trace-level metadata entries that differ.
  uint64_t changed_trace_meta = 0;
  /// Children present in one trace only, and the nodes they hold (a nested
  /// call counts its whole subtree).
  uint64_t only_a_children = 0, only_a_nodes = 0, only_a_calls = 0;
  uint64_t only_b_children = 0, only_b_nodes = 0, only_b_calls = 0;
  std::optional<DiffDivergence> divergence;
  /// Regions the aligner gave up on (reported as replaced wholesale).
  uint64_t unaligned_regions = 0;
  /// Largest absolute difference among changed floating-point values.
  double max_abs_diff = 0;

  bool same() const {
    return changed_values == 0 && changed_operands == 0 && changed_meta == 0 &&
           changed_trace_meta == 0 && only_a_children == 0 && only_b_children == 0;
  }
};

/// Compares `a` with `b` and writes the report in `options.format` to `out`
/// (the caller commits it). Returns the summary; summary.same() tells
/// whether they differ. Producers are reported but not compared. Errors:
/// those of reading either trace (kDataError, kIoError), kUsage
/// for bad options.
Result<DiffSummary> DiffTraces(const Trace& a, const Trace& b, const DiffOptions& options,
                               Output& out);

}  // namespace irt

#endif  // IRT_DIFF_H_
