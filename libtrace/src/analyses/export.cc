// Exports in one streaming walk over a ChunkStream. The walk keeps one frame
// per open call (its marker, the positions handed out in its body, the
// length of its path, the span it opened) and nothing per node, so memory is
// bounded by the call depth; the profile formats add a table of the call
// sites they name. Values are written by irt/json.h, locations by the node
// notation, so an export says what irt-print --json says.
#include "irt/export.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyses/export_walk.h"
#include "io/chunk.h"
#include "io/column_reader.h"
#include "irt/json.h"
#include "irt/trace.h"
#include "print/notation.h"

namespace irt {

namespace {

using internal::AppendU;
using internal::ExportFrame;
using internal::Place;
using internal::RawNode;
using internal::TwoPassInput;
using internal::Walk;

// Ends a walk whose output failed; Output::Commit() reports why.
Status WriteFailed() { return IoError("write failed"); }

// ---------------------------------------------------------------- JSON Lines

void AppendLiteralOrRef(std::string& out, const RawNode& node, uint32_t code, uint32_t* ref) {
  if (code == 0) {
    out += "{\"id\":";
    AppendU(out, node.ref((*ref)++));
    out += '}';
    return;
  }
  Value v = node.chunk().literal(code);
  out += "{\"const\":";
  AppendJsonValue(out, v);
  out += ",\"type\":";
  AppendJsonString(out, TypeName(v));
  out += '}';
}

void AppendJsonLine(std::string& out, const RawNode& node, const Place& place,
                    const JsonValueOptions& vo) {
  out += "{\"id\":";
  AppendU(out, node.id());
  out += ",\"path\":";
  if (place.has_path) {
    AppendJsonString(out, place.path);
  } else {
    out += "null";
  }
  out += ",\"depth\":";
  AppendU(out, place.depth);
  out += ",\"parent\":";
  if (place.parent == kNoNode) {
    out += "null";
  } else {
    AppendU(out, place.parent);
  }
  out += ",\"pos\":";
  AppendU(out, place.pos);
  out += ",\"kind\":";
  AppendJsonString(out, NodeKindName(node.kind()));
  out += ",\"op\":";
  if (node.op().empty() && node.cls().op_index == ~0u) {
    out += "null";
  } else {
    AppendJsonString(out, node.op());
  }
  Location l = node.location();
  std::string loc;
  internal::AppendLocation(loc, l);
  out += ",\"location\":";
  AppendJsonString(out, loc);
  if (l.line != 0) {
    out += ",\"line\":";
    AppendU(out, l.line);
    out += ",\"col\":";
    AppendU(out, l.col);
  }
  const NodeKind kind = node.kind();
  if (kind == NodeKind::kJump) {
    out += ",\"target\":";
    AppendU(out, node.aux());
  }
  if (kind == NodeKind::kArgument && node.aux() != 0) {
    out += ",\"block_arg\":";
    AppendU(out, node.aux());
  }
  if (internal::IsCloser(kind)) {
    out += ",\"closes\":";
    AppendU(out, node.closes());
  }
  uint32_t n = node.num_operands();
  bool cond = kind == NodeKind::kJump && node.has_condition();
  uint32_t nargs = n - (cond ? 1 : 0);
  uint32_t ref = 0;
  out += ",\"args\":[";
  for (uint32_t j = 0; j < nargs; ++j) {
    if (j) out += ',';
    AppendLiteralOrRef(out, node, node.operand_code(j), &ref);
  }
  out += ']';
  if (cond) {
    out += ",\"condition\":";
    AppendLiteralOrRef(out, node, node.operand_code(n - 1), &ref);
    out += ",\"taken_when\":";
    out += (node.flags() & 2) != 0 ? "true" : "false";
  }
  if (node.vkind() != VKind::kNone) AppendJsonValueFields(out, node.value(), vo);
  AppendJsonMetaField(out, node.meta(), vo);
  out += "}\n";
}

Status ExportJsonl(const std::string& path, const ExportOptions& opts, Output& out) {
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, ChunkStream::Open(path, opts.progress));
  JsonValueOptions vo;
  vo.max_elements = opts.max_elements;
  std::string buf;
  Status s = Walk(
      stream,
      [&](const RawNode& node, const Place& place, std::vector<ExportFrame>&, uint32_t&) -> Status {
        AppendJsonLine(buf, node, place, vo);
        if (buf.size() >= (1 << 16)) {
          out.Write(buf);
          buf.clear();
          if (out.failed()) return WriteFailed();
        }
        return Status::Ok();
      });
  out.Write(buf);
  return s;
}

// ---------------------------------------------------------------- profiles

// A call site: the callee and where the call stands, "geom §2:%7".
struct Site {
  std::string name;
  uint32_t line = 0;
  uint16_t col = 0;
};

// The call sites of a trace, numbered in order of first call.
class Sites {
 public:
  uint32_t Of(const RawNode& marker) {
    Location l = marker.location();
    std::string name(marker.op());
    if (l.block != 0 || l.pos != 0) {  // the root call stands nowhere
      name += ' ';
      internal::AppendLocation(name, l);
    }
    auto it = index_.find(name);
    if (it != index_.end()) return it->second;
    uint32_t k = static_cast<uint32_t>(sites_.size());
    index_.emplace(name, k);
    sites_.push_back({std::move(name), l.line, l.col});
    return k;
  }
  const std::vector<Site>& all() const { return sites_; }

 private:
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<Site> sites_;
};

void AppendSpanArgs(std::string& out, const Place& place, NodeId marker) {
  out += "\"args\":{\"id\":";
  AppendU(out, marker);
  out += ",\"path\":";
  if (place.has_path) {
    AppendJsonString(out, place.path);
  } else {
    out += "null";
  }
  out += '}';
}

// The recorded time of a call's marker or closer: its metadata time_ns, a
// number (nanoseconds on one monotonic clock), if it has one.
std::optional<double> TimeOf(const RawNode& node) {
  for (const MetaEntry& m : node.meta()) {
    if (m.key == kExportTimeKey && m.value.is_scalar() && m.value.kind() != VKind::kBool) {
      double t = m.value.to_double();
      if (std::isfinite(t)) return t;
    }
  }
  return std::nullopt;
}

Status ExportProfile(const std::string& path, const ExportOptions& opts, Output& out) {
  const bool speedscope = opts.format == ExportFormat::kSpeedscope;
  const uint64_t limit = opts.max_depth != 0
                             ? opts.max_depth
                             : (speedscope ? kSpeedscopeMaxDepth : kChromeTraceMaxDepth);
  TwoPassInput input;
  IRT_RETURN_IF_ERROR(input.Prepare(path));
  // Pass 1: the depth, the call sites and the root; nothing is written.
  Sites sites;
  uint64_t deepest = 0, total = 0;
  // Spans are as wide as their recorded times when every call's marker and
  // closer has one and they never decrease in execution order; else as
  // wide as their nodes.
  bool timed = true;
  double t_first = 0, t_last = 0;
  NodeId deepest_marker = kNoNode;
  std::string root_name;
  // The second pass's stream is opened with the first, so that a progress
  // count has both passes in its total from the start.
  IRT_ASSIGN_OR_RETURN(ChunkStream second, input.Open(opts.progress));
  {
    IRT_ASSIGN_OR_RETURN(ChunkStream stream, input.Open(opts.progress));
    IRT_RETURN_IF_ERROR(Walk(stream,
                             [&](const RawNode& node, const Place& place, std::vector<ExportFrame>&,
                                 uint32_t&) -> Status {
                               ++total;
                               bool call = node.kind() == NodeKind::kCall;
                               if (timed && (call || internal::IsCloser(node.kind()))) {
                                 std::optional<double> t = TimeOf(node);
                                 if (!t || (total > 1 && *t < t_last)) {
                                   timed = false;
                                 } else {
                                   if (total == 1) t_first = *t;
                                   t_last = *t;
                                 }
                               }
                               if (!call) return Status::Ok();
                               if (place.depth + 1 > deepest) {
                                 deepest = place.depth + 1;
                                 deepest_marker = node.id();
                               }
                               if (place.depth == 0) root_name = node.op();
                               sites.Of(node);
                               return Status::Ok();
                             }));
    if (deepest > limit) {
      std::string why = opts.max_depth != 0 ? "--max-depth " + std::to_string(limit)
                        : speedscope ? "--speedscope's default limit of " + std::to_string(limit)
                                     : "the " + std::to_string(limit) + " levels Perfetto keeps";
      return DataError(stream.name() + ": calls nest " + std::to_string(deepest) + " deep (node " +
                       std::to_string(deepest_marker) + "), deeper than " + why +
                       (opts.max_depth != 0 ? "" : " (--max-depth N sets another)"));
    }
  }
  // Pass 2: the spans, in execution order.
  ChunkStream stream = std::move(second);
  // Where an event stands: its recorded time from the root call's start
  // (nanoseconds), or its node's number.
  auto at = [&](const RawNode& node, uint64_t count) {
    return timed ? *TimeOf(node) - t_first : static_cast<double>(count);
  };
  // A position or length: node counts as integers, times as floats.
  auto append_number = [&](std::string& b, double v) {
    if (timed) {
      AppendJsonDouble(b, v);
    } else {
      AppendU(b, static_cast<uint64_t>(v));
    }
  };
  std::string buf;
  bool first = true;
  if (speedscope) {
    buf += "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":";
    AppendJsonString(buf, opts.exporter);
    buf += ",\"name\":";
    AppendJsonString(buf, root_name);
    buf += ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[";
    for (size_t k = 0; k < sites.all().size(); ++k) {
      const Site& s = sites.all()[k];
      if (k) buf += ',';
      buf += "{\"name\":";
      AppendJsonString(buf, s.name);
      if (s.line != 0) {
        buf += ",\"line\":";
        AppendU(buf, s.line);
        buf += ",\"col\":";
        AppendU(buf, s.col);
      }
      buf += '}';
    }
    buf += "]},\"profiles\":[{\"type\":\"evented\",\"name\":";
    AppendJsonString(buf, root_name);
    buf += timed ? ",\"unit\":\"nanoseconds\"" : ",\"unit\":\"none\"";
    buf += ",\"startValue\":0,\"endValue\":";
    append_number(buf, timed ? t_last - t_first : static_cast<double>(total));
    buf += ",\"events\":[";
  } else {
    buf += "{\"otherData\":{\"exporter\":";
    AppendJsonString(buf, opts.exporter);
    buf += timed ? ",\"unit\":\"microseconds, as recorded\"},\"traceEvents\":["
                 : ",\"unit\":\"one microsecond per node\"},\"traceEvents\":[";
    buf += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":";
    AppendJsonString(buf, opts.exporter);
    buf += "}},{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":";
    AppendJsonString(buf, root_name);
    buf += "}}";
    first = false;
  }
  std::vector<std::string> open_args;  // chrome: each open call's "args" member
  std::vector<double> open_start;      // chrome: each open call's start
  Status s = Walk(stream,
                  [&](const RawNode& node, const Place& place, std::vector<ExportFrame>& frames,
                      uint32_t& tag) -> Status {
                    if (node.kind() == NodeKind::kCall) {
                      uint32_t site = sites.Of(node);
                      if (speedscope) {
                        buf += first ? "{\"type\":\"O\",\"frame\":" : ",{\"type\":\"O\",\"frame\":";
                        AppendU(buf, site);
                        buf += ",\"at\":";
                        append_number(buf, at(node, node.id()));
                        buf += '}';
                        first = false;
                      } else {
                        open_start.push_back(at(node, node.id()));
                        std::string a;
                        AppendSpanArgs(a, place, node.id());
                        open_args.push_back(std::move(a));
                      }
                      tag = site;  // kept in the call's frame, for its close
                    } else if (internal::IsCloser(node.kind())) {
                      const ExportFrame& f = frames.back();
                      if (speedscope) {
                        buf += ",{\"type\":\"C\",\"frame\":";
                        AppendU(buf, f.site);
                        buf += ",\"at\":";
                        append_number(buf, at(node, node.id() + 1));
                        buf += '}';
                      } else {
                        double start = open_start.back(), end = at(node, node.id() + 1);
                        open_start.pop_back();
                        double scale = timed ? 1e-3 : 1.0;  // ns to the format's microseconds
                        buf += ",{\"name\":";
                        AppendJsonString(buf, sites.all()[f.site].name);
                        buf += ",\"cat\":\"call\",\"ph\":\"X\",\"ts\":";
                        append_number(buf, start * scale);
                        buf += ",\"dur\":";
                        append_number(buf, (end - start) * scale);
                        buf += ",\"pid\":1,\"tid\":1,";
                        buf += open_args.back();
                        buf += '}';
                        open_args.pop_back();
                      }
                    }
                    if (buf.size() >= (1 << 16)) {
                      out.Write(buf);
                      buf.clear();
                      if (out.failed()) return WriteFailed();
                    }
                    return Status::Ok();
                  });
  if (!s.ok()) return s;
  buf += speedscope ? "]}]}\n" : "]}\n";
  out.Write(buf);
  return Status::Ok();
}

}  // namespace

Status ExportTrace(const std::string& path, const ExportOptions& opts, Output& out) {
  Status s;
  switch (opts.format) {
    case ExportFormat::kJsonl:
      s = ExportJsonl(path, opts, out);
      break;
    case ExportFormat::kPython:
      s = internal::ExportPython(path, opts, out);
      break;
    case ExportFormat::kC:
      s = internal::ExportC(path, opts, out);
      break;
    default:
      s = ExportProfile(path, opts, out);
      break;
  }
  if (!s.ok() && out.failed()) return Status::Ok();  // Commit() says why
  return s;
}

}  // namespace irt
