// Statistics of a trace in one streaming pass over its chunks (ChunkStream):
// nodes per kind, per operation and per call depth, calls, the deepest
// call, the heaviest calls by subtree size, and bytes per chunk. Memory is
// bounded by two chunks (ChunkStream) plus fixed-size tables: depths past
// 64 are counted in power-of-two buckets, the heaviest calls in a bounded
// heap, paths only for calls at most kStatsPathDepth deep; the callee names
// of the open calls are kept run-length encoded (constant for
// self-recursion and loops, and in general proportional to the changes of
// callee along the deepest path).
#ifndef IRT_STATS_H_
#define IRT_STATS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "irt/output.h"
#include "irt/status.h"
#include "irt/trace.h"

namespace irt {

/// Calls deeper than this get no path in the statistics (only a node id).
inline constexpr uint32_t kStatsPathDepth = 32;
/// Depths counted one by one; deeper ones go into power-of-two buckets.
inline constexpr uint32_t kStatsExactDepths = 64;

struct StatsOptions {
  /// How many of the heaviest calls to report.
  uint32_t top = 10;
  /// List every chunk (streamed before the summary).
  bool chunks = false;
  /// Text only: draw a bar after each operation's count and each depth's
  /// nodes (FormatStatsText).
  bool histogram = false;
};

/// One chunk, as the per-chunk listing shows it.
struct ChunkRow {
  uint64_t index = 0;
  NodeId base = 0;
  uint64_t nodes = 0;
  uint64_t bytes = 0;  // size prefix included
  uint32_t base_depth = 0;
};

/// A call, for the deepest and heaviest ones.
struct CallStat {
  NodeId marker = kNoNode;
  std::string op;
  uint64_t nodes = 0;  // subtree size: marker to closer, both included
  uint32_t depth = 0;  // the root call is depth 1
  std::string path;    // "@8/@8"; "@" for the root; empty when too deep to track
};

struct TraceStats {
  uint16_t format_major = 0, format_minor = 0;
  std::string producer_name, producer_version;
  bool complete = false;
  std::string status;  // trace metadata "status", if any
  uint64_t nodes = 0;
  uint64_t bytes = 0;
  std::array<uint64_t, kNumNodeKinds> kinds{};
  struct OpRow {
    std::string op;
    NodeKind kind;
    uint64_t count = 0;
  };
  /// By count (descending), then kind and name.
  std::vector<OpRow> ops;
  struct DepthRow {
    uint32_t lo = 0, hi = 0;  // depths lo..hi (equal below kStatsExactDepths)
    uint64_t calls = 0;       // calls opened at these depths
    uint64_t nodes = 0;       // nodes of those calls' bodies (markers and closers included)
  };
  /// Non-empty rows, by depth.
  std::vector<DepthRow> depths;
  uint64_t calls = 0;
  CallStat deepest;  // the first call that reached the greatest depth
  /// By size (descending), then position in the trace.
  std::vector<CallStat> heaviest;
  uint64_t chunks = 0;
  uint64_t chunk_bytes_min = 0, chunk_bytes_max = 0;
  uint64_t chunk_nodes_min = 0, chunk_nodes_max = 0;
};

/// Reads `path` ("-": standard input) once, chunk by chunk. `on_chunk`, if
/// given, sees every chunk as it is read. Errors: those of ChunkStream
/// (kIoError, kDataError, kUnsupported), and kDataError for a trace whose
/// calls do not nest (a closer with no open call, a wrong base_depth).
Result<TraceStats> ComputeStats(const std::string& path, const StatsOptions& opts,
                                const std::function<void(const ChunkRow&)>& on_chunk = {});

/// Writes the statistics of `path` as text or as one JSON document; with
/// opts.chunks the chunk list is streamed first (text: a table; JSON: the
/// "chunk_list" member), so memory stays bounded.
Status PrintStats(const std::string& path, const StatsOptions& opts, bool json, Output& out);

/// Width of the longest bar of a histogram, in characters.
inline constexpr size_t kStatsBarWidth = 40;

/// The summary part of PrintStats (everything but the chunk list). With
/// `histogram`, each row of the operation table ends with a bar of '#'
/// proportional to its count, and each row of the depth table with one
/// proportional to its nodes; the largest row of each table gets
/// kStatsBarWidth characters, any non-zero row at least one.
std::string FormatStatsText(const TraceStats& s, bool histogram = false);
/// The members of the JSON summary, without the enclosing braces.
std::string FormatStatsJsonMembers(const TraceStats& s);

}  // namespace irt

#endif  // IRT_STATS_H_
