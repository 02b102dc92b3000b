// Internal: irt-replay's forward pass. From the first changed node to the
// end of the trace (or to the first divergence), with a bit set of the
// nodes whose values changed: a node is evaluated again only when one of
// its references changed, and propagation stops where a new value equals
// the recorded one. An explicit stack of open calls carries, per call, the
// latest node of each SSA value used as a branch condition, so that
// branches that were not taken can be checked against the callee's
// control-flow facts (control_flow.h). Every chunk holding a changed node
// is rebuilt (io/chunk_rebuild.h).
#ifndef IRT_SRC_REPLAY_WALK_H_
#define IRT_SRC_REPLAY_WALK_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "io/chunk_rebuild.h"
#include "irt/eval.h"
#include "irt/replay.h"
#include "irt/status.h"
#include "irt/trace.h"

namespace irt::internal {

/// Re-evaluates `trace` from the first of `changes` (sorted by node, each
/// node once, none a call, jump or return). `open` lists the calls open at
/// the first change when the caller knows them, else nullptr (they are
/// found by a scan). Fills `result` (evaluated and changed nodes, the
/// divergence), puts the bytes of every rebuilt chunk in `rebuilt` by chunk
/// index, and sets `out_chunks` to the new trace's number of chunks (fewer
/// than the input's when `prefix` cut it at a divergence).
Status RunReplayWalk(const Trace& trace, const PrimitiveTable& table, bool prefix,
                     const std::vector<std::pair<NodeId, Value>>& changes,
                     const std::vector<NodeId>* open, ReplayResult* result,
                     std::map<uint32_t, internal::Rebuilt>* rebuilt, uint64_t* out_chunks);

}  // namespace irt::internal

#endif  // IRT_SRC_REPLAY_WALK_H_
