// A trace in other tools' formats, streamed: one JSON object per node
// (JSON Lines, for duckdb and pandas), speedscope's file format and the
// Trace Event Format that Perfetto's UI and chrome://tracing open. Each
// export reads the trace chunk by chunk (ChunkStream) and keeps only the
// open calls, so memory is bounded by the call depth (and, for the two
// profile formats, by the number of distinct call sites they name).
#ifndef IRT_EXPORT_H_
#define IRT_EXPORT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "irt/output.h"
#include "irt/progress.h"
#include "irt/status.h"

namespace irt {

enum class ExportFormat { kJsonl, kSpeedscope, kChromeTrace, kPython, kC };

/// Node paths ("@8/@4") are written for nodes at most this many calls
/// deep; deeper ones have "path": null (their "parent" and "pos" still
/// place them), so that a line stays short in a 10^6-deep recursion.
inline constexpr uint32_t kExportPathDepth = 32;

/// The deepest call Perfetto's trace processor keeps: its SliceTracker
/// drops slices nested deeper than 512 (kMaxDepth).
inline constexpr uint32_t kChromeTraceMaxDepth = 512;
/// The deepest call --speedscope writes unless told otherwise. speedscope
/// imports a file with recursive functions: version 1.25.0 in Chromium 156
/// loaded 3001-deep calls in 5 of 5 tries, 4001-deep in 2 of 3, and failed
/// with "Maximum call stack size exceeded" from 5001 levels on.
inline constexpr uint32_t kSpeedscopeMaxDepth = 2500;

/// The metadata key of a recorded time: when every call's marker and closer
/// carries a number under it (nanoseconds on one monotonic clock, never
/// decreasing in execution order), --speedscope and --chrome-trace make
/// each span as wide as its recorded time instead of its node count.
inline constexpr std::string_view kExportTimeKey = "time_ns";

struct ExportOptions {
  ExportFormat format = ExportFormat::kJsonl;
  /// JSON Lines: tensors with more elements are written without "data"
  /// (0: never).
  int64_t max_elements = 0;
  /// Profile formats: the deepest call the output may hold (0: the
  /// format's default, kChromeTraceMaxDepth or kSpeedscopeMaxDepth).
  uint32_t max_depth = 0;
  /// Written as the file's "exporter" (speedscope) or in "otherData".
  std::string exporter;
  /// If given, counts the chunks of each pass as they are read
  /// (ChunkStream::Open); the formats that read the trace twice count it
  /// twice.
  Progress* progress = nullptr;
};

/// Writes the trace at `path` ("-": standard input) to `out` in
/// opts.format. JSON Lines is written in one pass; the profile formats read
/// the trace twice (a spooled copy of standard input when it is a pipe) and
/// write nothing unless the first pass finds the trace fits the format: a
/// trace deeper than the limit, or one whose calls never closed, is
/// kDataError with nothing written. Errors: those of ChunkStream
/// (kIoError, kDataError, kUnsupported), each naming the input.
Status ExportTrace(const std::string& path, const ExportOptions& opts, Output& out);

}  // namespace irt

#endif  // IRT_EXPORT_H_
