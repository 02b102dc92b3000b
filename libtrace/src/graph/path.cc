// The node-path resolver shared by irt::ResolvePath, irt-slice and
// irt-replay (path.h).
#include "graph/path.h"

#include <string>

#include "io/column_reader.h"

namespace irt::internal {

namespace {

Status NotNested(std::string_view path, const std::string& walked) {
  return UsageError("bad node path '" + std::string(path) + "': " + walked +
                    " is not a nested call");
}

Status NoSuchChild(std::string_view path, const std::string& walked, uint64_t children,
                   uint64_t pos) {
  return NotFound("node path '" + std::string(path) +
                  "': " + (walked.empty() ? "the root call" : walked) + " has " +
                  std::to_string(children) + " children, no @" + std::to_string(pos));
}

// The child at 1-based `pos` of the call opened at `marker`, found by
// counting children forward over raw node kinds (a nested call's body is
// skipped by depth). `children` gets the count seen when there is none.
Result<Child> ScanChild(ColumnReader& r, NodeId marker, uint64_t pos, uint64_t* children,
                        bool* found) {
  const NodeId size = r.trace().size();
  RawNode n;
  auto kind = [&](NodeId id) -> Result<NodeKind> {
    if (!r.Cached(id, &n)) IRT_RETURN_IF_ERROR(r.ReadEntering(id, &n));
    return n.kind();
  };
  *found = false;
  uint64_t count = 0;
  for (NodeId i = marker + 1; i < size; ++i) {
    IRT_ASSIGN_OR_RETURN(NodeKind k, kind(i));
    if (count == pos - 1) {
      *found = true;
      return k == NodeKind::kCall ? Child{i, kNoNode} : Child{i, i};
    }
    ++count;
    if (IsCloser(k)) break;
    if (k == NodeKind::kCall) {
      uint64_t depth = 1;
      while (depth > 0 && ++i < size) {
        IRT_ASSIGN_OR_RETURN(NodeKind kk, kind(i));
        if (kk == NodeKind::kCall) ++depth;
        if (IsCloser(kk)) --depth;
      }
    }
  }
  *children = count;
  return Child{};
}

}  // namespace

Result<NodePath> LocatePath(const Trace& trace, std::string_view path, PathWalk walk) {
  NodePath out;
  IRT_ASSIGN_OR_RETURN(Child root, RootCall(trace));
  out.chain.push_back(root);
  out.node = root;
  IRT_ASSIGN_OR_RETURN(std::vector<uint64_t> positions, ParseNodePath(path));
  std::optional<ColumnReader> reader;
  if (walk == PathWalk::kScan && !positions.empty()) reader.emplace(trace);
  std::string walked;
  for (uint64_t pos : positions) {
    if (!out.node.is_call()) return NotNested(path, walked);
    if (out.pos >= 0) out.chain.push_back(out.node);
    if (walk == PathWalk::kBodies) {
      IRT_ASSIGN_OR_RETURN(CallBody body, CallBody::Load(trace, out.node));
      if (pos > body.size()) return NoSuchChild(path, walked, body.size(), pos);
      out.node = body[pos - 1];
      out.body = std::move(body);
    } else {
      uint64_t children = 0;
      bool found = false;
      IRT_ASSIGN_OR_RETURN(out.node, ScanChild(*reader, out.node.id, pos, &children, &found));
      if (!found) return NoSuchChild(path, walked, children, pos);
    }
    out.pos = static_cast<int64_t>(pos - 1);
    walked += (walked.empty() ? "@" : "/@") + std::to_string(pos);
  }
  return out;
}

// "@8/@6": the positions of a node and of the calls that contain it.
Result<std::string> PathOf(const Trace& t, NodeId id) {
  ColumnReader r(t);
  RawNode n;
  std::vector<uint64_t> parts;
  NodeId cur = id;
  while (cur != 0) {
    uint64_t count = 0;
    NodeId i = cur, parent = kNoNode;
    while (i > 0) {
      NodeId prev = i - 1;
      if (!r.Cached(prev, &n)) IRT_RETURN_IF_ERROR(r.ReadEntering(prev, &n));
      NodeKind k = n.kind();
      if (IsCloser(k)) {
        IRT_ASSIGN_OR_RETURN(NodeView v, t.node(prev));
        i = v.closes();
        ++count;
      } else if (k == NodeKind::kCall) {
        parent = prev;
        break;
      } else {
        i = prev;
        ++count;
      }
    }
    if (parent == kNoNode) {
      return DataError(t.name() + ": node " + std::to_string(id) + " is outside every call");
    }
    parts.push_back(count + 1);
    cur = parent;
  }
  std::string out;
  for (size_t i = parts.size(); i-- > 0;) {
    out += i + 1 == parts.size() ? "@" : "/@";
    out += std::to_string(parts[i]);
  }
  return out.empty() ? std::string("@") : out;
}

}  // namespace irt::internal
