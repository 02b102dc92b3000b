// Control-flow facts of a function: its blocks, and the branches and returns
// of each block with their conditions and targets. An adapter records them
// for every function it traces (TraceWriter::RegisterControlFlow, format
// 1.1); control dependences (irt-slice --control) and replay's check of the
// branches not taken read them, so that no analysis parses IR text.
#ifndef IRT_CONTROL_FLOW_H_
#define IRT_CONTROL_FLOW_H_

#include <cstdint>
#include <string>
#include <vector>

namespace irt {

/// A branch or return of a block (schema `Branch`).
struct BranchFact {
  uint32_t block = 0;   // the block holding it, 1-based
  uint32_t pos = 0;     // its branch position in the block, 1-based: the `pos`
                        // of the Jump and Return nodes it produces (§b:&pos)
  uint32_t target = 0;  // the block it jumps to, 1-based; 0 for a return
  bool conditional = false;
  uint32_t condition = 0;   // conditional: the SSA id (node `pos`) of the value
                            // tested; 0 when it is a literal
  bool taken_when = false;  // conditional: taken when the condition is this

  bool is_return() const { return target == 0; }
};

/// The facts of one function. Valid facts have `blocks` >= 1 and list every
/// branch and return sorted by (block, pos), the positions of each block
/// numbered 1, 2, ... (a block may have none); see schema/README.md §7.1.
struct ControlFlow {
  uint32_t blocks = 0;
  std::vector<BranchFact> branches;
};

/// Most blocks, and most branches, the facts of one function may have.
inline constexpr uint32_t kMaxControlFlowBlocks = 1u << 24;
inline constexpr uint64_t kMaxControlFlowBranches = uint64_t{1} << 24;

/// What is wrong with `facts` by the rules readers apply ("branch 3
/// (§2:&1): target block 9 out of range (5 blocks)"), or "" when they are
/// valid.
std::string CheckControlFlow(const ControlFlow& facts);

}  // namespace irt

#endif  // IRT_CONTROL_FLOW_H_
