// Internal: the walk every export shares. It reads a ChunkStream in
// execution order and keeps one frame per open call (its marker, the
// positions handed out in its body, its path) and nothing per node, so
// memory is bounded by the call depth.
#ifndef IRT_SRC_ANALYSES_EXPORT_WALK_H_
#define IRT_SRC_ANALYSES_EXPORT_WALK_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "io/chunk.h"
#include "io/column_reader.h"
#include "io/tempfile.h"
#include "irt/export.h"
#include "irt/trace.h"
#include "print/notation.h"

namespace irt::internal {

// One open call of the walk.
struct ExportFrame {
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
// frame is pushed, with `tag` the value the new frame keeps (ExportFrame::site). Checks that calls
// nest and that the trace is complete (its final chunk present and agreeing with the nodes read).
template <typename Visit>
Status Walk(ChunkStream& stream, Visit&& visit) {
  std::vector<ExportFrame> frames;
  std::string path;
  internal::StreamCheck check(stream.name());
  for (;;) {
    IRT_ASSIGN_OR_RETURN(const ChunkColumns* c, stream.Next());
    if (c == nullptr) break;
    IRT_RETURN_IF_ERROR(check.Feed(*c, stream.info()));
    for (uint32_t local = 0; local < c->count; ++local) {
      const RawNode node(c, local);
      Place place;
      place.depth = frames.size();
      if (!frames.empty()) {
        ExportFrame& f = frames.back();
        place.parent = f.marker;
        place.pos = ++f.children;
        place.has_path = f.has_path;
        if (f.has_path) {
          // Bodies too deep for paths leave `path` alone: it still holds the
          // prefix of the deepest body that has one.
          path.resize(f.path_len);
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
        ExportFrame f;
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
  }
  return check.Finish();
}

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
  Result<ChunkStream> Open(Progress* progress) const {
    if (!stdin_) return ChunkStream::Open(path_, progress);
    return ChunkStream::OpenAs(path_, name_, progress);
  }

 private:
  std::string path_, name_;
  bool stdin_ = true;
  int spool_ = -1;
};

/// --python and --c: the trace as straight-line code (export_code.cc).
Status ExportPython(const std::string& path, const ExportOptions& opts, Output& out);
Status ExportC(const std::string& path, const ExportOptions& opts, Output& out);

}  // namespace irt::internal

#endif  // IRT_SRC_ANALYSES_EXPORT_WALK_H_
