// The complete checker: one pass over the chunks with a stack of open calls.
#include "irt/check.h"

#include "io/chunk.h"

namespace irt {

Result<CheckSummary> CheckTrace(const std::string& path, Progress* progress) {
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, ChunkStream::Open(path, progress));
  CheckSummary sum;
  // ChunkStream checks every chunk and its nodes (internal::VerifyChunk);
  // what is left needs the calls opened in earlier chunks.
  internal::CallStack calls;
  NodeId id = 0;
  for (;;) {
    IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, stream.Next());
    if (c == nullptr) break;
    const ChunkInfo& info = stream.info();
    if (sum.chunks == 0) {
      sum.format_major = c->format_major();
      sum.format_minor = c->format_minor();
      sum.producer_name = c->producer_name();
      sum.producer_version = c->producer_version();
    }
    if (info.base_depth != calls.depth()) {
      return DataError(stream.name() + ": chunk " + std::to_string(info.index) +
                       ": starts at call depth " + std::to_string(info.base_depth) +
                       ", the nodes before it leave " + std::to_string(calls.depth()) +
                       " calls open");
    }
    NodeId failed = kNoNode;
    Status s = calls.Feed(*c, &failed);
    if (!s.ok())
      return DataError(stream.name() + ": " + internal::At(info.index, failed, s.message()));
    uint32_t n = c->count;
    id += n;
    sum.nodes += n;
    ++sum.chunks;
    if (info.last) {
      sum.complete = true;
      Status fs = internal::CheckFinalChunk(*c, id, calls);
      if (!fs.ok()) return fs.Prefixed(stream.name());
    }
  }
  sum.calls = calls.calls();
  sum.max_depth = calls.max_depth();
  sum.bytes = stream.bytes_read();
  return sum;
}

}  // namespace irt
