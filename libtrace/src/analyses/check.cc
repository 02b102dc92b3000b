// The complete checker: one pass over the chunks with a stack of open calls.
#include "irt/check.h"

#include "io/chunk.h"

namespace irt {

Result<CheckSummary> CheckTrace(const std::string& path, Progress* progress) {
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, ChunkStream::Open(path, progress));
  CheckSummary sum;
  // ChunkStream checks every chunk and its nodes (internal::VerifyChunk);
  // what is left needs the calls opened in earlier chunks.
  internal::StreamCheck check(stream.name());
  for (;;) {
    IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, stream.Next());
    if (c == nullptr) break;
    if (sum.chunks == 0) {
      sum.format_major = c->format_major();
      sum.format_minor = c->format_minor();
      sum.producer_name = c->producer_name();
      sum.producer_version = c->producer_version();
    }
    IRT_RETURN_IF_ERROR(check.Feed(*c, stream.info()));
    sum.nodes += c->count;
    ++sum.chunks;
  }
  sum.complete = check.complete();
  const internal::CallStack& calls = check.calls();
  sum.calls = calls.calls();
  sum.max_depth = calls.max_depth();
  sum.bytes = stream.bytes_read();
  return sum;
}

}  // namespace irt
