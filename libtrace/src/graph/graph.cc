// Call-tree navigation and IRTracker's dependency queries. Walks are loops
// with explicit state; a closed call's body is skipped in one step through
// the link from its Return back to its marker.
#include "irt/graph.h"

#include <algorithm>
#include <charconv>

#include "graph/path.h"
#include "io/column_reader.h"
#include "io/leave_behind.h"

namespace irt {

namespace internal {

Status BadLink(const Trace& t, NodeId at, NodeId marker) {
  return DataError(t.name() + ": node " + std::to_string(at) + " closes node " +
                   std::to_string(marker) + ", which is not a call marker of this body");
}

Status UnclosedInParent(const Trace& t, NodeId at) {
  return DataError(t.name() + ": node " + std::to_string(at) +
                   " opens a call that is never closed inside its parent");
}

}  // namespace internal

namespace {
using internal::BadLink;
using internal::IsCloser;
}  // namespace

Result<Child> RootCall(const Trace& trace) {
  if (trace.size() == 0) return DataError(trace.name() + ": the trace has no nodes");
  IRT_ASSIGN_OR_RETURN(NodeView first, trace.node(0));
  if (first.kind() != NodeKind::kCall) {
    return DataError(trace.name() + ": node 0 does not open the root call");
  }
  Child root{0, kNoNode};
  if (trace.complete()) {
    IRT_ASSIGN_OR_RETURN(NodeView last, trace.node(trace.size() - 1));
    if (!IsCloser(last.kind()) || last.closes() != 0) {
      return DataError(trace.name() + ": the last node does not close the root call");
    }
    root.end = trace.size() - 1;
  }
  return root;
}

Result<std::vector<Segment>> BodySegments(const Trace& trace, const Child& call) {
  std::vector<Segment> out;
  if (!call.is_call()) return out;
  if (call.end != kNoNode) {
    // Walk back from the closing node, which is the body's last child (its
    // return statement), hopping over nested bodies. The chunks the walk
    // has left are given back once each (Trace::ReleaseColumns: nothing
    // unless the trace reads with transient columns).
    out.push_back({call.end, call.end, false});
    NodeId i = call.end;
    internal::LeaveBehind behind(trace, internal::LeaveBehind::kBackward, call.end);
    while (i > call.id + 1) {
      --i;
      behind.Step(i);
      IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(i));
      if (IsCloser(v.kind())) {
        NodeId m = v.closes();
        if (m <= call.id) return BadLink(trace, i, m);
        IRT_ASSIGN_OR_RETURN(NodeView mv, trace.node(m));
        if (mv.kind() != NodeKind::kCall) return BadLink(trace, i, m);
        out.push_back({m, i, true});
        i = m;
      } else if (v.kind() == NodeKind::kCall) {
        return internal::UnclosedInParent(trace, i);
      } else if (!out.back().call && out.back().first == i + 1) {
        out.back().first = i;
      } else {
        out.push_back({i, i, false});
      }
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
  // An unfinished call (partial trace): scan forward, counting depth, and
  // give back the chunks left behind as above.
  uint64_t depth = 0;
  internal::LeaveBehind behind(trace, internal::LeaveBehind::kForward, call.id);
  for (NodeId i = call.id + 1; i < trace.size(); ++i) {
    behind.Step(i);
    IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(i));
    if (depth == 0) {
      if (v.kind() == NodeKind::kCall) {
        out.push_back({i, kNoNode, true});
        depth = 1;
      } else {
        if (!out.empty() && !out.back().call && out.back().last + 1 == i) {
          out.back().last = i;
        } else {
          out.push_back({i, i, false});
        }
        if (IsCloser(v.kind())) break;
      }
    } else if (v.kind() == NodeKind::kCall) {
      ++depth;
    } else if (IsCloser(v.kind())) {
      if (--depth == 0) out.back().last = i;
    }
  }
  return out;
}

Result<std::vector<Child>> Children(const Trace& trace, const Child& call) {
  IRT_ASSIGN_OR_RETURN(std::vector<Segment> segs, BodySegments(trace, call));
  std::vector<Child> out;
  for (const Segment& s : segs) {
    if (s.call) {
      out.push_back({s.first, s.last});
    } else {
      for (NodeId i = s.first; i <= s.last; ++i) out.push_back({i, i});
    }
  }
  return out;
}

Result<std::vector<uint64_t>> ParseNodePath(std::string_view path) {
  std::vector<uint64_t> out;
  std::string_view rest = path;
  if (rest == "@" || rest.empty()) return out;
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (slash != std::string_view::npos && rest.empty()) {
      return UsageError("bad node path '" + std::string(path) + "': trailing '/'");
    }
    std::string_view digits = part;
    if (!digits.empty() && digits[0] == '@') digits.remove_prefix(1);
    uint64_t pos = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pos);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || pos == 0) {
      return UsageError("bad node path '" + std::string(path) + "': '" + std::string(part) +
                        "' is not a position like @4");
    }
    out.push_back(pos);
  }
  return out;
}

Result<Child> ResolvePath(const Trace& trace, std::string_view path) {
  IRT_ASSIGN_OR_RETURN(internal::NodePath p,
                       internal::LocatePath(trace, path, internal::PathWalk::kEnds));
  return p.node;
}

Result<NodeId> Parent(const Trace& trace, NodeId id) {
  if (id == 0) return kNoNode;
  NodeId i = id;
  while (i > 0) {
    --i;
    IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(i));
    if (IsCloser(v.kind())) {
      i = v.closes();  // skip the finished sibling call
      continue;
    }
    if (v.kind() == NodeKind::kCall) return i;
  }
  return DataError(trace.name() + ": node " + std::to_string(id) + " is outside every call");
}

Result<CallBody> CallBody::Load(const Trace& trace, const Child& call) {
  CallBody b;
  b.trace_ = &trace;
  b.call_ = call;
  IRT_ASSIGN_OR_RETURN(b.segments_, BodySegments(trace, call));
  b.starts_.reserve(b.segments_.size());
  for (const Segment& s : b.segments_) {
    b.starts_.push_back(b.size_);
    b.size_ += s.children();
  }
  return b;
}

Child CallBody::operator[](size_t pos) const {
  size_t i =
      static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), pos) - starts_.begin()) -
      1;
  const Segment& s = segments_[i];
  if (s.call) return {s.first, s.last};
  NodeId id = s.first + (pos - starts_[i]);
  return {id, id};
}

int64_t CallBody::PositionOf(NodeId id) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), id,
                             [](NodeId v, const Segment& s) { return v < s.first; });
  if (it == segments_.begin()) return -1;
  --it;
  size_t i = static_cast<size_t>(it - segments_.begin());
  if (it->call) {
    return (id == it->first || id == it->last) ? static_cast<int64_t>(starts_[i]) : -1;
  }
  if (id > it->last) return -1;
  return static_cast<int64_t>(starts_[i] + (id - it->first));
}

Result<std::vector<size_t>> CallBody::Referenced(size_t pos) const {
  IRT_ASSIGN_OR_RETURN(NodeView v, trace_->node((*this)[pos].id));
  std::vector<size_t> out;
  for (NodeId r : v.refs()) {
    int64_t p = PositionOf(r);
    if (p < 0 || static_cast<size_t>(p) >= pos) continue;
    if (std::find(out.begin(), out.end(), static_cast<size_t>(p)) == out.end()) {
      out.push_back(static_cast<size_t>(p));
    }
  }
  return out;
}

Result<std::vector<std::pair<int, size_t>>> CallBody::ReferencedNumbered(size_t pos) const {
  IRT_ASSIGN_OR_RETURN(NodeView v, trace_->node((*this)[pos].id));
  NodeKind k = v.kind();
  int first =
      (k == NodeKind::kCall || k == NodeKind::kPrimitive || k == NodeKind::kSpecial) ? 2 : 1;
  std::vector<std::pair<int, size_t>> out;
  for (size_t i = 0; i < v.num_operands(); ++i) {
    Operand o = v.operand(i);
    if (!o.is_ref) continue;
    int64_t p = PositionOf(o.ref);
    if (p < 0 || static_cast<size_t>(p) >= pos) continue;
    out.emplace_back(first + static_cast<int>(i), static_cast<size_t>(p));
  }
  return out;
}

Result<std::vector<size_t>> CallBody::Backward(size_t pos) const {
  std::vector<bool> seen(pos, false);
  std::vector<size_t> stack{pos};
  while (!stack.empty()) {
    size_t p = stack.back();
    stack.pop_back();
    IRT_ASSIGN_OR_RETURN(std::vector<size_t> refs, Referenced(p));
    for (size_t r : refs) {
      if (!seen[r]) {
        seen[r] = true;
        stack.push_back(r);
      }
    }
  }
  std::vector<size_t> out;
  for (size_t p = pos; p-- > 0;) {
    if (seen[p]) out.push_back(p);
  }
  return out;
}

Result<std::vector<size_t>> CallBody::Dependents(size_t pos) const {
  std::vector<size_t> out;
  for (size_t q = pos + 1; q < size_; ++q) {
    IRT_ASSIGN_OR_RETURN(std::vector<size_t> refs, Referenced(q));
    if (std::find(refs.begin(), refs.end(), pos) != refs.end()) out.push_back(q);
  }
  return out;
}

Result<std::vector<size_t>> CallBody::Forward(size_t pos) const {
  std::vector<bool> reach(size_, false);
  reach[pos] = true;
  std::vector<size_t> out;
  for (size_t q = pos + 1; q < size_; ++q) {
    IRT_ASSIGN_OR_RETURN(std::vector<size_t> refs, Referenced(q));
    for (size_t r : refs) {
      if (reach[r]) {
        reach[q] = true;
        out.push_back(q);
        break;
      }
    }
  }
  return out;
}

}  // namespace irt
