// Exports in one streaming walk over a ChunkStream. The walk keeps one frame
// per open call (its marker, the positions handed out in its body, the
// length of its path, the span it opened) and nothing per node, so memory is
// bounded by the call depth; the profile formats add a table of the call
// sites they name. Values are written by irt/json.h, locations by the node
// notation, so an export says what irt-print --json says.
#include "irt/export.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/chunk.h"
#include "io/column_reader.h"
#include "io/tempfile.h"
#include "irt/json.h"
#include "irt/trace.h"
#include "print/notation.h"

namespace irt {

namespace {

using internal::ChunkColumns;
using internal::RawNode;

void AppendU(std::string& out, uint64_t v) {
  char buf[24];
  char* p = buf + sizeof(buf);
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  out.append(p, static_cast<size_t>(buf + sizeof(buf) - p));
}

// One open call of the walk.
struct Frame {
  NodeId marker = 0;
  uint64_t children = 0;  // positions handed out in its body so far
  size_t path_len = 0;    // length of the body's path prefix ("" for the root's body)
  bool has_path = true;   // whether the body's nodes get a path
  uint32_t site = 0;      // profile formats: the call site it opened
};

// What the walk tells a format about each node.
struct Place {
  uint64_t depth = 0;  // calls open around the node (0 for the root marker)
  NodeId parent = kNoNode;
  uint64_t pos = 0;  // 1-based position in the parent's body; 0 for the root
  bool has_path = false;
  std::string_view path;  // "@8/@4", "@" for the root marker
};

// Walks a trace in execution order, keeping the call stack and each node's
// path. `visit(node, place, frames, tag)` sees every node; for a closer it
// is called before the call is popped, and for a call marker before its
// frame is pushed, with `tag` the value the new frame keeps (Frame::site). Checks that calls nest
// and that the trace is complete (its final chunk present and agreeing with the nodes read).
template <typename Visit>
Status Walk(ChunkStream& stream, Visit&& visit) {
  std::vector<Frame> frames;
  std::string path;
  internal::CallStack calls;
  uint64_t nodes = 0;
  bool last = false;
  for (;;) {
    IRT_ASSIGN_OR_RETURN(const ChunkColumns* c, stream.Next());
    if (c == nullptr) break;
    const ChunkInfo& info = stream.info();
    NodeId failed = kNoNode;
    Status cs = calls.Feed(*c, &failed);
    if (!cs.ok()) {
      return DataError(stream.name() + ": " + internal::At(info.index, failed, cs.message()));
    }
    for (uint32_t local = 0; local < c->count; ++local) {
      const RawNode node(c, local);
      Place place;
      place.depth = frames.size();
      if (!frames.empty()) {
        Frame& f = frames.back();
        place.parent = f.marker;
        place.pos = ++f.children;
        path.resize(f.path_len);
        place.has_path = f.has_path;
        if (f.has_path) {
          path += path.empty() ? "@" : "/@";
          AppendU(path, place.pos);
        }
      } else {
        path = "@";
        place.has_path = true;
      }
      place.path = path;
      uint32_t tag = 0;
      IRT_RETURN_IF_ERROR(visit(node, place, frames, tag));
      if (node.kind() == NodeKind::kCall) {
        Frame f;
        f.site = tag;
        f.marker = node.id();
        f.has_path = place.has_path && frames.size() < kExportPathDepth;
        // The root's body numbers from "@1", a nested body from its call's path.
        f.path_len = frames.empty() || !f.has_path ? 0 : path.size();
        if (frames.empty()) path.clear();
        frames.push_back(f);
      } else if (internal::IsCloser(node.kind())) {
        frames.pop_back();
      }
    }
    nodes += c->count;
    if (info.last) {
      last = true;
      Status fs = internal::CheckFinalChunk(*c, nodes, calls);
      if (!fs.ok()) return fs.Prefixed(stream.name());
    }
  }
  if (!last) return DataError(stream.name() + ": trace is incomplete: no final chunk");
  return Status::Ok();
}

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
  if (node.vkind() != VKind::kNone) {
    Value v = node.value();
    out += ",\"value\":";
    AppendJsonValue(out, v, vo);
    out += ",\"type\":";
    AppendJsonString(out, TypeName(v));
  }
  auto meta = node.meta();
  if (!meta.empty()) {
    out += ",\"meta\":{";
    for (size_t i = 0; i < meta.size(); ++i) {
      if (i) out += ',';
      AppendJsonString(out, meta[i].key);
      out += ':';
      AppendJsonValue(out, meta[i].value, vo);
    }
    out += '}';
  }
  out += "}\n";
}

Status ExportJsonl(const std::string& path, const ExportOptions& opts, Output& out) {
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, ChunkStream::Open(path));
  JsonValueOptions vo;
  vo.max_elements = opts.max_elements;
  std::string buf;
  Status s =
      Walk(stream,
           [&](const RawNode& node, const Place& place, std::vector<Frame>&, uint32_t&) -> Status {
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

// The input, readable twice: a named file, or standard input (copied to an
// unlinked temporary file when it is not a regular file).
class TwoPassInput {
 public:
  ~TwoPassInput() {
    if (spool_ >= 0) close(spool_);
  }
  Status Prepare(const std::string& path) {
    if (path != "-") {
      path_ = path;
      name_ = path;
      stdin_ = false;
      return Status::Ok();
    }
    name_ = "<stdin>";
    struct stat st;
    if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
      path_ = "/dev/stdin";
      return Status::Ok();
    }
    IRT_ASSIGN_OR_RETURN(spool_, internal::CreateSpoolFile("standard input"));
    std::vector<char> buf(1 << 16);
    for (;;) {
      ssize_t got = read(STDIN_FILENO, buf.data(), buf.size());
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return IoError(name_ + ": cannot read: " + strerror(errno));
      if (got == 0) break;
      int err = internal::WriteAll(spool_, buf.data(), static_cast<size_t>(got));
      if (err != 0) return IoError("cannot spool standard input: " + std::string(strerror(err)));
    }
    path_ = "/proc/self/fd/" + std::to_string(spool_);
    return Status::Ok();
  }
  Result<ChunkStream> Open() const {
    if (!stdin_) return ChunkStream::Open(path_);
    return ChunkStream::OpenAs(path_, name_);
  }

 private:
  std::string path_, name_;
  bool stdin_ = true;
  int spool_ = -1;
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
  NodeId deepest_marker = kNoNode;
  std::string root_name;
  {
    IRT_ASSIGN_OR_RETURN(ChunkStream stream, input.Open());
    IRT_RETURN_IF_ERROR(Walk(
        stream,
        [&](const RawNode& node, const Place& place, std::vector<Frame>&, uint32_t&) -> Status {
          ++total;
          if (node.kind() != NodeKind::kCall) return Status::Ok();
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
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, input.Open());
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
    buf += ",\"unit\":\"none\",\"startValue\":0,\"endValue\":";
    AppendU(buf, total);
    buf += ",\"events\":[";
  } else {
    buf += "{\"otherData\":{\"exporter\":";
    AppendJsonString(buf, opts.exporter);
    buf += ",\"unit\":\"one microsecond per node\"},\"traceEvents\":[";
    buf += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":";
    AppendJsonString(buf, opts.exporter);
    buf += "}},{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":";
    AppendJsonString(buf, root_name);
    buf += "}}";
    first = false;
  }
  std::vector<std::string> open_args;  // chrome: each open call's "args" member
  Status s = Walk(stream,
                  [&](const RawNode& node, const Place& place, std::vector<Frame>& frames,
                      uint32_t& tag) -> Status {
                    if (node.kind() == NodeKind::kCall) {
                      uint32_t site = sites.Of(node);
                      if (speedscope) {
                        buf += first ? "{\"type\":\"O\",\"frame\":" : ",{\"type\":\"O\",\"frame\":";
                        AppendU(buf, site);
                        buf += ",\"at\":";
                        AppendU(buf, node.id());
                        buf += '}';
                        first = false;
                      } else {
                        std::string a;
                        AppendSpanArgs(a, place, node.id());
                        open_args.push_back(std::move(a));
                      }
                      tag = site;  // kept in the call's frame, for its close
                    } else if (internal::IsCloser(node.kind())) {
                      const Frame& f = frames.back();
                      if (speedscope) {
                        buf += ",{\"type\":\"C\",\"frame\":";
                        AppendU(buf, f.site);
                        buf += ",\"at\":";
                        AppendU(buf, node.id() + 1);
                        buf += '}';
                      } else {
                        buf += ",{\"name\":";
                        AppendJsonString(buf, sites.all()[f.site].name);
                        buf += ",\"cat\":\"call\",\"ph\":\"X\",\"ts\":";
                        AppendU(buf, f.marker);
                        buf += ",\"dur\":";
                        AppendU(buf, node.id() + 1 - f.marker);
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
  Status s = opts.format == ExportFormat::kJsonl ? ExportJsonl(path, opts, out)
                                                 : ExportProfile(path, opts, out);
  if (!s.ok() && out.failed()) return Status::Ok();  // Commit() says why
  return s;
}

}  // namespace irt
