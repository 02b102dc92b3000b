// Trace statistics in one pass over a ChunkStream. The pass keeps a call
// depth counter, per-depth child counters for the first kStatsPathDepth
// levels (for paths), a run-length encoded stack of callee names, fixed
// tables of counts and a bounded min-heap of the heaviest calls.
#include "irt/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "io/chunk.h"
#include "io/column_reader.h"
#include "irt/json.h"

namespace irt {

namespace {

constexpr uint32_t kBuckets = 27;  // depths 65..2^32 in power-of-two buckets

// Row of the depth table for `depth` (>= 1).
uint32_t DepthRowIndex(uint64_t depth) {
  if (depth <= kStatsExactDepths) return static_cast<uint32_t>(depth - 1);
  uint32_t b = static_cast<uint32_t>(std::bit_width(depth - 1)) - 7;
  return kStatsExactDepths + std::min(b, kBuckets - 1);
}

// Heap order: the call that would be dropped first on top.
bool Lighter(const CallStat& a, const CallStat& b) {
  if (a.nodes != b.nodes) return a.nodes > b.nodes;
  return a.marker < b.marker;
}

struct Counter {
  std::unordered_map<std::string, uint32_t> op_ids;
  std::vector<std::string> op_names;
  std::unordered_map<uint64_t, uint32_t> slot_of;    // (kind, op id) -> slot
  std::vector<std::pair<uint64_t, uint64_t>> slots;  // (kind, op id), count

  uint32_t OpId(std::string_view name) {
    auto it = op_ids.find(std::string(name));
    if (it != op_ids.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(op_names.size());
    op_names.emplace_back(name);
    op_ids.emplace(std::string(name), id);
    return id;
  }
  uint32_t Slot(NodeKind k, uint32_t op) {
    uint64_t key = (static_cast<uint64_t>(k) << 32) | op;
    auto it = slot_of.find(key);
    if (it != slot_of.end()) return it->second;
    uint32_t s = static_cast<uint32_t>(slots.size());
    slots.emplace_back(key, 0);
    slot_of.emplace(key, s);
    return s;
  }
};

std::string PathOf(const std::vector<uint64_t>& pos, uint64_t depth) {
  // A call at `depth` is child pos[depth - 1] of its caller, and so on up.
  if (depth == 1) return "@";
  if (depth - 1 > kStatsPathDepth) return "";
  std::string p;
  for (uint64_t d = 1; d < depth; ++d) {
    p += (d == 1 ? "@" : "/@") + std::to_string(pos[d]);
  }
  return p;
}

}  // namespace

Result<TraceStats> ComputeStats(const std::string& path, const StatsOptions& opts,
                                const std::function<void(const ChunkRow&)>& on_chunk) {
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, ChunkStream::Open(path));
  TraceStats st;
  Counter counter;
  std::vector<uint64_t> depth_calls(kStatsExactDepths + kBuckets, 0);
  std::vector<uint64_t> depth_nodes(kStatsExactDepths + kBuckets, 0);
  std::vector<std::pair<uint32_t, uint64_t>> callees;  // run-length encoded open calls
  std::vector<uint64_t> pos(kStatsPathDepth + 2, 0);   // children seen, per depth
  std::vector<CallStat> heap;
  std::vector<uint32_t> class_op;  // per class of the current chunk: op id + 1, 0 = none
  std::vector<int64_t> class_slot;
  uint64_t depth = 0;
  NodeId id = 0;
  internal::StreamCheck check(stream.name());
  for (;;) {
    IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, stream.Next());
    if (c == nullptr) break;
    const ChunkInfo& info = stream.info();
    auto fail = [&](NodeId node, const std::string& what) -> Status {
      return DataError(stream.name() + ": " + internal::At(info.index, node, what));
    };
    if (st.chunks == 0) {
      st.format_major = c->format_major();
      st.format_minor = c->format_minor();
      st.producer_name = c->producer_name();
      st.producer_version = c->producer_version();
    }
    // ChunkStream checked every node of the chunk; the call depth it starts
    // at, the closers of calls opened in earlier chunks and the final chunk
    // are checked as irt-check checks them.
    IRT_RETURN_IF_ERROR(check.Feed(*c, info));
    uint32_t nclasses = static_cast<uint32_t>(c->classes.size());
    class_op.assign(nclasses, 0);
    class_slot.assign(nclasses, -1);
    for (uint32_t k = 0; k < nclasses; ++k) {
      const internal::ClassFacts& cls = c->classes[k];
      if (cls.op_index == ~0u) continue;
      uint32_t op = counter.OpId(cls.op);
      class_op[k] = op + 1;
      class_slot[k] = counter.Slot(cls.kind, op);
    }
    for (uint32_t local = 0; local < c->count; ++local, ++id) {
      const internal::RawNode node(c, local);
      uint32_t ci = node.class_index();
      NodeKind kind = node.kind();
      ++st.kinds[static_cast<size_t>(kind)];
      if (class_slot[ci] >= 0) ++counter.slots[static_cast<size_t>(class_slot[ci])].second;
      switch (kind) {
        case NodeKind::kCall: {
          if (depth >= 1 && depth <= kStatsPathDepth) ++pos[depth];
          ++depth;
          if (depth <= kStatsPathDepth) pos[depth] = 0;
          ++st.calls;
          uint32_t row = DepthRowIndex(depth);
          ++depth_calls[row];
          ++depth_nodes[row];
          uint32_t op = class_op[ci] == 0 ? ~0u : class_op[ci] - 1;
          if (!callees.empty() && callees.back().first == op) {
            ++callees.back().second;
          } else {
            callees.emplace_back(op, 1);
          }
          if (depth > st.deepest.depth) {
            st.deepest.marker = id;
            st.deepest.depth = static_cast<uint32_t>(depth);
            st.deepest.op = op == ~0u ? "" : counter.op_names[op];
            st.deepest.path = PathOf(pos, depth);
          }
          break;
        }
        case NodeKind::kReturn:
        case NodeKind::kError: {
          if (depth == 0) return fail(id, "closes a call, but no call is open");
          if (depth <= kStatsPathDepth) ++pos[depth];
          ++depth_nodes[DepthRowIndex(depth)];
          NodeId marker = node.closes();
          if (marker == st.deepest.marker) st.deepest.nodes = id - marker + 1;
          CallStat call;
          call.marker = marker;
          call.nodes = id - marker + 1;
          call.depth = static_cast<uint32_t>(depth);
          uint32_t op = callees.back().first;
          if (opts.top > 0 && (heap.size() < opts.top || Lighter(call, heap.front()))) {
            call.op = op == ~0u ? "" : counter.op_names[op];
            call.path = PathOf(pos, depth);
            heap.push_back(std::move(call));
            std::push_heap(heap.begin(), heap.end(), Lighter);
            if (heap.size() > opts.top) {
              std::pop_heap(heap.begin(), heap.end(), Lighter);
              heap.pop_back();
            }
          }
          if (--callees.back().second == 0) callees.pop_back();
          --depth;
          break;
        }
        default:
          if (depth == 0) return fail(id, "a node outside every call");
          if (depth <= kStatsPathDepth) ++pos[depth];
          ++depth_nodes[DepthRowIndex(depth)];
          break;
      }
    }
    const uint32_t n = c->count;
    ChunkRow row{info.index, info.base, n, info.size + 4, info.base_depth};
    if (st.chunks == 0) {
      st.chunk_bytes_min = st.chunk_bytes_max = row.bytes;
      st.chunk_nodes_min = st.chunk_nodes_max = n;
    }
    st.chunk_bytes_min = std::min(st.chunk_bytes_min, row.bytes);
    st.chunk_bytes_max = std::max(st.chunk_bytes_max, row.bytes);
    st.chunk_nodes_min = std::min<uint64_t>(st.chunk_nodes_min, n);
    st.chunk_nodes_max = std::max<uint64_t>(st.chunk_nodes_max, n);
    ++st.chunks;
    st.nodes += n;
    if (on_chunk) on_chunk(row);
    if (info.last) {
      st.complete = true;
      for (const MetaEntry& m : c->TraceMeta()) {
        if (m.key == "status" && m.value.kind() == VKind::kString) st.status = m.value.str();
      }
    }
  }
  st.bytes = stream.bytes_read();
  for (const auto& [key, count] : counter.slots) {
    if (count == 0) continue;
    st.ops.push_back(
        {counter.op_names[key & 0xFFFFFFFFu], static_cast<NodeKind>(key >> 32), count});
  }
  std::sort(st.ops.begin(), st.ops.end(), [](const auto& a, const auto& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.op < b.op;
  });
  for (uint32_t r = 0; r < depth_calls.size(); ++r) {
    if (depth_nodes[r] == 0) continue;
    TraceStats::DepthRow row;
    if (r < kStatsExactDepths) {
      row.lo = row.hi = r + 1;
    } else {
      uint32_t b = r - kStatsExactDepths;
      row.lo = static_cast<uint32_t>((1ull << (b + 6)) + 1);
      row.hi = static_cast<uint32_t>(std::min<uint64_t>((1ull << (b + 7)), 0xFFFFFFFFu));
    }
    row.calls = depth_calls[r];
    row.nodes = depth_nodes[r];
    st.depths.push_back(row);
  }
  std::sort(heap.begin(), heap.end(), [](const CallStat& a, const CallStat& b) {
    if (a.nodes != b.nodes) return a.nodes > b.nodes;
    return a.marker < b.marker;
  });
  st.heaviest = std::move(heap);
  return st;
}

namespace {

// Display width of UTF-8 text (code points; the names here are not wide).
size_t Width(std::string_view s) {
  size_t w = 0;
  for (unsigned char ch : s) w += (ch & 0xC0) != 0x80;
  return w;
}

std::string Pad(std::string_view s, size_t width) {
  std::string out(s);
  size_t w = Width(s);
  if (w < width) out.append(width - w, ' ');
  return out;
}

std::string OpName(const TraceStats::OpRow& r) {
  if (r.kind == NodeKind::kSpecial) return "$(" + DisplayString(r.op) + ")";
  return "⟨" + DisplayString(r.op) + "⟩";
}

std::string CallName(const CallStat& c) {
  std::string where = c.path.empty() ? "#" + std::to_string(c.marker) : c.path;
  return where + " ⟨" + DisplayString(c.op) + "⟩";
}

// "  ####": a bar for `count` of at most `max`, rounded to the nearest
// character, at least one for a non-zero count.
std::string Bar(uint64_t count, uint64_t max) {
  if (max == 0 || count == 0) return "";
  auto len = static_cast<size_t>(
      (static_cast<long double>(count) * kStatsBarWidth + static_cast<long double>(max) / 2) /
      static_cast<long double>(max));
  return "  " + std::string(std::max<size_t>(len, 1), '#');
}

std::string DepthLabel(const TraceStats::DepthRow& r) {
  return r.lo == r.hi ? std::to_string(r.lo) : fmt::format("{}-{}", r.lo, r.hi);
}

}  // namespace

std::string FormatStatsText(const TraceStats& s, bool histogram) {
  std::string out;
  out += fmt::format("format      {}.{}\n", s.format_major, s.format_minor);
  out += fmt::format("producer    {}{}{}\n", DisplayString(s.producer_name),
                     s.producer_version.empty() ? "" : " ", DisplayString(s.producer_version));
  if (!s.status.empty()) out += fmt::format("status      {}\n", DisplayString(s.status));
  out += fmt::format("nodes       {}\n", s.nodes);
  out += fmt::format("bytes       {} ({:.1f} per node)\n", s.bytes,
                     s.nodes ? static_cast<double>(s.bytes) / static_cast<double>(s.nodes) : 0.0);
  out += fmt::format("chunks      {} ({} to {} bytes, {} to {} nodes)\n", s.chunks,
                     s.chunk_bytes_min, s.chunk_bytes_max, s.chunk_nodes_min, s.chunk_nodes_max);
  out += fmt::format("calls       {}\n", s.calls);
  if (s.deepest.depth > 0) {
    out += fmt::format("deepest     depth {}: {}{}\n", s.deepest.depth, CallName(s.deepest),
                       s.deepest.path.empty() ? "" : fmt::format(" (node {})", s.deepest.marker));
  }
  out += "\nkind             nodes\n";
  for (int k = 0; k < kNumNodeKinds; ++k) {
    if (s.kinds[k] == 0) continue;
    out += fmt::format("{}{:>10}\n", Pad(NodeKindName(static_cast<NodeKind>(k)), 11), s.kinds[k]);
  }
  if (!s.ops.empty()) {
    size_t w = 9;
    for (const auto& r : s.ops) w = std::max(w, Width(OpName(r)));
    out += "\n" + Pad("operation", w) + "  kind            count\n";
    uint64_t max = 0;
    for (const auto& r : s.ops) max = std::max(max, r.count);
    for (const auto& r : s.ops) {
      out += fmt::format("{}  {}{:>10}{}\n", Pad(OpName(r), w), Pad(NodeKindName(r.kind), 10),
                         r.count, histogram ? Bar(r.count, max) : "");
    }
  }
  size_t dw = 5;
  for (const auto& r : s.depths) dw = std::max(dw, Width(DepthLabel(r)));
  out += "\n" + Pad("depth", dw) + "       calls       nodes\n";
  uint64_t max_nodes = 0;
  for (const auto& r : s.depths) max_nodes = std::max(max_nodes, r.nodes);
  for (const auto& r : s.depths) {
    out += fmt::format("{}  {:>10}  {:>10}{}\n", Pad(DepthLabel(r), dw), r.calls, r.nodes,
                       histogram ? Bar(r.nodes, max_nodes) : "");
  }
  if (!s.heaviest.empty()) {
    out += "\nheaviest calls\n     nodes  depth  call\n";
    for (const CallStat& c : s.heaviest) {
      out += fmt::format("{:>10}  {:>5}  {}\n", c.nodes, c.depth, CallName(c));
    }
  }
  return out;
}

namespace {

std::string JsonCall(const CallStat& c) {
  return fmt::format("{{\"node\":{},\"op\":{},\"nodes\":{},\"depth\":{},\"path\":{}}}", c.marker,
                     JsonQuote(c.op), c.nodes, c.depth,
                     c.path.empty() ? std::string("null") : JsonQuote(c.path));
}

}  // namespace

std::string FormatStatsJsonMembers(const TraceStats& s) {
  std::string out;
  out += fmt::format("\"format\":{{\"major\":{},\"minor\":{}}}", s.format_major, s.format_minor);
  out += fmt::format(",\"producer\":{{\"name\":{},\"version\":{}}}", JsonQuote(s.producer_name),
                     JsonQuote(s.producer_version));
  out += fmt::format(",\"complete\":{}", s.complete ? "true" : "false");
  out += ",\"status\":" + (s.status.empty() ? std::string("null") : JsonQuote(s.status));
  out += fmt::format(",\"nodes\":{},\"bytes\":{},\"calls\":{}", s.nodes, s.bytes, s.calls);
  out += fmt::format(
      ",\"chunks\":{{\"count\":{},\"bytes_min\":{},\"bytes_max\":{},\"nodes_min\":{},"
      "\"nodes_max\":{}}}",
      s.chunks, s.chunk_bytes_min, s.chunk_bytes_max, s.chunk_nodes_min, s.chunk_nodes_max);
  out += ",\"deepest\":" + (s.deepest.depth > 0 ? JsonCall(s.deepest) : std::string("null"));
  out += ",\"kinds\":{";
  for (int k = 0; k < kNumNodeKinds; ++k) {
    out += fmt::format("{}{}:{}", k ? "," : "", JsonQuote(NodeKindName(static_cast<NodeKind>(k))),
                       s.kinds[k]);
  }
  out += "},\"ops\":[";
  for (size_t i = 0; i < s.ops.size(); ++i) {
    out +=
        fmt::format("{}{{\"op\":{},\"kind\":{},\"count\":{}}}", i ? "," : "",
                    JsonQuote(s.ops[i].op), JsonQuote(NodeKindName(s.ops[i].kind)), s.ops[i].count);
  }
  out += "],\"depths\":[";
  for (size_t i = 0; i < s.depths.size(); ++i) {
    const auto& r = s.depths[i];
    out += fmt::format("{}{{\"lo\":{},\"hi\":{},\"calls\":{},\"nodes\":{}}}", i ? "," : "", r.lo,
                       r.hi, r.calls, r.nodes);
  }
  out += "],\"heaviest\":[";
  for (size_t i = 0; i < s.heaviest.size(); ++i) {
    out += (i ? "," : "") + JsonCall(s.heaviest[i]);
  }
  out += "]";
  return out;
}

Status PrintStats(const std::string& path, const StatsOptions& opts, bool json, Output& out) {
  bool first = true;
  std::function<void(const ChunkRow&)> row;
  if (opts.chunks) {
    row = [&](const ChunkRow& r) {
      if (json) {
        out << (first ? "{\"chunk_list\":[" : ",")
            << fmt::format(
                   "{{\"index\":{},\"base\":{},\"nodes\":{},\"bytes\":{},\"base_depth\":{}}}",
                   r.index, r.base, r.nodes, r.bytes, r.base_depth);
      } else {
        if (first) out << "     chunk        base     nodes       bytes  depth\n";
        out << fmt::format("{:>10}  {:>10}  {:>8}  {:>10}  {:>5}\n", r.index, r.base, r.nodes,
                           r.bytes, r.base_depth);
      }
      first = false;
    };
  }
  IRT_ASSIGN_OR_RETURN(TraceStats s, ComputeStats(path, opts, row));
  if (json) {
    out << (opts.chunks ? "]," : "{") << FormatStatsJsonMembers(s) << "}\n";
  } else {
    if (opts.chunks) out << "\n";
    out << FormatStatsText(s, opts.histogram);
  }
  return Status::Ok();
}

}  // namespace irt
