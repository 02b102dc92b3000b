// The replay API: --set changes parsed, resolved to nodes and checked;
// the forward pass (replay_walk.h) run over them; the new trace written
// from the rebuilt chunks and the input's others; MutableTrace on top.
#include "irt/replay.h"

#include <algorithm>
#include <map>

#include "analyses/replay_walk.h"
#include "graph/path.h"
#include "irt/graph.h"
#include "irt/npy.h"

namespace irt {

namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

// ------------------------------------------------------------ ParseReplayChange

Result<ReplayChange> ParseReplayChange(std::string_view spec) {
  size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return UsageError("--set '" + std::string(spec) + "': expected @PATH=VALUE");
  }
  ReplayChange c;
  c.path = Trim(spec.substr(0, eq));
  std::string_view text = spec.substr(eq + 1);
  auto v = ParseValueArgument(text);
  if (!v && v.error().code() == Code::kUsage) {
    return UsageError("--set " + c.path + ": '" + std::string(text) +
                      "' is not a value: " + v.error().message());
  }
  if (!v) return Status(v.error().code(), "--set " + c.path + ": " + v.error().message());
  c.value = std::move(v).value();
  return c;
}

// ------------------------------------------------------------ Replay

struct Replay::Impl {
  const Trace* trace = nullptr;
  ReplayResult result;
  bool has_output = false;
  uint64_t out_chunks = 0;  // chunks of the new trace
  std::map<uint32_t, internal::Rebuilt> rebuilt;
};

Replay::Replay() : impl_(new Impl) {}
Replay::Replay(Replay&&) noexcept = default;
Replay& Replay::operator=(Replay&&) noexcept = default;
Replay::~Replay() = default;

const ReplayResult& Replay::result() const { return impl_->result; }
bool Replay::has_output() const { return impl_->has_output; }

Result<Replay> Replay::Run(const Trace& trace, std::span<const ReplayChange> changes,
                           const ReplayOptions& options) {
  // The chunks read from here on, the paths' scans included, may be given
  // back (RunReplayWalk).
  trace.UseTransientColumns();
  std::vector<std::pair<NodeId, Value>> resolved;
  std::vector<NodeId> open;  // the calls open at the first change
  NodeId first = kNoNode;
  for (const ReplayChange& c : changes) {
    auto located = internal::LocatePath(trace, c.path, internal::PathWalk::kScan);
    if (!located) {
      // A path that names no node is kNotFound, as in every tool.
      if (located.error().code() == Code::kDataError) return located.error();
      return Status(located.error().code(), "--set " + c.path + ": " + located.error().message());
    }
    NodeId target = located->node.id;
    IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(target));
    std::string at = "--set " + c.path + ": ";
    if (v.kind() == NodeKind::kCall) {
      if (target == 0) return UsageError(at + "the node is the root call; set its arguments");
      return UsageError(at + "the node is a nested call ⟨" + DisplayString(v.op()) +
                        "⟩; set one of its arguments (" + c.path + "/@2) or a node of its body");
    }
    switch (v.kind()) {
      case NodeKind::kJump:
        return UsageError(at + "the node is a jump (a branch taken), which has no value");
      case NodeKind::kReturn:
        return UsageError(at + "the node is the return of its call; set the node it returns");
      case NodeKind::kError:
        return UsageError(at + "the node is a recorded failure, which has no value");
      default:
        break;
    }
    Value old = v.value();
    if (TypeName(old) != TypeName(c.value)) {
      return UsageError(at + "type mismatch: the node holds " + FormatValue(old) +
                        "::" + TypeName(old) + ", the new value is " + FormatValue(c.value) +
                        "::" + TypeName(c.value));
    }
    for (const auto& [id, val] : resolved) {
      if (id == target) return UsageError(at + "the node is set twice");
    }
    if (resolved.empty() || target < first) {
      first = target;
      open.clear();
      if (located->pos >= 0) {
        for (const Child& call : located->chain) open.push_back(call.id);
      }
    }
    resolved.emplace_back(target, c.value);
  }
  return RunImpl(trace, resolved, options, &open);
}

Result<Replay> Replay::RunOnNodes(const Trace& trace,
                                  std::span<const std::pair<NodeId, Value>> changes,
                                  const ReplayOptions& options) {
  return RunImpl(trace, changes, options, nullptr);
}

Result<Replay> Replay::RunImpl(const Trace& trace,
                               std::span<const std::pair<NodeId, Value>> changes_in,
                               const ReplayOptions& options, const std::vector<NodeId>* open) {
  Replay rp;
  Impl& m = *rp.impl_;
  m.trace = &trace;
  ReplayResult& r = m.result;
  r.nodes = trace.size();
  r.chunks = trace.chunks().size();
  if (!trace.complete())
    return InvalidArgument(trace.name() + ": cannot replay an unfinished trace");
  std::vector<std::pair<NodeId, Value>> changes(changes_in.begin(), changes_in.end());
  std::sort(changes.begin(), changes.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < changes.size(); ++i) {
    if (changes[i].first >= trace.size()) {
      return UsageError("node " + std::to_string(changes[i].first) + " is not in the trace");
    }
    if (i > 0 && changes[i].first == changes[i - 1].first) {
      return UsageError("node " + std::to_string(changes[i].first) + " is set twice");
    }
  }
  m.out_chunks = r.chunks;
  if (changes.empty()) {
    m.has_output = true;
    return rp;
  }
  const PrimitiveTable& table =
      options.primitives ? *options.primitives : PrimitiveTable::Builtins();
  uint64_t out_chunks = 0;
  trace.UseTransientColumns();  // RunOnNodes comes here directly
  IRT_RETURN_IF_ERROR(internal::RunReplayWalk(trace, table, options.prefix, changes, open, &r,
                                              &m.rebuilt, &out_chunks));
  if (r.divergence && !options.prefix) {
    r.changed.clear();
    m.rebuilt.clear();
    m.has_output = false;
    return rp;
  }
  m.has_output = true;
  m.out_chunks = out_chunks;
  r.chunks_rebuilt = m.rebuilt.size();
  return rp;
}

Status Replay::Write(Output& out) const {
  const Impl& m = *impl_;
  if (!m.has_output) {
    return InvalidArgument("the replay diverged; there is no new trace to write (use a prefix)");
  }
  for (uint32_t i = 0; i < m.out_chunks && !out.failed(); ++i) {
    auto it = m.rebuilt.find(i);
    if (it != m.rebuilt.end()) {
      out.Write(it->second.bytes.data(), it->second.bytes.size());
    } else {
      // A copied chunk is checked like any chunk read (cached when visited).
      IRT_RETURN_IF_ERROR(m.trace->VerifyChunk(i));
      std::span<const uint8_t> b = m.trace->chunk_bytes(i);
      out.Write(b.data(), b.size());
    }
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> Replay::Bytes() const {
  const Impl& m = *impl_;
  if (!m.has_output) {
    return InvalidArgument("the replay diverged; there is no new trace (use a prefix)");
  }
  std::vector<uint8_t> out;
  for (uint32_t i = 0; i < m.out_chunks; ++i) {
    auto it = m.rebuilt.find(i);
    if (it != m.rebuilt.end()) {
      out.insert(out.end(), it->second.bytes.begin(), it->second.bytes.end());
    } else {
      IRT_RETURN_IF_ERROR(m.trace->VerifyChunk(i));
      std::span<const uint8_t> b = m.trace->chunk_bytes(i);
      out.insert(out.end(), b.begin(), b.end());
    }
  }
  return out;
}

// ------------------------------------------------------------ MutableTrace

MutableTrace::MutableTrace() = default;
MutableTrace::MutableTrace(MutableTrace&&) noexcept = default;
MutableTrace& MutableTrace::operator=(MutableTrace&&) noexcept = default;
MutableTrace::~MutableTrace() = default;

const Trace& MutableTrace::trace() const { return *trace_; }
const std::vector<uint8_t>& MutableTrace::bytes() const { return *bytes_; }

Status MutableTrace::Adopt(std::vector<uint8_t> bytes, bool partial) {
  auto owned = std::make_unique<std::vector<uint8_t>>(std::move(bytes));
  OpenOptions oo;
  oo.allow_partial = partial;
  IRT_ASSIGN_OR_RETURN(Trace t, Trace::FromBytes(owned->data(), owned->size(), name_, oo));
  trace_ = std::make_unique<Trace>(std::move(t));
  bytes_ = std::move(owned);
  return Status::Ok();
}

Result<MutableTrace> MutableTrace::FromBytes(std::vector<uint8_t> bytes, std::string name) {
  MutableTrace m;
  m.name_ = std::move(name);
  IRT_RETURN_IF_ERROR(m.Adopt(std::move(bytes), false));
  return m;
}

Result<MutableTrace> MutableTrace::Open(const std::string& path) {
  IRT_ASSIGN_OR_RETURN(Trace t, Trace::Open(path));
  std::vector<uint8_t> bytes;
  bytes.reserve(t.file_bytes());
  for (uint32_t i = 0; i < t.chunks().size(); ++i) {
    std::span<const uint8_t> b = t.chunk_bytes(i);
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  return FromBytes(std::move(bytes), t.name());
}

Result<ReplayResult> MutableTrace::Update(std::span<const ReplayChange> changes,
                                          const ReplayOptions& options) {
  IRT_ASSIGN_OR_RETURN(Replay r, Replay::Run(*trace_, changes, options));
  ReplayResult result = r.result();
  if (!r.has_output()) return result;
  IRT_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, r.Bytes());
  IRT_RETURN_IF_ERROR(Adopt(std::move(bytes), result.divergence.has_value()));
  return result;
}

Result<ReplayResult> MutableTrace::UpdateNodes(std::span<const std::pair<NodeId, Value>> changes,
                                               const ReplayOptions& options) {
  IRT_ASSIGN_OR_RETURN(Replay r, Replay::RunOnNodes(*trace_, changes, options));
  ReplayResult result = r.result();
  if (!r.has_output()) return result;
  IRT_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, r.Bytes());
  IRT_RETURN_IF_ERROR(Adopt(std::move(bytes), result.divergence.has_value()));
  return result;
}

}  // namespace irt
