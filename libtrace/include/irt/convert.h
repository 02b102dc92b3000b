// Converting a trace between format versions: format 2 (packed node
// columns, the default) and format 1.1 (for readers older than format 2),
// chunk by chunk, with memory bounded by a few chunks.
#ifndef IRT_CONVERT_H_
#define IRT_CONVERT_H_

#include <cstdint>
#include <string>

#include "irt/output.h"
#include "irt/progress.h"
#include "irt/status.h"
#include "irt/trace.h"

namespace irt {

struct ConvertOptions {
  /// The format written: 1 (1.1) or 2 (2.0).
  uint16_t format_major = kFormatMajor;
  /// If given, counts the chunks read.
  Progress* progress = nullptr;
};

struct ConvertResult {
  uint64_t chunks = 0, nodes = 0;
  uint64_t chunks_rewritten = 0;  // the others were already in the format, copied as they are
  uint64_t bytes_in = 0, bytes_out = 0;
};

/// Reads the trace at `path` ("-": standard input), checking every chunk as
/// irt-check does, and writes it to `out` in `options.format_major`: each
/// chunk rebuilt index for index (a 1.0 chunk's control-flow facts parsed
/// from its IR text are stored), or copied when it is in that format
/// already (major and minor). An incomplete or invalid input is an error (what was written
/// before it is then not a trace: write to an Output that is not committed).
Result<ConvertResult> ConvertTrace(const std::string& path, Output& out,
                                   const ConvertOptions& options);

}  // namespace irt

#endif  // IRT_CONVERT_H_
