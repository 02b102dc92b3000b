// Converting a trace between format versions (irt/convert.h).
#include "irt/convert.h"

#include "io/chunk.h"
#include "io/chunk_rebuild.h"
#include "io/column_reader.h"

namespace irt {

Result<ConvertResult> ConvertTrace(const std::string& path, Output& out,
                                   const ConvertOptions& options) {
  if (options.format_major != 1 && options.format_major != 2) {
    return InvalidArgument("format " + std::to_string(options.format_major) +
                           " cannot be written (1 or 2)");
  }
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, ChunkStream::Open(path, options.progress));
  const uint16_t minor = options.format_major == 1 ? kFormat1Minor : kFormatMinor;
  ConvertResult r;
  // Checked as irt-check checks: what is written is a trace.
  internal::StreamCheck check(stream.name());
  for (;;) {
    IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, stream.Next());
    if (c == nullptr) break;
    IRT_RETURN_IF_ERROR(check.Feed(*c, stream.info()));
    ++r.chunks;
    r.nodes += c->count;
    r.bytes_in += stream.info().size + 4;
    if (c->format_major() == options.format_major && c->format_minor() == minor) {
      std::span<const uint8_t> bytes = stream.chunk_bytes();
      out.Write(bytes.data(), bytes.size());
      r.bytes_out += bytes.size();
      continue;
    }
    Result<internal::Rebuilt> rebuilt = internal::RebuildChunk(
        c->chunk, c->node_span(), c->ref_span(), internal::ChunkEdit(), options.format_major);
    if (!rebuilt) return rebuilt.error().Prefixed(stream.name());
    out.Write(rebuilt->bytes.data(), rebuilt->bytes.size());
    r.bytes_out += rebuilt->bytes.size();
    ++r.chunks_rewritten;
  }
  IRT_RETURN_IF_ERROR(check.Finish());
  return r;
}

}  // namespace irt
