// irt-replay's forward pass (replay_walk.h): a walk chunk by chunk over the
// column reader, re-evaluating what a change reaches, checking the branches
// taken and not taken, and handing each changed chunk to the rebuild.
#include "analyses/replay_walk.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>
#include <unordered_map>

#include "graph/bits.h"
#include "graph/path.h"
#include "io/chunk.h"
#include "io/chunk_rebuild.h"
#include "io/column_reader.h"
#include "io/control_flow.h"
#include "io/leave_behind.h"
#include "irt/graph.h"
#include "irt/ops.h"

namespace irt::internal {

namespace {

// Whether node v records `nv`, bit for bit: a tensor is compared where the
// trace holds it, not decoded (a tensor passed to a call per iteration
// would be copied per call).
bool Records(const NodeView& v, const Value& nv) {
  if (nv.kind() != VKind::kTensor) return BitEqual(v.value(), nv);
  std::optional<TensorView> t = v.tensor();
  const Tensor& n = nv.tensor();
  return t && t->dtype == n.dtype && t->shape == n.shape &&
         std::equal(t->data.begin(), t->data.end(), n.data.begin(), n.data.end());
}

using internal::ChunkEdit;
using internal::IsCloser;

// How a divergence names a branch not taken: `br 2 unless %5`.
std::string BranchText(const BranchFact& b) {
  if (b.is_return()) return "return";
  std::string s = "br " + std::to_string(b.target);
  if (b.conditional) {
    s += b.taken_when ? " if " : " unless ";
    s += b.condition != 0 ? "%" + std::to_string(b.condition) : "a literal";
  }
  return s;
}

// ------------------------------------------------------------ raw scans

// Node kinds from the column reader, for scans over many nodes.
class Scanner {
 public:
  explicit Scanner(const Trace& t) : r_(t) {}

  Result<NodeKind> Kind(NodeId id) {
    internal::RawNode n;
    if (!r_.Cached(id, &n)) {
      if (id >= r_.trace().size()) {
        return DataError(r_.trace().name() + ": node " + std::to_string(id) +
                         " is past the end of the trace");
      }
      IRT_RETURN_IF_ERROR(r_.ReadEntering(id, &n));
    }
    return n.kind();
  }

 private:
  internal::ColumnReader r_;
};

// ------------------------------------------------------------ paths

std::string Where(const Trace& t, NodeId id) {
  auto p = internal::PathOf(t, id);
  return p ? *p : "node " + std::to_string(id);
}

// ------------------------------------------------------------ chunk rebuild

// ------------------------------------------------------------ the walk

struct WalkFrame {
  NodeId marker = 0;
  uint32_t ssa = 0;  // the SSA id the call defines in its caller
  const internal::FunctionFlow* branches = nullptr;
  std::vector<std::pair<uint32_t, NodeId>> lastdef;  // condition SSA id -> latest node
  void Define(uint32_t ssa, NodeId id) {
    for (auto& [s, n] : lastdef) {
      if (s == ssa) {
        n = id;
        return;
      }
    }
    lastdef.emplace_back(ssa, id);
  }
  NodeId Latest(uint32_t ssa) const {
    for (const auto& [s, n] : lastdef) {
      if (s == ssa) return n;
    }
    return kNoNode;
  }
};

// The walk, chunk by chunk. Nodes whose references did not change are
// passed over on the raw columns; the others are evaluated through checked
// NodeViews. A chunk's new values are kept until the walk leaves it; then
// the chunk is rebuilt and its new values are read back from the rebuilt
// bytes, so memory is bounded by the rebuilt chunks, not by a map of values.
class Walker {
 public:
  Walker(const Trace& t, const PrimitiveTable& table, bool prefix, ReplayResult* r,
         std::map<uint32_t, internal::Rebuilt>* rebuilt)
      : t_(t), table_(table), prefix_(prefix), r_(r), rebuilt_(rebuilt), flows_(t) {}

  // Re-evaluates from the first change (sorted `changes`). `open` lists the
  // calls open at the first change when the caller knows them (from its
  // path); otherwise they are found by a scan.
  Status Run(const std::vector<std::pair<NodeId, Value>>& changes, const std::vector<NodeId>* open);
  // Chunks of the new trace (fewer than the input's for a prefix).
  uint64_t out_chunks() const { return out_chunks_; }

 private:
  // The chunk being walked.
  struct Cur {
    uint32_t index = ~0u;
    NodeId lo = 0, hi = 0;
    const internal::ChunkColumns* columns = nullptr;
    // Per class: its primitive, looked up once (by name; a class fixes the
    // arity). A caller-registered entry comes first, then the standard row.
    struct Op {
      bool looked_up = false;
      bool known = false;
      const PrimitiveEntry* entry = nullptr;
      const OpDef* def = nullptr;
    };
    std::vector<Op> ops;
    ChunkEdit edit;  // values in ascending local order
  };

  bool Dirty(NodeId id) const {
    if (id < start_) return false;
    return bits_.Test(id - start_);
  }
  void MarkDirty(NodeId id) { bits_.Set(id - start_); }
  // A node's value as the replay has it: its new value, else the trace's.
  Result<Value> Current(NodeId id) const;
  Result<Value> Decode(NodeId id) const;
  Result<Value> OperandValue(const Operand& o) const {
    if (!o.is_ref) return o.literal;
    return Current(o.ref);
  }
  Status Enter(uint32_t ci);
  // Rebuilt chunks before ci - 1 keep their bytes only (what the output
  // needs); a value read from one, or a late edit to it, decodes its
  // columns again from the bytes (RebuiltColumns), and they are kept.
  void SlimBehind(uint32_t ci);
  Status RebuiltColumns(internal::Rebuilt& rb) const;
  uint32_t slimmed_ = 0;
  Status Finalize(uint32_t keep);
  Status FinishLate();
  const internal::FunctionFlow* BranchesOf(std::string_view function, NodeId marker);
  Status PushFrame(NodeId marker, std::string_view function, uint32_t ssa);
  void Diverge(ReplayDivergence d) { r_->divergence = std::move(d); }
  Status CheckUntaken(NodeId id, uint32_t block, uint32_t pos);
  Status Evaluate(NodeId id, const NodeView& v, Value* nv, bool* has_new);
  // The primitive of node `id`'s class (of the current chunk).
  const Cur::Op& OpOf(NodeId id, const NodeView& v) {
    uint32_t cls =
        internal::RawNode(cur_.columns, static_cast<uint32_t>(id - cur_.lo)).class_index();
    Cur::Op& o = cur_.ops[cls];
    if (!o.looked_up) {
      o.looked_up = true;
      o.entry = table_.Find(v.op());
      if (o.entry == nullptr) o.def = FindOp(v.op(), v.num_operands());
      o.known = o.entry != nullptr || o.def != nullptr;
    }
    return o;
  }
  void SetValue(NodeId id, Value v);
  Status RootArguments();

  const Trace& t_;
  const PrimitiveTable& table_;
  // The input's chunks before ci - 1 have their decoded columns given back
  // as the walk enters chunk ci.
  internal::LeaveBehind behind_{t_, internal::LeaveBehind::kForward, 0};
  bool prefix_;
  ReplayResult* r_;
  std::map<uint32_t, internal::Rebuilt>* rebuilt_;
  NodeId start_ = 0;
  internal::BitSet bits_;  // changed nodes, from start_
  Cur cur_;
  std::map<uint32_t, ChunkEdit> late_;  // edits of chunks the walk has left
  std::vector<Value> args_;
  std::vector<WalkFrame> frames_;
  internal::ControlFlowIndex flows_;
  // The root call's function arguments are nodes [1, root_args_end); node
  // root_args_skip + k is the marker's literal operand k - 1.
  NodeId root_args_end_ = 1;
  uint64_t root_args_skip_ = ~0ull;
  bool first_failure_ = true;
  std::optional<std::pair<std::string, Value>> trace_meta_edit_;
  uint64_t out_chunks_ = 0;
  // The tensors Current read last, by node id modulo kRecent: a loop that
  // reads a tensor element by element (getindex) decodes it once, not once
  // per element, which is as long as the tensor. Bounded: a few values,
  // which share their data with the decoded ones.
  static constexpr size_t kRecent = 8;
  struct Recent {
    NodeId id = kNoNode;
    Value value;
  };
  mutable Recent recent_[kRecent];
};

Result<Value> Walker::Current(NodeId id) const {
  Recent& recent = recent_[id % kRecent];
  if (recent.id == id) return recent.value;
  IRT_ASSIGN_OR_RETURN(Value v, Decode(id));
  if (v.kind() == VKind::kTensor) recent = {id, v};
  return v;
}

Result<Value> Walker::Decode(NodeId id) const {
  if (Dirty(id)) {
    if (id >= cur_.lo && id < cur_.hi) {
      uint32_t local = static_cast<uint32_t>(id - cur_.lo);
      const auto& vals = cur_.edit.values;
      auto it = std::lower_bound(vals.begin(), vals.end(), local,
                                 [](const auto& e, uint32_t l) { return e.first < l; });
      if (it != vals.end() && it->first == local) return it->second;
    } else {
      uint32_t ci = t_.chunk_of(id);
      auto rb = rebuilt_->find(ci);
      if (rb != rebuilt_->end()) {
        IRT_RETURN_IF_ERROR(RebuiltColumns(rb->second));
        return internal::RebuiltValue(rb->second, static_cast<uint32_t>(id - t_.chunks()[ci].base));
      }
    }
  }
  IRT_ASSIGN_OR_RETURN(NodeView v, t_.node(id));
  return v.value();
}

Status Walker::Enter(uint32_t ci) {
  if (cur_.index != ~0u) IRT_RETURN_IF_ERROR(Finalize(~0u));
  behind_.In(ci);
  SlimBehind(ci);
  IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, internal::ColumnsOf(t_, ci));
  cur_ = Cur();
  cur_.index = ci;
  cur_.lo = c->base;
  cur_.hi = c->base + c->count;
  cur_.columns = c;
  cur_.ops.resize(c->classes.size());
  if (ci + 1 == t_.chunks().size() && trace_meta_edit_) {
    cur_.edit.trace_meta.push_back(*trace_meta_edit_);
  }
  return Status::Ok();
}

// Rebuilds the current chunk if it changed (keeping its first `keep` nodes).
Status Walker::Finalize(uint32_t keep) {
  cur_.edit.keep = keep;
  auto late = late_.find(cur_.index);
  if (late != late_.end()) {
    for (auto& e : late->second.root_operands) cur_.edit.root_operands.push_back(e);
    late_.erase(late);
  }
  if (cur_.edit.rebuild()) {
    IRT_ASSIGN_OR_RETURN((*rebuilt_)[cur_.index],
                         internal::RebuildChunk(cur_.columns->chunk, cur_.columns->node_span(),
                                                cur_.columns->ref_span(), cur_.edit));
  }
  cur_.edit = ChunkEdit();
  return Status::Ok();
}

void Walker::SlimBehind(uint32_t ci) {
  if (ci < 2) return;
  for (auto it = rebuilt_->lower_bound(slimmed_); it != rebuilt_->end() && it->first + 1 < ci;
       ++it) {
    std::vector<internal::NodeRec>().swap(it->second.nodes);
    std::vector<uint32_t>().swap(it->second.refs);
  }
  slimmed_ = std::max(slimmed_, ci - 1);
}

Status Walker::RebuiltColumns(internal::Rebuilt& rb) const {
  if (!rb.nodes.empty() || rb.bytes.empty()) return Status::Ok();
  // Bytes this walk wrote: checked again as any chunk is, then copied.
  internal::ChunkFacts f;
  Status s = internal::VerifyChunk(rb.bytes.data(), rb.bytes.size(), &f);
  if (!s.ok()) return Internal("replay: a rebuilt chunk reads back wrong: " + s.message());
  internal::NodeColumn nc = internal::NodesOf(internal::RebuiltRoot(rb), f);
  rb.nodes.assign(nc.nodes, nc.nodes + nc.count);
  rb.refs.assign(nc.refs, nc.refs + nc.n_refs);
  return Status::Ok();
}

// Edits that arrived after their chunk was rebuilt: applied to the rebuilt
// bytes (or to the input's chunk if it had not changed).
Status Walker::FinishLate() {
  for (auto& [ci, e] : late_) {
    if (ci >= out_chunks_ || !e.rebuild()) continue;
    auto rb = rebuilt_->find(ci);
    internal::Rebuilt bytes;
    if (rb != rebuilt_->end()) {
      IRT_RETURN_IF_ERROR(RebuiltColumns(rb->second));
      IRT_ASSIGN_OR_RETURN(bytes, internal::RebuildChunk(rb->second, e));
    } else {
      IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, internal::ColumnsOf(t_, ci));
      IRT_ASSIGN_OR_RETURN(bytes,
                           internal::RebuildChunk(c->chunk, c->node_span(), c->ref_span(), e));
    }
    (*rebuilt_)[ci] = std::move(bytes);
  }
  late_.clear();
  return Status::Ok();
}

void Walker::SetValue(NodeId id, Value v) {
  MarkDirty(id);
  if (recent_[id % kRecent].id == id) recent_[id % kRecent] = Recent();
  r_->changed.push_back(id);
  if (id >= 1 && id < root_args_end_ && root_args_skip_ != ~0ull && id >= 1 + root_args_skip_) {
    uint32_t opi = static_cast<uint32_t>(id - 1 - root_args_skip_);
    if (cur_.index == 0) {
      cur_.edit.root_operands.emplace_back(opi, v);
    } else {
      late_[0].root_operands.emplace_back(opi, v);
    }
  }
  cur_.edit.values.emplace_back(static_cast<uint32_t>(id - cur_.lo), std::move(v));
}

// The root call's arguments are also the literal operands of its marker;
// they are kept in step with the root's argument nodes.
Status Walker::RootArguments() {
  IRT_ASSIGN_OR_RETURN(NodeView root, t_.node(0));
  size_t nops = root.num_operands();
  NodeId end = 1;
  while (end < t_.size() && end <= nops + 1) {
    IRT_ASSIGN_OR_RETURN(NodeView a, t_.node(end));
    if (a.kind() != NodeKind::kArgument || a.block_arg_index() != 0) break;
    ++end;
  }
  uint64_t run = end - 1;
  root_args_end_ = end;
  // With one argument more than operands, %1 is the function itself.
  root_args_skip_ = run == nops + 1 ? 1 : run == nops ? 0 : ~0ull;
  if (root_args_skip_ != ~0ull) {
    for (size_t k = 0; k < nops; ++k) {
      if (root.operand(k).is_ref) root_args_skip_ = ~0ull;
    }
  }
  return Status::Ok();
}

const internal::FunctionFlow* Walker::BranchesOf(std::string_view function, NodeId marker) {
  std::string missing;
  const internal::FunctionFlow* f = flows_.Find(function, marker, &missing);
  if (!missing.empty()) {
    r_->warnings.push_back(missing + ": branches not taken in its blocks are not checked");
  }
  return f;
}

Status Walker::PushFrame(NodeId marker, std::string_view function, uint32_t ssa) {
  WalkFrame f;
  f.marker = marker;
  f.ssa = ssa;
  f.branches = BranchesOf(function, marker);
  frames_.push_back(std::move(f));
  return Status::Ok();
}

// A Jump or Return at §b:&k: every conditional branch of block b before
// position k was not taken, so its condition was true. If the latest value
// of that condition in this call changed to false, the branch would be taken.
Status Walker::CheckUntaken(NodeId id, uint32_t block, uint32_t pos) {
  if (frames_.empty() || frames_.back().branches == nullptr) return Status::Ok();
  const WalkFrame& f = frames_.back();
  for (const BranchFact& b : f.branches->Block(block)) {
    if (b.pos >= pos) break;
    if (!b.conditional || b.condition == 0) continue;
    NodeId c = f.Latest(b.condition);
    if (c == kNoNode || !Dirty(c)) continue;
    IRT_ASSIGN_OR_RETURN(Value now, Current(c));
    if (now.kind() == VKind::kBool && now.as_bool() != b.taken_when) continue;
    IRT_ASSIGN_OR_RETURN(NodeView cv, t_.node(c));
    ReplayDivergence d;
    d.node = id;
    d.path = Where(t_, id);
    d.branch =
        "§" + std::to_string(block) + ":&" + std::to_string(b.pos) + " (" + BranchText(b) + ")";
    d.condition = c;
    d.condition_path = Where(t_, c);
    d.old_value = cv.value();
    d.new_value = now;
    if (now.kind() != VKind::kBool) {
      d.kind = ReplayDivergence::Kind::kFailure;
      d.message = d.path + ": the condition of branch " + d.branch + ", " + d.condition_path +
                  ", is now " + FormatValue(now) + "::" + TypeName(now) +
                  " (TypeError: non-boolean used in boolean context)";
    } else {
      d.kind = ReplayDivergence::Kind::kNotTaken;
      d.message = d.path + ": branch " + d.branch +
                  ", not taken before, would be taken now: " + d.condition_path + " was " +
                  FormatValue(d.old_value) + ", is now " + FormatValue(now);
    }
    Diverge(std::move(d));
    return Status::Ok();
  }
  return Status::Ok();
}

// Computes the new value of a node one of whose references changed.
Status Walker::Evaluate(NodeId id, const NodeView& v, Value* nv, bool* has_new) {
  switch (v.kind()) {
    case NodeKind::kArgument:
      if (v.num_operands() == 1) {
        Operand o = v.operand(0);
        if (v.block_arg_index() == 0) {
          IRT_ASSIGN_OR_RETURN(*nv, OperandValue(o));
        } else {
          IRT_ASSIGN_OR_RETURN(NodeView j, t_.node(o.ref));
          uint32_t k = v.block_arg_index();
          if (k > j.num_operands()) {
            return DataError(t_.name() + ": node " + std::to_string(id) + " is block argument " +
                             std::to_string(k) + " of a jump with " +
                             std::to_string(j.num_operands()) + " operands");
          }
          IRT_ASSIGN_OR_RETURN(*nv, OperandValue(j.operand(k - 1)));
        }
        *has_new = true;
        ++r_->evaluated;
      }
      return Status::Ok();
    case NodeKind::kPrimitive:
    case NodeKind::kSpecial: {
      std::string_view op = v.op();
      const Cur::Op& o = OpOf(id, v);
      const PrimitiveEntry* e = o.entry;
      if (e != nullptr && e->random) return Status::Ok();  // a draw keeps its recorded value
      if (!o.known) {
        return Unsupported(Where(t_, id) + ": cannot re-evaluate ⟨" + DisplayString(op) + "⟩: '" +
                           DisplayString(op) +
                           "' is not in the standard operation set (irt-ops(7)) nor a call "
                           "recorded with its body");
      }
      args_.clear();
      for (size_t i = 0; i < v.num_operands(); ++i) {
        IRT_ASSIGN_OR_RETURN(Value a, OperandValue(v.operand(i)));
        args_.push_back(std::move(a));
      }
      ++r_->evaluated;
      Result<Value> res = e != nullptr ? e->fn(args_) : ApplyOp(*o.def, args_);
      if (!res) {
        if (res.error().code() != Code::kRuntimeError) {
          return Status(res.error().code(), Where(t_, id) + ": cannot re-evaluate ⟨" +
                                                DisplayString(op) + "⟩: " + res.error().message());
        }
        ReplayDivergence d;
        d.kind = ReplayDivergence::Kind::kFailure;
        d.node = id;
        d.path = Where(t_, id);
        d.message =
            d.path + ": ⟨" + DisplayString(op) + "⟩ would fail now: " + res.error().message();
        Diverge(std::move(d));
        return Status::Ok();
      }
      *nv = std::move(res).value();
      *has_new = true;
      return Status::Ok();
    }
    case NodeKind::kJump: {
      MarkDirty(id);  // its block arguments read their values from it
      if (!v.has_condition()) return Status::Ok();
      Operand c = v.operand(v.num_operands() - 1);
      if (!c.is_ref || !Dirty(c.ref)) return Status::Ok();
      IRT_ASSIGN_OR_RETURN(Value now, Current(c.ref));
      if (now.kind() == VKind::kBool && now.as_bool() == v.taken_when()) return Status::Ok();
      IRT_ASSIGN_OR_RETURN(NodeView cv, t_.node(c.ref));
      ReplayDivergence d;
      d.node = id;
      d.path = Where(t_, id);
      Location l = v.location();
      d.branch = "§" + std::to_string(l.block) + ":&" + std::to_string(l.pos) + " (goto §" +
                 std::to_string(v.jump_target()) + ")";
      d.condition = c.ref;
      d.condition_path = Where(t_, c.ref);
      d.old_value = cv.value();
      d.new_value = now;
      if (now.kind() != VKind::kBool) {
        d.kind = ReplayDivergence::Kind::kFailure;
        d.message = d.path + ": the condition of branch " + d.branch + ", " + d.condition_path +
                    ", is now " + FormatValue(now) + "::" + TypeName(now) +
                    " (TypeError: non-boolean used in boolean context)";
      } else {
        d.kind = ReplayDivergence::Kind::kBranch;
        d.message = d.path + ": branch " + d.branch +
                    " would not be taken now: " + d.condition_path + " was " +
                    FormatValue(d.old_value) + ", is now " + FormatValue(now);
      }
      Diverge(std::move(d));
      return Status::Ok();
    }
    case NodeKind::kReturn:
      if (v.num_operands() > 0) {
        IRT_ASSIGN_OR_RETURN(*nv, OperandValue(v.operand(0)));
        *has_new = true;
        ++r_->evaluated;
      }
      return Status::Ok();
    case NodeKind::kError: {
      // A failed primitive fails again, perhaps with another message; the
      // Error nodes of the calls around it just pass the failure on.
      std::string_view op = v.op();
      const Cur::Op& o = OpOf(id, v);
      const PrimitiveEntry* e = o.entry;
      if ((e != nullptr && e->random) || !o.known) return Status::Ok();
      args_.clear();
      for (size_t i = 0; i < v.num_operands(); ++i) {
        IRT_ASSIGN_OR_RETURN(Value a, OperandValue(v.operand(i)));
        args_.push_back(std::move(a));
      }
      ++r_->evaluated;
      Result<Value> res = e != nullptr ? e->fn(args_) : ApplyOp(*o.def, args_);
      std::optional<Value> old = v.meta("error");
      std::string old_msg = old && old->kind() == VKind::kString ? old->str() : "";
      if (!res && res.error().code() == Code::kRuntimeError) {
        const std::string& msg = res.error().message();
        if (msg == old_msg) return Status::Ok();
        r_->changed.push_back(id);
        cur_.edit.meta.emplace_back(static_cast<uint32_t>(id - cur_.lo), "error",
                                    Value::String(msg));
        // The trace's error names the first failure, after its source location.
        if (first_failure_) {
          first_failure_ = false;
          for (const MetaEntry& m : t_.trace_meta()) {
            if (m.key != "error" || m.value.kind() != VKind::kString) continue;
            const std::string& s = m.value.str();
            if (s.size() >= old_msg.size() &&
                s.compare(s.size() - old_msg.size(), std::string::npos, old_msg) == 0) {
              trace_meta_edit_.emplace("error",
                                       Value::String(s.substr(0, s.size() - old_msg.size()) + msg));
              if (cur_.index + 1 == t_.chunks().size()) {
                cur_.edit.trace_meta.push_back(*trace_meta_edit_);
              }
            }
          }
        }
        return Status::Ok();
      }
      ReplayDivergence d;
      d.kind = ReplayDivergence::Kind::kRecordedFailure;
      d.node = id;
      d.path = Where(t_, id);
      d.message = d.path + ": ⟨" + DisplayString(op) + "⟩ failed when recorded (" + old_msg +
                  ") and would not fail now";
      Diverge(std::move(d));
      return Status::Ok();
    }
    case NodeKind::kCall:
    case NodeKind::kConstant:
      return Status::Ok();
  }
  return Status::Ok();
}

Status Walker::Run(const std::vector<std::pair<NodeId, Value>>& changes,
                   const std::vector<NodeId>* known_open) {
  start_ = changes.front().first;
  uint64_t n = t_.size();
  out_chunks_ = t_.chunks().size();
  bits_ = internal::BitSet(n - start_);
  if (!bits_.ok()) {
    return Internal("out of memory for a replay of " + std::to_string(n) + " nodes");
  }
  IRT_RETURN_IF_ERROR(RootArguments());
  // The calls open at the first change: a scan of the raw kinds before it.
  {
    Scanner sc(t_);
    std::vector<NodeId> open;
    if (known_open != nullptr) open = *known_open;
    for (NodeId i = 0; i < start_ && known_open == nullptr; ++i) {
      IRT_ASSIGN_OR_RETURN(NodeKind k, sc.Kind(i));
      if (k == NodeKind::kCall) {
        open.push_back(i);
      } else if (IsCloser(k) && !open.empty()) {
        open.pop_back();
      }
    }
    for (NodeId m : open) {
      IRT_ASSIGN_OR_RETURN(NodeView v, t_.node(m));
      IRT_RETURN_IF_ERROR(PushFrame(m, v.op(), v.location().pos));
    }
  }
  size_t next_change = 0;
  for (NodeId id = start_; id < n; ++id) {
    if (id >= cur_.hi) IRT_RETURN_IF_ERROR(Enter(t_.chunk_of(id)));
    ++r_->visited;
    // The fast path: the raw columns say whether anything must be done.
    // The column reader checked every node of the chunk on entry.
    const internal::RawNode raw(cur_.columns, static_cast<uint32_t>(id - cur_.lo));
    bool is_change = next_change < changes.size() && changes[next_change].first == id;
    bool slow = is_change;
    NodeKind kind = raw.kind();
    uint32_t block = raw.block(), pos = raw.pos();
    if (!slow) {
      for (uint32_t j = 0; j < raw.num_refs(); ++j) {
        if (Dirty(raw.ref(j))) {
          slow = true;
          break;
        }
      }
      if (kind == NodeKind::kCall || IsCloser(kind)) slow = true;
    }
    if (!slow) {
      if (!frames_.empty() && frames_.back().branches != nullptr) {
        const WalkFrame& f = frames_.back();
        if (kind == NodeKind::kJump) {
          IRT_RETURN_IF_ERROR(CheckUntaken(id, block, pos));
          if (r_->divergence) break;
        } else if (f.branches->IsCondition(pos)) {
          frames_.back().Define(pos, id);
        }
      }
      continue;
    }
    // The slow path, through a checked view.
    IRT_ASSIGN_OR_RETURN(NodeView v, t_.node(id));
    kind = v.kind();
    Location loc = v.location();
    Value nv;
    bool has_new = false;
    if (is_change) {
      nv = changes[next_change++].second;
      has_new = true;
    } else {
      bool any = false;
      for (NodeId ref : v.refs()) {
        if (Dirty(ref)) {
          any = true;
          break;
        }
      }
      if (any) IRT_RETURN_IF_ERROR(Evaluate(id, v, &nv, &has_new));
    }
    if (!r_->divergence && (kind == NodeKind::kJump || kind == NodeKind::kReturn)) {
      IRT_RETURN_IF_ERROR(CheckUntaken(id, loc.block, loc.pos));
    }
    if (r_->divergence) break;
    if (has_new && !Records(v, nv)) SetValue(id, std::move(nv));
    // Keep the open calls and the latest definitions of watched conditions.
    if (kind == NodeKind::kCall) {
      IRT_RETURN_IF_ERROR(PushFrame(id, v.op(), loc.pos));
    } else if (IsCloser(kind)) {
      if (frames_.empty() || v.closes() != frames_.back().marker) {
        return DataError(t_.name() + ": node " + std::to_string(id) + " closes node " +
                         std::to_string(v.closes()) + ", not the innermost open call");
      }
      {
        uint32_t ssa = frames_.back().ssa;
        frames_.pop_back();
        if (!frames_.empty() && frames_.back().branches != nullptr &&
            frames_.back().branches->IsCondition(ssa)) {
          frames_.back().Define(ssa, id);
        }
      }
    } else if (kind != NodeKind::kJump && !frames_.empty() && frames_.back().branches != nullptr &&
               frames_.back().branches->IsCondition(loc.pos)) {
      frames_.back().Define(loc.pos, id);
    }
  }
  if (r_->divergence) {
    if (!prefix_) return Status::Ok();
    NodeId cut = r_->divergence->node;
    uint32_t local = static_cast<uint32_t>(cut - cur_.lo);
    out_chunks_ = local == 0 ? cur_.index : cur_.index + 1;
    IRT_RETURN_IF_ERROR(Finalize(local == 0 ? 0 : local));
    if (local == 0) rebuilt_->erase(cur_.index);
  } else {
    if (!frames_.empty()) {
      return DataError(t_.name() + ": the call at node " + std::to_string(frames_.back().marker) +
                       " is never closed");
    }
    if (cur_.index != ~0u) IRT_RETURN_IF_ERROR(Finalize(~0u));
  }
  return FinishLate();
}

}  // namespace

Status RunReplayWalk(const Trace& trace, const PrimitiveTable& table, bool prefix,
                     const std::vector<std::pair<NodeId, Value>>& changes,
                     const std::vector<NodeId>* open, ReplayResult* result,
                     std::map<uint32_t, internal::Rebuilt>* rebuilt, uint64_t* out_chunks) {
  Walker w(trace, table, prefix, result, rebuilt);
  IRT_RETURN_IF_ERROR(w.Run(changes, open));
  *out_chunks = w.out_chunks();
  return Status::Ok();
}

}  // namespace irt::internal
