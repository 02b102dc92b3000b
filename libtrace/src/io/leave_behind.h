// Internal: gives back the decoded chunks that a walk over a trace has
// left (Trace::ReleaseColumns; nothing unless the trace reads with
// transient columns). A walk forward gives back the chunks more than one
// before the one it is in, a walk back those more than one after it, each
// once: a chunk read again later is decoded again and kept. The analyses
// that read a long trace in one direction (print, slice, replay, diff,
// the walks over a call's body) hold a few chunks this way, not the trace.
#ifndef IRT_SRC_IO_LEAVE_BEHIND_H_
#define IRT_SRC_IO_LEAVE_BEHIND_H_

#include <cstdint>

#include "irt/trace.h"

namespace irt::internal {

class LeaveBehind {
 public:
  enum Direction : uint8_t { kForward, kBackward };
  /// A walk starting at node `from` (which must be in the trace).
  LeaveBehind(const Trace& trace, Direction d, NodeId from)
      : trace_(trace), d_(d), edge_(trace.size() == 0 ? 0 : trace.chunk_of(from)) {}

  /// The walk is in chunk `c`.
  void In(uint32_t c) {
    if (d_ == kForward) {
      while (edge_ + 1 < c) trace_.ReleaseColumns(edge_++);
    } else {
      while (edge_ > c + 1) trace_.ReleaseColumns(edge_--);
    }
  }
  /// The walk is at node `id`: looked at every 4096 steps, so that a step
  /// costs a counter.
  void Step(NodeId id) {
    if (++steps_ % 4096 == 0) In(trace_.chunk_of(id));
  }

 private:
  const Trace& trace_;
  Direction d_;
  uint32_t edge_;  // the next chunk to give back
  uint64_t steps_ = 0;
};

}  // namespace irt::internal

#endif  // IRT_SRC_IO_LEAVE_BEHIND_H_
