// Internal: the one reader of control-flow facts. Control dependences
// (slice.cc, and irt-dot through BranchConditions) and replay's check of the
// branches not taken (replay.cc) ask it for a function's blocks and
// branches. Facts come from the `blocks`/`branches` fields of a FunctionIR
// entry (format 1.1); a chunk of format 1.0, which has only the IR text, has
// them derived once here from that text (ParseControlFlowText, the only
// place that reads branch syntax). The checker (chunk.cc) and the writer
// apply the rules of BranchRules.
#ifndef IRT_SRC_CONTROL_FLOW_H_
#define IRT_SRC_CONTROL_FLOW_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/control_flow.h"
#include "irt/trace.h"
#include "irtrace_generated.h"

namespace irt::internal {

/// The rules valid facts follow, one branch at a time in order (no
/// recursion, no allocation): Next returns "" or what is wrong with branch
/// `i`, worded for an error message.
class BranchRules {
 public:
  /// "" when `blocks` and `n` branches are within bounds.
  static std::string CheckCounts(uint32_t blocks, uint64_t n);
  explicit BranchRules(uint32_t blocks) : blocks_(blocks) {}
  std::string Next(uint64_t i, const BranchFact& b);

 private:
  uint32_t blocks_;
  uint32_t prev_block_ = 0, prev_pos_ = 0;
};

/// The fields of a schema Branch, and the check of its flags byte.
BranchFact DecodeBranch(const fb::Branch& b);
/// "" or what is wrong with the flags byte of a schema Branch.
std::string CheckBranchFlags(const fb::Branch& b);
uint8_t EncodeBranchFlags(const BranchFact& b);

/// Facts derived from a 1.0 file's IR text in the IRTools syntax the IR
/// adapter records (`N:` opens block N; `br T`, `br T (args)`, `br T unless
/// %c` and `return ...` are the branches of the block, in order). Lines it
/// does not recognise are skipped; block numbers above
/// kMaxControlFlowBlocks are ignored. Always valid facts (blocks >= 1).
ControlFlow ParseControlFlowText(std::string_view ir);

/// The facts of one FunctionIR entry of a verified chunk: its fields when it
/// has them; in a chunk of format 1.0 without them, derived from its IR
/// text; nullopt when it has neither.
std::optional<ControlFlow> FactsOfEntry(const fb::Chunk* chunk, const fb::FunctionIR* f);

/// A function's facts, indexed for the questions analyses ask.
class FunctionFlow {
 public:
  explicit FunctionFlow(ControlFlow facts);
  const ControlFlow& facts() const { return facts_; }
  /// The branches and returns of block `b`, in position order.
  std::span<const BranchFact> Block(uint32_t b) const;
  /// Whether SSA id `ssa` is the condition of some branch of the function.
  bool IsCondition(uint32_t ssa) const;
  /// Calls f(branch) for each conditional branch of `block` at a position
  /// before `k` whose condition is an SSA value: the branches evaluated and
  /// not taken before the one at &k was.
  template <typename F>
  void NotTaken(uint32_t block, uint32_t k, F&& f) const {
    for (const BranchFact& b : Block(block)) {
      if (b.pos >= k) break;
      if (b.conditional && b.condition != 0) f(b);
    }
  }

 private:
  ControlFlow facts_;
  std::vector<uint32_t> conds_;  // sorted, unique
};

/// The facts of every function of a trace, found on first use and cached
/// by name.
class ControlFlowIndex {
 public:
  explicit ControlFlowIndex(const Trace& trace) : t_(trace) {}
  /// The facts of function `fn`, called at `marker`, looked up in the chunk
  /// holding the marker first, then in earlier chunks. nullptr when the
  /// trace has none for it; the first such lookup sets `*missing` to what is
  /// missing ("no control-flow facts for 'f'", or "no IR text for 'f'" in a
  /// file of format 1.0), later ones leave it empty, so that callers warn
  /// once per function.
  const FunctionFlow* Find(std::string_view fn, NodeId marker, std::string* missing);

 private:
  const Trace& t_;
  std::map<std::string, std::unique_ptr<FunctionFlow>, std::less<>> cache_;
};

}  // namespace irt::internal

#endif  // IRT_SRC_CONTROL_FLOW_H_
