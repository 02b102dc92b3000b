// Complete verification of a trace, in one streaming pass with memory
// bounded by two chunks (ChunkStream) plus the open-call stack.
#ifndef IRT_CHECK_H_
#define IRT_CHECK_H_

#include <cstdint>
#include <string>

#include "irt/status.h"
#include "irt/trace.h"

namespace irt {

struct CheckSummary {
  uint16_t format_major = 0, format_minor = 0;
  std::string producer_name, producer_version;
  uint64_t chunks = 0;
  uint64_t nodes = 0;
  uint64_t calls = 0;
  uint64_t max_depth = 0;  // deepest nesting of calls (the root call is depth 1)
  uint64_t bytes = 0;
  bool complete = false;
};

/// Reads every chunk of `path` ("-": stdin) and checks everything the format
/// promises: framing, identifier, version, FlatBuffers structure, every
/// index and range, kinds, value kinds, backward references, call nesting
/// (every Return/Error closes the innermost open call; base_depth matches),
/// chunk numbering and bases, and the final chunk. The first violation is a
/// kDataError "chunk C, node N: what" (N global). `progress`, if given,
/// counts each chunk as it is read (ChunkStream::Open).
Result<CheckSummary> CheckTrace(const std::string& path, Progress* progress = nullptr);

}  // namespace irt

#endif  // IRT_CHECK_H_
