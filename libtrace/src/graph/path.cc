// The node-path resolver shared by irt::ResolvePath, irt-slice and
// irt-replay (path.h).
#include "graph/path.h"

#include <optional>
#include <string>
#include <vector>

#include "io/column_reader.h"
#include "io/leave_behind.h"

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

// Reads node kinds through one column reader.
class Kinds {
 public:
  explicit Kinds(ColumnReader& r) : r_(r) {}
  Result<RawNode> operator()(NodeId id) {
    if (!r_.Cached(id, &n_)) IRT_RETURN_IF_ERROR(r_.ReadEntering(id, &n_));
    return n_;
  }
  const Trace& trace() const { return r_.trace(); }

 private:
  ColumnReader& r_;
  RawNode n_;
};

// The forward walk over a call's body, one node per Step: counts its
// children, a nested call's body skipped by depth (the ends of nested
// calls are found on the way). A call found at the position asked for
// comes with its end when `want_end` (the walk goes on over its body),
// else with kNoNode.
class ForwardWalk {
 public:
  ForwardWalk(NodeId marker, NodeId size, bool want_end)
      : i_(marker + 1), size_(size), want_end_(want_end) {}
  // Reads one node. Returns true once the walk is over: it reached the
  // child at 0-based `want` (*child), or the body's end or the trace's
  // (*child stays empty; children() is the count).
  Result<bool> Step(Kinds& kinds, uint64_t want, Child* child) {
    if (i_ >= size_) return true;
    IRT_ASSIGN_OR_RETURN(RawNode n, kinds(i_));
    const NodeKind k = n.kind();
    const NodeId i = i_++;
    if (depth_ > 0) {
      if (k == NodeKind::kCall) ++depth_;
      if (IsCloser(k) && --depth_ == 0) {
        if (nested_ == target_) {
          *child = {nested_, i};
          return true;
        }
      }
      return false;
    }
    if (count_ == want) {
      if (k != NodeKind::kCall || !want_end_) {
        *child = {i, k == NodeKind::kCall ? kNoNode : i};
        return true;
      }
      // The child is a call: walk on over its body for its end.
      target_ = i;
    }
    ++count_;
    if (IsCloser(k)) return true;
    if (k == NodeKind::kCall) {
      depth_ = 1;
      nested_ = i;
    }
    return false;
  }
  uint64_t children() const { return count_; }
  // The next node the walk reads.
  NodeId at() const { return i_; }
  // The call found at `want` whose end the walk is still looking for.
  NodeId pending() const { return target_; }

 private:
  NodeId i_;
  NodeId size_;
  bool want_end_;
  uint64_t depth_ = 0;
  uint64_t count_ = 0;
  NodeId nested_ = kNoNode;
  NodeId target_ = kNoNode;
};

// The child at 1-based `pos` of the call opened at `marker` by the forward
// walk alone (PathWalk::kScan): a call child without its end.
// `children` gets the count seen when there is none. The chunks the scan
// has left are given back once each (Trace::ReleaseColumns: nothing
// unless the trace reads with transient columns).
Result<Child> ScanChild(Kinds& kinds, NodeId marker, uint64_t pos, uint64_t* children,
                        bool* found) {
  const Trace& t = kinds.trace();
  ForwardWalk fw(marker, t.size(), /*want_end=*/false);
  Child child;
  *found = false;
  LeaveBehind behind(t, LeaveBehind::kForward, marker);
  for (;;) {
    if (fw.at() < t.size()) behind.Step(fw.at());
    IRT_ASSIGN_OR_RETURN(bool done, fw.Step(kinds, pos - 1, &child));
    if (child.id != kNoNode) {
      *found = true;
      return child;
    }
    if (done) {
      *children = fw.children();
      return Child{};
    }
  }
}

// The backward walk over a closed call's body (CallBody's), one node per
// Step: from the closing node, which is the last child, back to the
// marker, hopping from each nested call's closer to its marker. Keeps the
// children it passes as CallBody does, in segments (a run of plain nodes
// is one), last first.
class BackwardWalk {
 public:
  explicit BackwardWalk(const Child& call) : call_(call), j_(call.end) {}
  // Reads one node; true once the walk reached the marker.
  Result<bool> Step(Kinds& kinds) {
    if (j_ == call_.end) {
      Leaf(j_);
      --j_;
      return j_ <= call_.id;
    }
    IRT_ASSIGN_OR_RETURN(RawNode n, kinds(j_));
    const NodeKind k = n.kind();
    if (IsCloser(k)) {
      const NodeId m = n.closes();
      const NodeId at = j_;
      if (m <= call_.id) return BadLink(kinds.trace(), at, m);
      IRT_ASSIGN_OR_RETURN(RawNode mn, kinds(m));
      if (mn.kind() != NodeKind::kCall) return BadLink(kinds.trace(), at, m);
      segs_.push_back({m, at, true});
      ++children_;
      j_ = m;
    } else if (k == NodeKind::kCall) {
      return UnclosedInParent(kinds.trace(), j_);
    } else {
      Leaf(j_);
    }
    --j_;
    return j_ <= call_.id;
  }
  // Once the walk is over: the body's number of children, and its child at
  // 1-based `pos` (<= children()).
  uint64_t children() const { return children_; }
  NodeId at() const { return j_; }
  Child At(uint64_t pos) const {
    uint64_t from_end = children_ - pos;  // children after it
    for (const Segment& s : segs_) {
      if (from_end < s.children()) {
        if (s.call) return {s.first, s.last};
        NodeId id = s.last - from_end;
        return {id, id};
      }
      from_end -= s.children();
    }
    return Child{};
  }

 private:
  void Leaf(NodeId id) {
    if (!segs_.empty() && !segs_.back().call && segs_.back().first == id + 1) {
      segs_.back().first = id;
    } else {
      segs_.push_back({id, id, false});
    }
    ++children_;
  }
  Child call_;
  NodeId j_;
  std::vector<Segment> segs_;
  uint64_t children_ = 0;
};

// The child at 1-based `pos` of `call` by the two walks at once (PathWalk::
// kEnds); a call child comes with its end (kNoNode if it never closes).
Result<Child> FindChild(Kinds& kinds, const Child& call, uint64_t pos, uint64_t* children,
                        bool* found) {
  *found = false;
  const NodeId size = kinds.trace().size();
  ForwardWalk fw(call.id, size, /*want_end=*/true);
  std::optional<BackwardWalk> bw;
  if (call.end != kNoNode) bw.emplace(call);
  Child child;
  bool fw_done = false;
  // Each walk gives back the chunks it leaves: they move apart from the
  // ends, and one of them answers before they meet.
  LeaveBehind ahead(kinds.trace(), LeaveBehind::kForward, call.id);
  LeaveBehind back(kinds.trace(), LeaveBehind::kBackward, bw ? call.end : call.id);
  for (;;) {
    if (!fw_done) {
      if (fw.at() < size) ahead.Step(fw.at());
      IRT_ASSIGN_OR_RETURN(fw_done, fw.Step(kinds, pos - 1, &child));
      if (child.id != kNoNode) {
        *found = true;
        return child;
      }
      if (fw_done && fw.pending() == kNoNode) {
        *children = fw.children();
        return Child{};
      }
      if (fw_done) {
        // The trace ended inside the child call.
        *found = true;
        return Child{fw.pending(), kNoNode};
      }
    }
    if (bw) {
      back.Step(bw->at());
      IRT_ASSIGN_OR_RETURN(bool done, bw->Step(kinds));
      if (done) {
        *children = bw->children();
        if (pos > bw->children()) return Child{};
        *found = true;
        return bw->At(pos);
      }
    }
  }
}

}  // namespace

Result<NodePath> LocatePath(const Trace& trace, std::string_view path, PathWalk walk) {
  NodePath out;
  IRT_ASSIGN_OR_RETURN(Child root, RootCall(trace));
  out.chain.push_back(root);
  out.node = root;
  IRT_ASSIGN_OR_RETURN(std::vector<uint64_t> positions, ParseNodePath(path));
  std::optional<ColumnReader> reader;
  if (walk != PathWalk::kBodies && !positions.empty()) reader.emplace(trace);
  std::optional<Kinds> kinds;
  if (reader) kinds.emplace(*reader);
  std::string walked;
  for (uint64_t pos : positions) {
    if (!out.node.is_call()) return NotNested(path, walked);
    if (out.pos >= 0) out.chain.push_back(out.node);
    if (walk == PathWalk::kBodies) {
      IRT_ASSIGN_OR_RETURN(CallBody body, CallBody::Load(trace, out.node));
      if (pos > body.size()) return NoSuchChild(path, walked, body.size(), pos);
      out.node = body[pos - 1];
      out.body = std::move(body);
    } else if (walk == PathWalk::kEnds) {
      uint64_t children = 0;
      bool found = false;
      IRT_ASSIGN_OR_RETURN(out.node, FindChild(*kinds, out.node, pos, &children, &found));
      if (!found) return NoSuchChild(path, walked, children, pos);
    } else {
      uint64_t children = 0;
      bool found = false;
      IRT_ASSIGN_OR_RETURN(out.node, ScanChild(*kinds, out.node.id, pos, &children, &found));
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
