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

/// Whether a reader that walks a whole trace once or twice (a listing, a
/// slice) should read it with transient columns (Trace::UseTransientColumns)
/// and give chunks back: when holding them all would cost more than
/// decoding some again, on a trace of more than 2^21 nodes or 64 chunks.
/// On a smaller one, decoding again costs more time (a slice of W3's
/// 390,000 nodes in 6 chunks took 15-25% longer) than it saves memory.
inline bool WorthGivingBack(const Trace& trace) {
  return trace.size() > (uint64_t{1} << 21) || trace.chunks().size() > 64;
}

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
