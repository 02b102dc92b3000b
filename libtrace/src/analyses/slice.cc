// Dynamic slicing. A slice is computed by one walk over the global node
// order: backward slices walk down from the start (references are backward
// distances, so every dependence of a node is met after it), forward slices
// walk up. Calls are tracked with an explicit stack of frames; a nested call
// whose body holds nothing pending is hopped in one step through the link
// from its closing node back to its marker. Node sets are bitmaps over the
// global order (calloc'ed, so untouched pages cost nothing); pending work is
// a bitmap with a count, and whether a nested call holds pending work is one
// word scan per 64 nodes, down from its end to the first pending node.
// Writing and listing a slice: slice_output.cc.
#include "irt/slice.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "analyses/slice_impl.h"
#include "graph/bits.h"
#include "graph/path.h"
#include "io/column_reader.h"
#include "io/control_flow.h"
#include "io/leave_behind.h"

namespace irt {

namespace {

using internal::BitSet;
using internal::ColumnReader;
using internal::IsCloser;
using internal::PopCount;
using internal::RawNode;

// A jump or a return: the nodes at a branch position (§b:&k).
bool IsBranch(const RawNode& n) {
  return n.kind() == NodeKind::kJump || n.kind() == NodeKind::kReturn;
}

// ---------------------------------------------------------------- branch facts

// The control-flow facts of each function the walk enters (control.cc's
// index), with a warning for each function the trace has none for.
class BranchTables {
 public:
  BranchTables(const Trace& t, std::vector<std::string>* warnings)
      : index_(t), warnings_(warnings) {}
  // The facts of the function called at `marker` (by its op name); nullptr
  // when the trace carries none for it.
  const internal::FunctionFlow* For(std::string_view fn, NodeId marker) {
    std::string missing;
    const internal::FunctionFlow* f = index_.Find(fn, marker, &missing);
    if (!missing.empty()) {
      warnings_->push_back(missing +
                           ": the conditions of its branches not taken are not in the slice");
    }
    return f;
  }

 private:
  internal::ControlFlowIndex index_;
  std::vector<std::string>* warnings_;
};

// ---------------------------------------------------------------- paths

// The node at `path` with the calls that hold it (graph/path.h); every call
// on the way must have returned.
Result<internal::NodePath> Locate(const Trace& trace, std::string_view path) {
  IRT_ASSIGN_OR_RETURN(Child root, RootCall(trace));
  if (root.end == kNoNode) return DataError(trace.name() + ": the root call never returns");
  IRT_ASSIGN_OR_RETURN(internal::NodePath out,
                       internal::LocatePath(trace, path, internal::PathWalk::kEnds));
  // In a complete trace every call returns; a call that does not is named
  // by the part of the path that reaches it.
  std::vector<Child> calls(out.chain.begin() + 1, out.chain.end());
  if (out.pos >= 0) calls.push_back(out.node);
  IRT_ASSIGN_OR_RETURN(std::vector<uint64_t> positions, ParseNodePath(path));
  std::string walked;
  for (size_t i = 0; i < calls.size(); ++i) {
    walked += (walked.empty() ? "@" : "/@") + std::to_string(positions[i]);
    if (calls[i].is_call() && calls[i].end == kNoNode) {
      return DataError(trace.name() + ": the call at " + walked + " never returns");
    }
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------- Slice

Slice::Slice() : impl_(new Impl) {}
Slice::Slice(Slice&&) noexcept = default;
Slice& Slice::operator=(Slice&&) noexcept = default;
Slice::~Slice() = default;

bool Slice::Contains(NodeId id) const { return impl_->selected.Test(id); }
bool Slice::IsContext(NodeId id) const { return impl_->context.Test(id); }
uint64_t Slice::size() const { return impl_->count; }
NodeId Slice::NextSelected(NodeId from) const { return impl_->selected.NextSet(from); }
NodeId Slice::start() const { return impl_->start; }
const SliceOptions& Slice::options() const { return impl_->opts; }
const std::string& Slice::path() const { return impl_->path; }
std::string Slice::description() const { return DescribeSlice(impl_->path, impl_->opts); }
const std::vector<std::string>& Slice::warnings() const { return impl_->warnings; }

std::string DescribeSlice(std::string_view path, const SliceOptions& opts) {
  std::string s = opts.direction == SliceDirection::kBackward ? "backward " : "forward ";
  s += path.empty() ? "@" : std::string(path);
  if (opts.through_calls) s += " --through-calls";
  if (opts.control) s += " --control";
  return s;
}

namespace {

// The state every walk shares.
struct Walk {
  const Trace& trace;
  Slice::Impl& s;
  ColumnReader reader;
  BranchTables tables;
  bool control;

  Walk(const Trace& t, Slice::Impl& impl)
      : trace(t), s(impl), reader(t), tables(t, &impl.warnings), control(impl.opts.control) {}

  // Records call `c` as context: its marker and closer are kept, and so is
  // everything they reference.
  Status KeepCall(NodeId marker, NodeId closer) {
    s.context.Set(marker);
    s.context.Set(closer);
    for (NodeId id : {marker, closer}) {
      IRT_ASSIGN_OR_RETURN(RawNode n, reader.Get(id));
      for (uint32_t k = 0; k < n.num_refs(); ++k) s.refd.Set(n.ref(k));
    }
    return Status::Ok();
  }
  const internal::FunctionFlow* TableOf(NodeId marker) {
    if (!control) return nullptr;
    auto m = reader.Get(marker);
    if (!m) return nullptr;
    return tables.For(m->op(), marker);
  }
};

// Small set of SSA ids (a handful per frame at most).
struct SsaSet {
  std::vector<uint32_t> ids;
  bool empty() const { return ids.empty(); }
  void Add(uint32_t id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  bool Take(uint32_t id) {
    auto it = std::find(ids.begin(), ids.end(), id);
    if (it == ids.end()) return false;
    ids.erase(it);
    return true;
  }
};

// Most recent "selected?" state of SSA ids that are branch conditions.
struct SsaState {
  std::vector<std::pair<uint32_t, bool>> v;
  void Put(uint32_t id, bool sel) {
    for (auto& e : v) {
      if (e.first == id) {
        e.second = sel;
        return;
      }
    }
    v.emplace_back(id, sel);
  }
  bool Get(uint32_t id) const {
    for (const auto& e : v) {
      if (e.first == id) return e.second;
    }
    return false;
  }
};

// ---------------------------------------------------------------- backward

struct BackFrame {
  NodeId marker = 0;
  NodeId closer = 0;
  const internal::FunctionFlow* table = nullptr;
  bool ctl = false;      // a selected node of this body was met: earlier jumps decide it
  bool has_sel = false;  // something in this call is selected
  SsaSet wanted;         // not-taken conditions still to find, by SSA id
};

// One descending walk. `local` confines it to the body of the innermost
// chain call, treating nested calls as single nodes (their result is the
// closing node, their references the marker's).
class BackwardWalk {
 public:
  BackwardWalk(Walk& w, bool local) : w_(w), local_(local), pending_(w.trace.size()) {}

  Status Run(const std::vector<Child>& chain, NodeId start, bool start_is_jump) {
    if (!pending_.ok()) return Internal("out of memory for the slice");
    for (const Child& c : chain) {
      BackFrame f;
      f.marker = c.id;
      f.closer = c.end;
      f.table = w_.TableOf(c.id);
      f.has_sel = true;
      stack_.push_back(std::move(f));
    }
    if (start_is_jump) {
      IRT_ASSIGN_OR_RETURN(RawNode j, w_.reader.Get(start));
      IRT_RETURN_IF_ERROR(SelectForControl(j));
      IRT_RETURN_IF_ERROR(AfterSelect(j));
      if (start == 0) return Finish();
      return Loop(start - 1);
    }
    Mark(start);
    return Loop(start);
  }

 private:
  void Mark(NodeId t) {
    w_.s.refd.Set(t);
    if (local_ && (t <= stack_.back().marker || t > stack_.back().closer)) return;
    if (pending_.Set(t)) ++outstanding_;
  }
  // Whether node i is pending; clears it.
  bool TakePending(NodeId i) {
    if (!pending_.Test(i)) return false;
    pending_.Clear(i);
    --outstanding_;
    return true;
  }

  Status SelectForData(const RawNode& n) {
    w_.s.Select(n.id());
    for (uint32_t k = 0; k < n.num_refs(); ++k) Mark(n.ref(k));
    return Status::Ok();
  }
  // A jump kept because a selected node's block depends on it: its
  // condition is followed; its block arguments are only referenced.
  Status SelectForControl(const RawNode& n) {
    w_.s.Select(n.id());
    int c = n.condition_ref();
    for (uint32_t k = 0; k < n.num_refs(); ++k) {
      if (static_cast<int>(k) == c) {
        Mark(n.ref(k));
      } else {
        w_.s.refd.Set(n.ref(k));
      }
    }
    return Status::Ok();
  }
  Status AfterSelect(const RawNode& n) {
    BackFrame& f = stack_.back();
    f.has_sel = true;
    if (!w_.control) return Status::Ok();
    f.ctl = true;
    if (IsBranch(n) && n.pos() > 1 && f.table != nullptr) {
      f.table->NotTaken(n.block(), n.pos(),
                        [&](const BranchFact& b) { f.wanted.Add(b.condition); });
    }
    return Status::Ok();
  }

  bool Done() const {
    if (outstanding_ > 0) return false;
    if (!w_.control) return true;
    // With control across calls every caller's earlier jumps decide the
    // call sites of the calls holding the slice: the walk goes down to the
    // root's marker. Within one call, only that call's own jumps matter.
    if (!local_) return false;
    const BackFrame& f = stack_.back();
    return !f.ctl && f.wanted.empty();
  }

  Status Pop() {
    BackFrame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.has_sel) IRT_RETURN_IF_ERROR(w_.KeepCall(f.marker, f.closer));
    if (!stack_.empty() && f.has_sel) {
      stack_.back().has_sel = true;
      if (w_.control) stack_.back().ctl = true;  // its call site ran in the caller's block
    }
    return Status::Ok();
  }

  Status Finish() {
    while (!stack_.empty()) IRT_RETURN_IF_ERROR(Pop());
    return Status::Ok();
  }

  Status Loop(NodeId i) {
    internal::LeaveBehind behind(w_.trace, internal::LeaveBehind::kBackward, i);
    while (!stack_.empty()) {
      behind.Step(i);
      if (Done()) return Finish();
      BackFrame* top = &stack_.back();
      if (i == top->marker) {
        if (local_) return Finish();
        IRT_RETURN_IF_ERROR(Pop());
        if (i == 0) break;
        --i;
        continue;
      }
      if (i < top->marker)
        return w_.reader.Bad(i, "the walk left a call without meeting its marker");
      IRT_ASSIGN_OR_RETURN(RawNode n, w_.reader.Get(i));
      NodeKind k = n.kind();
      if (k == NodeKind::kCall) {
        return w_.reader.Bad(i, "opens a call that is never closed inside its parent");
      }
      if (IsCloser(k) && i != top->closer) {
        // A nested call [m, i].
        NodeId m = n.closes();
        if (m <= top->marker || m >= i) {
          return w_.reader.Bad(
              i, "closes node " + std::to_string(m) + ", which is not a call marker of this body");
        }
        IRT_ASSIGN_OR_RETURN(RawNode mv, w_.reader.Get(m));
        if (mv.kind() != NodeKind::kCall) {
          return w_.reader.Bad(i,
                               "closes node " + std::to_string(m) + ", which is not a call marker");
        }
        if (w_.control && !top->wanted.empty() && top->wanted.Take(mv.pos())) Mark(i);
        if (local_) {
          // The call as one node: its references are the marker's.
          if (TakePending(i)) {
            w_.s.Select(i);
            for (uint32_t r = 0; r < mv.num_refs(); ++r) Mark(mv.ref(r));
            IRT_RETURN_IF_ERROR(AfterSelect(n));
          }
          if (m == 0) break;
          i = m - 1;
          continue;
        }
        // Entered when anything in it is pending: its result, or a node a
        // selected node references (every pending node is below i).
        bool enter = pending_.Test(i) || (outstanding_ > 0 && pending_.AnyIn(m + 1, i - 1));
        if (!enter) {
          if (m == 0) break;
          i = m - 1;
          continue;
        }
        BackFrame f;
        f.marker = m;
        f.closer = i;
        if (w_.control) f.table = w_.tables.For(mv.op(), m);
        stack_.push_back(std::move(f));
        continue;  // i is now the closer of the top frame
      }
      // A node of the top frame's body (its closer included).
      if (w_.control && !top->wanted.empty() && !IsBranch(n) && k != NodeKind::kError &&
          top->wanted.Take(n.pos())) {
        Mark(i);
      }
      if (TakePending(i)) {
        IRT_RETURN_IF_ERROR(SelectForData(n));
        IRT_RETURN_IF_ERROR(AfterSelect(n));
      } else if (w_.control && top->ctl && k == NodeKind::kJump && !w_.s.selected.Test(i)) {
        IRT_RETURN_IF_ERROR(SelectForControl(n));
        IRT_RETURN_IF_ERROR(AfterSelect(n));
      }
      if (i == 0) break;
      --i;
    }
    return Finish();
  }

  Walk& w_;
  bool local_;
  BitSet pending_;
  uint64_t outstanding_ = 0;  // pending nodes not yet visited
  std::vector<BackFrame> stack_;
};

// ---------------------------------------------------------------- forward

struct FwdFrame {
  NodeId marker = 0;
  NodeId closer = kNoNode;
  const internal::FunctionFlow* table = nullptr;
  bool ctl = false;  // a branch decided by the slice was taken: the rest depends on it
  bool has_sel = false;
  SsaState conds;  // selection state of the latest value of each condition SSA id
};

class ForwardWalk {
 public:
  explicit ForwardWalk(Walk& w) : w_(w) {}

  // Across calls: walks every node after the start up to the root's end.
  Status RunGlobal(const std::vector<Child>& chain, const RawNode& start, bool start_is_jump) {
    PushChain(chain);
    IRT_RETURN_IF_ERROR(SelectStart(start, start_is_jump, false));
    internal::LeaveBehind behind(w_.trace, internal::LeaveBehind::kForward, start.id());
    for (NodeId i = start.id() + 1; i < w_.trace.size() && !stack_.empty(); ++i) {
      behind.Step(i);
      RawNode n;
      IRT_RETURN_IF_ERROR(w_.reader.Read(i, &n));
      NodeKind k = n.kind();
      if (k == NodeKind::kCall) {
        FwdFrame f;
        f.marker = i;
        f.table = w_.control ? w_.tables.For(n.op(), i) : nullptr;
        f.ctl = w_.control && stack_.back().ctl;
        stack_.push_back(std::move(f));
        continue;
      }
      if (IsCloser(k) && n.closes() != stack_.back().marker) {
        return w_.reader.Bad(i, "closes node " + std::to_string(n.closes()) +
                                    ", but the innermost open call starts at node " +
                                    std::to_string(stack_.back().marker));
      }
      IRT_RETURN_IF_ERROR(Visit(n));
      if (IsCloser(k)) IRT_RETURN_IF_ERROR(PopClosed(i));
    }
    if (!stack_.empty()) return w_.reader.Bad(w_.trace.size() - 1, "the root call is not closed");
    return Status::Ok();
  }

  // Within one body: nested calls are single nodes. `unit`: the start is a
  // nested call taken as one node (given by its closing node).
  Status RunLocal(const std::vector<Child>& chain, const CallBody& body, size_t pos,
                  const RawNode& start, bool start_is_jump, bool unit) {
    PushChain(chain);
    IRT_RETURN_IF_ERROR(SelectStart(start, start_is_jump, unit));
    internal::LeaveBehind behind(w_.trace, internal::LeaveBehind::kForward, start.id());
    for (size_t p = pos + 1; p < body.size() && !stack_.empty(); ++p) {
      Child c = body[p];
      behind.Step(c.id);
      if (!c.is_call()) {
        IRT_ASSIGN_OR_RETURN(RawNode n, w_.reader.Get(c.id));
        IRT_RETURN_IF_ERROR(Visit(n));
        continue;
      }
      IRT_ASSIGN_OR_RETURN(RawNode mv, w_.reader.Get(c.id));
      FwdFrame& top = stack_.back();
      bool sel = w_.control && top.ctl;
      for (uint32_t r = 0; r < mv.num_refs() && !sel; ++r) sel = w_.s.selected.Test(mv.ref(r));
      if (sel) {
        w_.s.Select(c.end);
        for (uint32_t r = 0; r < mv.num_refs(); ++r) w_.s.refd.Set(mv.ref(r));
      }
      if (w_.control) Remember(top, mv.pos(), sel);
    }
    // The chain holds the start: all of it is context.
    for (const Child& c : chain) IRT_RETURN_IF_ERROR(w_.KeepCall(c.id, c.end));
    return Status::Ok();
  }

 private:
  void PushChain(const std::vector<Child>& chain) {
    for (const Child& c : chain) {
      FwdFrame f;
      f.marker = c.id;
      f.closer = c.end;
      f.table = w_.TableOf(c.id);
      f.has_sel = true;
      stack_.push_back(std::move(f));
    }
  }

  void Remember(FwdFrame& f, uint32_t ssa, bool sel) {
    if (f.table != nullptr && f.table->IsCondition(ssa)) f.conds.Put(ssa, sel);
  }

  Status SelectStart(const RawNode& n, bool is_jump, bool unit) {
    FwdFrame& top = stack_.back();
    w_.s.Select(n.id());
    if (unit) {
      IRT_ASSIGN_OR_RETURN(NodeId m, w_.reader.MarkerOf(n));
      IRT_ASSIGN_OR_RETURN(RawNode mv, w_.reader.Get(m));
      for (uint32_t k = 0; k < mv.num_refs(); ++k) w_.s.refd.Set(mv.ref(k));
      if (w_.control) Remember(top, mv.pos(), true);
      return Status::Ok();
    }
    bool block_arg = n.kind() == NodeKind::kArgument && n.cls().aux != 0;
    for (uint32_t k = 0; k < n.num_refs() && !block_arg; ++k) w_.s.refd.Set(n.ref(k));
    if (w_.control) {
      if (is_jump) top.ctl = true;
      if (!IsBranch(n) && !IsCloser(n.kind())) Remember(top, n.pos(), true);
    }
    // A start that closes its call (a return, or a call's result when the
    // call is followed through): the walk goes on in the caller.
    if (n.id() == top.closer) IRT_RETURN_IF_ERROR(PopClosed(n.id()));
    return Status::Ok();
  }

  // The top frame has closed at `closer`.
  Status PopClosed(NodeId closer) {
    FwdFrame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.has_sel) IRT_RETURN_IF_ERROR(w_.KeepCall(f.marker, closer));
    if (!stack_.empty()) {
      stack_.back().has_sel |= f.has_sel;
      if (w_.control) {
        IRT_ASSIGN_OR_RETURN(RawNode mv, w_.reader.Get(f.marker));
        Remember(stack_.back(), mv.pos(), w_.s.selected.Test(closer));
      }
    }
    return Status::Ok();
  }

  // A node of the top frame's body (its closer included).
  Status Visit(const RawNode& n) {
    FwdFrame& top = stack_.back();
    NodeKind k = n.kind();
    bool sel = w_.control && top.ctl;
    bool decided = false;  // the branch taken here depends on the slice
    int cond = n.condition_ref();
    for (uint32_t r = 0; r < n.num_refs(); ++r) {
      if (w_.s.selected.Test(n.ref(r))) {
        sel = true;
        if (static_cast<int>(r) == cond) decided = true;
      }
    }
    if (w_.control && IsBranch(n) && n.pos() > 1 && top.table != nullptr) {
      top.table->NotTaken(n.block(), n.pos(), [&](const BranchFact& b) {
        if (top.conds.Get(b.condition)) decided = true;
      });
      if (decided) sel = true;
    }
    if (sel) {
      w_.s.Select(n.id());
      top.has_sel = true;
      bool block_arg = k == NodeKind::kArgument && n.cls().aux != 0;
      for (uint32_t r = 0; r < n.num_refs(); ++r) {
        NodeId t = n.ref(r);
        if (block_arg && !w_.s.selected.Test(t)) continue;  // the jump is left out
        w_.s.refd.Set(t);
      }
    }
    if (w_.control) {
      if (k == NodeKind::kJump && decided) top.ctl = true;
      if (!IsBranch(n) && !IsCloser(k)) Remember(top, n.pos(), sel);
    }
    return Status::Ok();
  }

  Walk& w_;
  std::vector<FwdFrame> stack_;
};

}  // namespace

Result<Slice> ComputeSlice(const Trace& trace, std::string_view path, const SliceOptions& opts) {
  // The walks read the trace in one direction and give back the chunks
  // they have left, as the output does after them.
  if (internal::WorthGivingBack(trace)) trace.UseTransientColumns();
  IRT_ASSIGN_OR_RETURN(internal::NodePath loc, Locate(trace, path));
  Slice slice;
  Slice::Impl& s = *slice.impl_;
  s.opts = opts;
  s.path = path.empty() ? "@" : std::string(path);
  s.selected = BitSet(trace.size());
  s.context = BitSet(trace.size());
  s.refd = BitSet(trace.size());
  if (!s.selected.ok() || !s.context.ok() || !s.refd.ok()) {
    return Internal("out of memory for a slice of " + std::to_string(trace.size()) + " nodes");
  }
  Walk w(trace, s);
  const bool root = loc.pos < 0;
  const bool call = !root && loc.node.is_call();
  // Where the walk starts and which calls hold it. The root, and any call
  // followed through, starts at its closing node (its result) inside its
  // own body; a call taken as one node is represented by its closing node.
  std::vector<Child> chain = loc.chain;
  NodeId start = loc.node.is_call() ? loc.node.end : loc.node.id;
  if (call && opts.through_calls) chain.push_back(loc.node);
  const bool local = !opts.through_calls;
  RawNode sn;
  IRT_ASSIGN_OR_RETURN(sn, w.reader.Get(start));
  const bool is_jump = sn.kind() == NodeKind::kJump;
  if (is_jump && !opts.control) {
    return UsageError("node " + s.path +
                      " is a jump, which has no value to slice; slice its condition, or add "
                      "--control to slice " +
                      (opts.direction == SliceDirection::kBackward ? "what decided the branch"
                                                                   : "what the branch decided"));
  }
  s.start = start;
  if (opts.direction == SliceDirection::kBackward) {
    BackwardWalk b(w, local);
    IRT_RETURN_IF_ERROR(b.Run(chain, start, is_jump));
  } else if (local && root) {
    // Nothing in the root's body follows its result.
    s.Select(start);
    IRT_RETURN_IF_ERROR(w.KeepCall(chain[0].id, chain[0].end));
  } else if (local) {
    // Within the body that holds the node: load it (the path did not).
    IRT_ASSIGN_OR_RETURN(CallBody body, CallBody::Load(trace, loc.chain.back()));
    // The walk back over the body may have given back the start's chunk.
    IRT_ASSIGN_OR_RETURN(sn, w.reader.Get(start));
    ForwardWalk f(w);
    IRT_RETURN_IF_ERROR(f.RunLocal(chain, body, static_cast<size_t>(loc.pos), sn, is_jump, call));
  } else {
    ForwardWalk f(w);
    IRT_RETURN_IF_ERROR(f.RunGlobal(chain, sn, is_jump));
  }
  return slice;
}

// ---------------------------------------------------------------- BranchConditions

struct BranchConditions::Impl {
  explicit Impl(const Trace& t) : trace(t), tables(t, &warnings) {}
  const Trace& trace;
  std::vector<std::string> warnings;  // irt-dot draws what it has
  BranchTables tables;
};

BranchConditions::BranchConditions(const Trace& trace) : impl_(new Impl(trace)) {}
BranchConditions::~BranchConditions() = default;

std::vector<uint32_t> BranchConditions::NotTaken(NodeId marker, uint32_t block, uint32_t k) {
  std::vector<uint32_t> out;
  auto m = impl_->trace.node(marker);
  if (!m.ok() || m->kind() != NodeKind::kCall) return out;
  const internal::FunctionFlow* t = impl_->tables.For(m->op(), marker);
  if (t != nullptr) t->NotTaken(block, k, [&](const BranchFact& b) { out.push_back(b.condition); });
  return out;
}

}  // namespace irt
