// Internal: what a computed Slice holds, shared by the slicing walks
// (slice.cc) and the writing and listing of a slice (slice_output.cc).
#ifndef IRT_SRC_SLICE_IMPL_H_
#define IRT_SRC_SLICE_IMPL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/bits.h"
#include "irt/slice.h"

namespace irt {

struct Slice::Impl {
  SliceOptions opts;
  std::string path;
  NodeId start = kNoNode;
  uint64_t count = 0;
  internal::BitSet selected;  // S
  internal::BitSet context;   // C: markers and closers of the calls kept as context
  internal::BitSet refd;      // R: every node a kept node references
  std::vector<std::string> warnings;

  void Select(NodeId id) {
    if (selected.Set(id)) ++count;
  }
};

}  // namespace irt

#endif  // IRT_SRC_SLICE_IMPL_H_
