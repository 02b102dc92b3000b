// irt::EmitGradientTrace: the backward pass written as a trace (the
// recomputed primal, then the adjoint nodes, then the return), by running
// each rule's reverse program with an observer that emits its instructions.
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "irt/grad.h"
#include "irt/print.h"
#include "irt/writer.h"

// Last: it turns on the popcnt instruction for the rest of the file.
#include "analyses/grad/emitter.h"

namespace irt {

using internal::Program;
using internal::grad::CheckSomeDifferentiable;
using internal::grad::ClassInfo;
using internal::grad::GradEngine;
using internal::grad::Now;
using internal::grad::OperandVal;
using internal::grad::Prepared;
using internal::grad::RevCache;
using internal::grad::ScalarDouble;
using internal::grad::ScalarValue;

namespace {

// A literal operand's identity: kind and bits for a scalar (what ValueKey
// spells for one), ValueKey otherwise.
uint64_t LiteralHash(const Value& v) {
  if (v.is_scalar()) return static_cast<uint64_t>(v.kind()) * 0x9E3779B97F4A7C15ull ^ v.bits();
  return std::hash<std::string>()(ValueKey(v));
}

bool SameLiteral(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  if (a.is_scalar()) return a.bits() == b.bits();
  return ValueKey(a) == ValueKey(b);
}

}  // namespace

namespace internal::grad {

// Emitting defines a class for every distinct shape of node it writes; the
// lookup runs for every node, so it hashes the shape's fields in place.
ClassId Emitter::Class(const Shape& s) {
  uint64_t h = std::hash<std::string_view>()(s.op);
  for (uint64_t f : {uint64_t{static_cast<uint8_t>(s.kind)}, uint64_t{s.block}, uint64_t{s.pos},
                     uint64_t{s.aux}, uint64_t{s.line}, uint64_t{s.col}, uint64_t{s.args.size()}}) {
    h = (h ^ f) * 0x100000001B3ull;
  }
  for (const Ref& a : s.args) {
    h = (h ^ (a.node != kNoNode ? 1 : LiteralHash(a.value))) * 0x100000001B3ull;
  }
  auto [lo, hi] = classes_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const ClassSpec& c = it->second.spec;
    if (c.kind != s.kind || c.op != s.op || c.block != s.block || c.pos != s.pos ||
        c.aux != s.aux || c.line != s.line || c.col != s.col ||
        c.operands.size() != s.args.size()) {
      continue;
    }
    bool same = true;
    for (size_t j = 0; j < s.args.size() && same; ++j) {
      const OperandSpec& o = c.operands[j];
      const Ref& a = s.args[j];
      same = a.node != kNoNode ? o.is_ref : !o.is_ref && SameLiteral(o.literal, a.value);
    }
    if (same) return it->second.id;
  }
  ClassSpec spec;
  spec.kind = s.kind;
  spec.op = std::string(s.op);
  spec.block = s.block;
  spec.pos = s.pos;
  spec.aux = s.aux;
  spec.line = s.line;
  spec.col = s.col;
  for (const Ref& a : s.args) {
    spec.operands.push_back(a.node != kNoNode ? OperandSpec::Ref() : OperandSpec::Literal(a.value));
  }
  ClassId id = w_.DefineClass(spec);
  classes_.emplace(h, Defined{std::move(spec), id});
  return id;
}

NodeId Emitter::Emit(NodeKind kind, std::string_view op, std::span<const Ref> args, const Value& v,
                     const Location& loc, NodeId adjoint_of) {
  ClassId cls = Class({kind, op, loc.block, loc.pos, 0, loc.line, loc.col, args});
  refs_.clear();
  for (const Ref& a : args) {
    if (a.node != kNoNode) refs_.push_back(a.node);
  }
  NodeId id = w_.Append(cls, v, refs_);
  if (adjoint_of != kNoNode) {
    // The nodes of one rule application share their primal: one string.
    if (adjoint_of != meta_of_) {
      meta_of_ = adjoint_of;
      meta_value_ = Value::String("@" + std::to_string(adjoint_of));
    }
    w_.AddMeta("adjoint_of", meta_value_);
  }
  return id;
}

Location Emitter::LocOf(NodeId orig) {
  GradEngine::Loc l = e_.Locate(orig);
  const ClassInfo& k = e_.Cls(l);
  return Location{k.f->block, k.f->pos, false, k.f->line, k.f->col};
}

NodeId Emitter::PrimalOf(NodeId orig) {
  // An active root argument's slot holds its copy already.
  if (e_.Varied(orig)) return prim_[e_.Slot(orig)];
  auto it = root_new_.find(orig);
  if (it != root_new_.end()) return it->second;
  auto c = constants_.find(orig);
  return c != constants_.end() ? c->second : kNoNode;
}

// The copy of an operand's node: the root argument, the active primal, or
// a Constant holding the recorded value (emitted on first use).
Result<NodeId> Emitter::RefFor(NodeId orig) {
  NodeId n = PrimalOf(orig);
  if (n != kNoNode) return n;
  GradEngine::Loc l = e_.Locate(orig);
  const ClassInfo& k = e_.Cls(l);
  Value v = l.cv->c->Decode(e_.BitsOf(l), k.f->vkind);
  NodeId id = Emit(NodeKind::kConstant, "", {}, v, LocOf(orig), kNoNode);
  constants_[orig] = id;
  return id;
}

Status Emitter::EmitPrimal(const GradEngine::Loc& l, NodeId id, NodeId marker, uint64_t slot) {
  GradEngine::Loc src = marker != kNoNode ? e_.Locate(marker) : l;
  NodeId src_id = marker != kNoNode ? marker : id;
  e_.Operands(src, src_id, &ops_);
  std::vector<Ref> args;
  for (const OperandVal& o : ops_) {
    if (o.is_ref) {
      IRT_ASSIGN_OR_RETURN(NodeId n, RefFor(o.target));
      args.push_back({n, Value()});
    } else {
      args.push_back({kNoNode, e_.DecodeOperand(o)});
    }
  }
  const ClassInfo& sk = e_.Cls(src);
  const ClassInfo& k = e_.Cls(l);
  Value v = l.cv->c->Decode(e_.BitsOf(l), k.f->vkind);
  NodeKind kind = sk.f->kind == NodeKind::kSpecial ? NodeKind::kSpecial : NodeKind::kPrimitive;
  prim_[slot] = Emit(kind, sk.f->op, args, v, LocOf(src_id), kNoNode);
  return Status::Ok();
}

Status Emitter::OnInstr(const internal::Instr& in, const std::vector<Value>& values) {
  const Value& v = values[static_cast<size_t>(in.dst)];
  std::vector<Ref>& args = args_;
  args.clear();
  for (int32_t a : in.args) args.push_back(regs_[static_cast<size_t>(a)]);
  // Identities (unbroadcasting to the same shape) emit nothing.
  if (!args.empty() && MayPassThrough(in)) {
    const Value& a0 = values[static_cast<size_t>(in.args[0])];
    bool same = a0.kind() == v.kind() &&
                (v.kind() != VKind::kTensor ||
                 (a0.tensor().shape == v.tensor().shape && a0.tensor().dtype == v.tensor().dtype));
    if (in.op == "transpose" && v.kind() == VKind::kTensor) same = false;
    if (same) {
      regs_[static_cast<size_t>(in.dst)] = {args[0].node, v};
      return Status::Ok();
    }
  }
  NodeId id = Emit(NodeKind::kPrimitive, in.op, args, v, cur_loc_, cur_of_);
  regs_[static_cast<size_t>(in.dst)] = {id, v};
  return Status::Ok();
}

bool Emitter::MayPassThrough(const internal::Instr& in) {
  auto named = [&] {
    return in.op == "identity" || in.op == "sum_to" || in.op == "broadcast_to" ||
           in.op == "reshape" || in.op == "transpose";
  };
  if (in.def == nullptr) return named();
  for (const auto& [def, yes] : pass_through_) {
    if (def == in.def) return yes;
  }
  pass_through_.emplace_back(in.def, named());
  return pass_through_.back().second;
}

Result<NodeId> Emitter::AsNode(const Ref& r, NodeId target) {
  if (r.node != kNoNode) return r.node;
  return Emit(NodeKind::kConstant, "", {}, r.value, LocOf(target), PrimalOf(target));
}

Status Emitter::Accumulate(NodeId target, const Ref& c) {
  uint64_t st = e_.Slot(target);
  if (!pending_.empty()) IRT_RETURN_IF_ERROR(Materialize(st, target));
  return AddRef(adj_[st], c, target);
}

Status Emitter::AddRef(Ref& a, const Ref& c, NodeId target) {
  if (a.absent()) {
    a = c;
    return Status::Ok();
  }
  IRT_ASSIGN_OR_RETURN(Value sum, ApplyOp("+", std::vector<Value>{a.value, c.value}));
  const Ref both[] = {a, c};
  NodeId id = Emit(NodeKind::kPrimitive, "+", both, sum, LocOf(target), PrimalOf(target));
  a = {id, sum};
  return Status::Ok();
}

Result<bool> Emitter::AddElement(uint64_t st, NodeId target, const Ref& v,
                                 std::span<const int64_t> index, bool item) {
  auto it = pending_.find(st);
  if (it == pending_.end()) {
    GradEngine::Loc l = e_.Locate(target);
    if (e_.Cls(l).f->vkind != VKind::kTensor) return false;
    const uint64_t bits = e_.BitsOf(l);
    it = pending_.emplace(st, Pending{l.cv->c->tensor_dtype(bits), l.cv->c->tensor_shape(bits), {}})
             .first;
  }
  Pending& p = it->second;
  const VKind kind = p.dtype == DType::kF64   ? VKind::kF64
                     : p.dtype == DType::kF32 ? VKind::kF32
                                              : VKind::kNone;
  const bool ok = kind != VKind::kNone && v.value.kind() == kind;
  const int64_t off = !ok    ? -1
                      : item ? ItemElementOffset(p.shape, index)
                             : ElementOffset(p.shape, index);
  if (off < 0) {
    if (p.elems.empty()) pending_.erase(it);
    return false;
  }
  IRT_RETURN_IF_ERROR(AddInto(p, off, v, target));
  return true;
}

Status Emitter::AddInto(Pending& p, int64_t off, const Ref& c, NodeId target) {
  auto [e, fresh] = p.elems.try_emplace(off, c);
  if (fresh) return Status::Ok();
  IRT_ASSIGN_OR_RETURN(Value sum, ApplyOp("+", std::vector<Value>{e->second.value, c.value}));
  const Ref both[] = {e->second, c};
  e->second = {Emit(NodeKind::kPrimitive, "+", both, sum, LocOf(target), PrimalOf(target)), sum};
  return Status::Ok();
}

Status Emitter::Materialize(uint64_t st, NodeId target) {
  auto it = pending_.find(st);
  if (it == pending_.end()) return Status::Ok();
  Pending p = std::move(it->second);
  pending_.erase(it);
  int64_t numel = 1;
  for (int64_t d : p.shape) numel *= d;
  const std::vector<std::pair<int64_t, Ref>> elems = p.Sorted();
  const Location loc = LocOf(target);
  const NodeId of = PrimalOf(target);
  const Value one = Value::I64(1);
  std::vector<Ref> pieces;
  auto zeros = [&](int64_t len) {
    Value z = Value::MakeTensor(Tensor::Zeros(p.dtype, {len}));
    pieces.push_back({Emit(NodeKind::kConstant, "", {}, z, loc, of), z});
  };
  int64_t at = 0;
  for (const auto& [off, r] : elems) {
    if (off > at) zeros(off - at);
    Ref s = r;
    if (s.value.to_double() == 0 && std::signbit(s.value.to_double())) {
      // Only additions of -0.0: a tensor adjoint adds into +0.0 (and the
      // sweep's hold no -0.0), so this element is +0.0.
      Value z = s.value.kind() == VKind::kF32 ? Value::F32(0) : Value::F64(0);
      IRT_ASSIGN_OR_RETURN(Value sum, ApplyOp("+", std::vector<Value>{z, s.value}));
      const Ref both[] = {{kNoNode, z}, s};
      s = {Emit(NodeKind::kPrimitive, "+", both, sum, loc, of), sum};
    }
    if (s.node == kNoNode) s.node = Emit(NodeKind::kConstant, "", {}, s.value, loc, of);
    IRT_ASSIGN_OR_RETURN(Value leaf, ApplyOp("fill", std::vector<Value>{s.value, one}));
    const Ref args[] = {s, {kNoNode, one}};
    pieces.push_back({Emit(NodeKind::kPrimitive, "fill", args, leaf, loc, of), leaf});
    at = off + 1;
  }
  if (at < numel) zeros(numel - at);
  while (pieces.size() > 1) {
    std::vector<Ref> joined;
    for (size_t i = 0; i + 1 < pieces.size(); i += 2) {
      IRT_ASSIGN_OR_RETURN(
          Value v, ApplyOp("cat", std::vector<Value>{one, pieces[i].value, pieces[i + 1].value}));
      const Ref args[] = {{kNoNode, one}, pieces[i], pieces[i + 1]};
      joined.push_back({Emit(NodeKind::kPrimitive, "cat", args, v, loc, of), std::move(v)});
    }
    if (pieces.size() % 2 != 0) joined.push_back(std::move(pieces.back()));
    pieces = std::move(joined);
  }
  Ref t = std::move(pieces.front());
  if (p.shape.size() != 1) {
    std::vector<Ref> args{t};
    std::vector<Value> vals{t.value};
    for (int64_t d : p.shape) {
      args.push_back({kNoNode, Value::I64(d)});
      vals.push_back(Value::I64(d));
    }
    IRT_ASSIGN_OR_RETURN(Value v, ApplyOp("reshape", vals));
    t = {Emit(NodeKind::kPrimitive, "reshape", args, v, loc, of), std::move(v)};
  }
  adj_[st] = std::move(t);
  return Status::Ok();
}

Status Emitter::PassPending(uint64_t from, NodeId from_id, NodeId target) {
  const uint64_t to = e_.Slot(target);
  auto src = pending_.find(from);
  if (src == pending_.end()) return Accumulate(target, adj_.Get(from));
  auto dst = pending_.find(to);
  if (!adj_.Get(to).absent() ||
      (dst != pending_.end() &&
       (dst->second.shape != src->second.shape || dst->second.dtype != src->second.dtype))) {
    IRT_RETURN_IF_ERROR(Materialize(from, from_id));
    return Accumulate(target, adj_.Get(from));
  }
  if (dst == pending_.end()) {
    Pending p = std::move(src->second);
    pending_.erase(src);
    pending_.emplace(to, std::move(p));
    return Status::Ok();
  }
  // Both pending: the target's sums plus the pass-through's, element by
  // element, in offset order.
  const std::vector<std::pair<int64_t, Ref>> elems = src->second.Sorted();
  pending_.erase(src);  // dst stays valid: erasing another key moves no node
  for (const auto& [off, r] : elems) IRT_RETURN_IF_ERROR(AddInto(dst->second, off, r, target));
  return Status::Ok();
}

Result<bool> Emitter::AddItem(NodeId target, const Ref& dy, const Program& p,
                              const std::vector<OperandVal>& ops) {
  const uint64_t st = e_.Slot(target);
  if (!adj_.Get(st).absent()) return false;
  std::vector<int64_t> index;
  for (int32_t reg : p.item_index) {
    if (reg < 0 || static_cast<size_t>(reg) >= ops.size() ||
        ops[static_cast<size_t>(reg)].vkind != VKind::kI64) {
      return false;
    }
    index.push_back(static_cast<int64_t>(ops[static_cast<size_t>(reg)].bits));
  }
  return AddElement(st, target, dy, index, /*item=*/true);
}

Status Emitter::AccumulateSparse(NodeId target, const Ref& v, const std::vector<Ref>& idx) {
  uint64_t st = e_.Slot(target);
  if (adj_.Get(st).absent()) {
    std::vector<int64_t> index(idx.size());
    bool ints = true;
    for (size_t d = 0; d < idx.size() && ints; ++d) {
      ints = idx[d].value.kind() == VKind::kI64;
      if (ints) index[d] = idx[d].value.as_i64();
    }
    if (ints) {
      IRT_ASSIGN_OR_RETURN(bool added, AddElement(st, target, v, index, /*item=*/false));
      if (added) return Status::Ok();
    }
  }
  IRT_RETURN_IF_ERROR(Materialize(st, target));
  Ref acc = adj_.Get(st);
  NodeId primal = PrimalOf(target);
  if (acc.absent()) {
    GradEngine::Loc l = e_.Locate(target);
    Value pv = l.cv->c->Decode(e_.BitsOf(l), e_.Cls(l).f->vkind);
    IRT_ASSIGN_OR_RETURN(Value z, ApplyOp("zero", std::vector<Value>{pv}));
    const Ref of[] = {{primal, pv}};
    NodeId id = Emit(NodeKind::kPrimitive, "zero", of, z, LocOf(target), primal);
    acc = {id, z};
  }
  std::vector<Ref> args{acc, v};
  std::vector<Value> vals{acc.value, v.value};
  for (const Ref& r : idx) {
    args.push_back(r);
    vals.push_back(r.value);
  }
  IRT_ASSIGN_OR_RETURN(Value sum, ApplyOp("addindex", vals));
  NodeId id = Emit(NodeKind::kPrimitive, "addindex", args, sum, LocOf(target), primal);
  adj_[st] = {id, sum};
  return Status::Ok();
}

Status Emitter::ApplyRule(const GradEngine::Loc& l, NodeId id, uint64_t slot, NodeId marker,
                          const Rule* rule) {
  GradEngine::Loc src = marker != kNoNode ? e_.Locate(marker) : l;
  NodeId src_id = marker != kNoNode ? marker : id;
  ClassInfo& sk = const_cast<ClassInfo&>(e_.Cls(src));
  const ClassInfo& k = e_.Cls(l);
  if (rule == nullptr) return e_.MissingRule(src_id, sk, sk.f->op, sk.f->n_operands);
  e_.Operands(src, src_id, &ops_);
  const std::vector<OperandVal>& ops = ops_;  // nothing below runs Operands again
  size_t arity = ops.size();
  IRT_ASSIGN_OR_RETURN(RevCache * rc, e_.Reverse(sk, rule, arity));
  ++e_.stats().rule_applications;
  Value y = l.cv->c->Decode(e_.BitsOf(l), k.f->vkind);
  bool f32 =
      k.f->vkind == VKind::kF32 || (y.kind() == VKind::kTensor && y.tensor().dtype == DType::kF32);
  for (size_t j = 0; j < arity; ++j) {
    const OperandVal& o = ops[j];
    if (!o.varied || !rc->progs[j]) continue;
    const Program& p = *rc->progs[j];
    if (p.item_value == static_cast<int32_t>(arity + 1) &&
        p.item_zeros_of == static_cast<int32_t>(j) && o.vkind == VKind::kTensor) {
      IRT_ASSIGN_OR_RETURN(bool added, AddItem(o.target, adj_.Get(slot), p, ops));
      if (added) continue;
    }
    std::vector<Value>& values = values_;
    values.assign(static_cast<size_t>(p.num_regs), Value());
    regs_.assign(static_cast<size_t>(p.num_regs), Ref{});
    for (size_t q = 0; q < arity; ++q) {
      values[q] = e_.DecodeOperand(ops[q]);
      if (ops[q].is_ref) {
        IRT_ASSIGN_OR_RETURN(NodeId n, RefFor(ops[q].target));
        regs_[q] = {n, values[q]};
      } else {
        regs_[q] = {kNoNode, values[q]};
      }
    }
    values[arity] = y;
    regs_[arity] = {prim_[slot], y};
    values[arity + 1] = adj_.Get(slot).value;
    regs_[arity + 1] = adj_.Get(slot);
    cur_loc_ = LocOf(o.target);
    cur_of_ = PrimalOf(o.target);
    Status s = internal::RunValues(p, values, f32, this);
    if (!s.ok()) return Status(s.code(), e_.NodeName(src_id) + ": " + s.message());
    Ref c = regs_[static_cast<size_t>(p.outputs[0])];
    c.value = values[static_cast<size_t>(p.outputs[0])];
    if (p.outputs.size() > 1) {
      std::vector<Ref> idx;
      for (size_t q = 1; q < p.outputs.size(); ++q) {
        Ref r = regs_[static_cast<size_t>(p.outputs[q])];
        r.value = values[static_cast<size_t>(p.outputs[q])];
        idx.push_back(r);
      }
      IRT_RETURN_IF_ERROR(AccumulateSparse(o.target, c, idx));
    } else {
      IRT_RETURN_IF_ERROR(Accumulate(o.target, c));
    }
  }
  return Status::Ok();
}

Result<std::vector<Value>> Emitter::Run(const GradResult& r,
                                        const std::vector<uint32_t>& returned) {
  const Trace& trace = e_.trace();
  uint64_t n = trace.size();
  // The root call and its arguments.
  NodeId last_root_arg = 0;
  IRT_ASSIGN_OR_RETURN(NodeView root, trace.node(0));
  std::vector<Ref> call_args;
  for (const Value& v : r.call_args) call_args.push_back({kNoNode, v});
  Emit(NodeKind::kCall, "∇" + r.function, call_args, Value(), root.location(), kNoNode);
  for (const ArgumentDerivative& a : e_.args()) {
    const Location& at = a.location;
    ClassId cls = Class({NodeKind::kArgument, "", at.block, at.pos, 0, at.line, at.col, {}});
    root_new_[a.id] = w_.Append(cls, a.value, {});
    last_root_arg = std::max(last_root_arg, a.id);
  }
  // The active primal, in execution order.
  prim_.assign(e_.num_active(), kNoNode);
  uint64_t slot = 0;
  for (NodeId id = 0; id < n; ++id) {
    if (!e_.Varied(id)) continue;
    uint64_t s = slot++;
    e_.Trim();  // no Loc is held from node to node
    GradEngine::Loc l = e_.Locate(id);
    const ClassInfo& k = e_.Cls(l);
    if (id <= last_root_arg) {
      auto root_arg = root_new_.find(id);
      if (root_arg != root_new_.end()) {
        prim_[s] = root_arg->second;
        continue;
      }
    }
    switch (k.f->kind) {
      case NodeKind::kArgument:
        prim_[s] = prim_[e_.Slot(e_.PassTarget(l, id))];
        break;
      case NodeKind::kReturn: {
        NodeId m = e_.RuledMarker(l, id);
        if (m != kNoNode) {
          IRT_RETURN_IF_ERROR(EmitPrimal(l, id, m, s));
        } else {
          prim_[s] = prim_[e_.Slot(e_.PassTarget(l, id))];
        }
        break;
      }
      default:
        IRT_RETURN_IF_ERROR(EmitPrimal(l, id, kNoNode, s));
    }
  }
  // The adjoints, in reverse order.
  adj_.Reset(e_.num_active());
  NodeId res = n - 1;
  if (e_.Varied(res)) {
    NodeId seed = Emit(NodeKind::kConstant, "", {}, r.seed, LocOf(res), PrimalOf(res));
    adj_[e_.Slot(res)] = {seed, r.seed};
  }
  slot = e_.num_active();
  uint32_t below = ~0u;
  for (NodeId id = n; id-- > 0;) {
    if (!e_.Varied(id)) continue;
    --slot;
    // Entering a page of slots: the one above is done with.
    if ((slot & (SlotPages<Ref>::kPage - 1)) == SlotPages<Ref>::kPage - 1) adj_.Release(slot + 1);
    if (adj_.Get(slot).absent() && (pending_.empty() || !pending_.contains(slot)) &&
        (tuple_items_.empty() || !tuple_items_.contains(slot))) {
      continue;
    }
    e_.Trim();
    GradEngine::Loc l = e_.Locate(id);
    // As the sweep: chunks below are decoded again on the second core.
    if (l.cv->index != below) trace.DecodeBehind(below = l.cv->index);
    const ClassInfo& k = e_.Cls(l);
    switch (k.f->kind) {
      case NodeKind::kReturn: {
        NodeId m = e_.RuledMarker(l, id);
        if (m != kNoNode) {
          IRT_RETURN_IF_ERROR(Materialize(slot, id));
          IRT_RETURN_IF_ERROR(ApplyRule(e_.Locate(id), id, slot, m, e_.Cls(e_.Locate(m)).rule));
          break;
        }
        [[fallthrough]];
      }
      case NodeKind::kArgument: {
        NodeId t = e_.PassTarget(l, id);
        if (t != kNoNode && e_.Varied(t)) {
          if (k.f->vkind == VKind::kTuple) {
            IRT_RETURN_IF_ERROR(PassTuple(slot, t));
          } else {
            IRT_RETURN_IF_ERROR(PassPending(slot, id, t));
          }
        }
        break;
      }
      case NodeKind::kPrimitive:
      case NodeKind::kSpecial:
        if (k.tuple_op != ClassInfo::kNoTupleOp) {
          IRT_ASSIGN_OR_RETURN(bool done, TupleRule(l, id, slot, k));
          if (done) break;
        }
        IRT_RETURN_IF_ERROR(Materialize(slot, id));
        IRT_RETURN_IF_ERROR(ApplyRule(e_.Locate(id), id, slot, kNoNode, k.rule));
        break;
      default:
        break;
    }
  }
  // The return: the chosen arguments' adjoints.
  std::vector<Ref> outs;
  std::vector<Value> values;
  for (uint32_t pos : returned) {
    for (const ArgumentDerivative& a : e_.args()) {
      if (a.pos != pos) continue;
      if (a.value.kind() == VKind::kTuple) {
        IRT_ASSIGN_OR_RETURN(Ref t, TupleArgument(a));
        outs.push_back(t);
        values.push_back(t.value);
        continue;
      }
      if (e_.Varied(a.id)) IRT_RETURN_IF_ERROR(Materialize(e_.Slot(a.id), a.id));
      Ref ref = e_.Varied(a.id) ? adj_.Get(e_.Slot(a.id)) : Ref{};
      if (ref.absent()) {
        IRT_ASSIGN_OR_RETURN(Value z, ApplyOp("zero", std::vector<Value>{a.value}));
        ref = {kNoNode, z};
      }
      IRT_ASSIGN_OR_RETURN(NodeId node, AsNode(ref, a.id));
      outs.push_back({node, ref.value});
      values.push_back(ref.value);
    }
  }
  Ref ret = outs.front();
  if (outs.size() > 1) {
    Value t = Value::MakeTuple(values);
    ret = {Emit(NodeKind::kPrimitive, "tuple", outs, t, LocOf(n - 1), kNoNode), t};
  }
  ClassId rs = Class({NodeKind::kReturn, "", 1, 1, 0, 0, 0, std::span<const Ref>(&ret, 1)});
  std::vector<NodeId> rr{ret.node};
  w_.Append(rs, ret.value, rr);
  return values;
}

}  // namespace internal::grad

namespace {

using internal::grad::Emitter;

Result<GradResult> EmitChecked(const Trace& trace, const RuleSet& rules, GradOptions& opts,
                               GradResult r, Output& out) {
  GradEngine e(trace, rules, opts);
  // The recomputed primal depends on every floating-point argument, so that
  // the emitted trace can be differentiated with respect to any of them.
  IRT_RETURN_IF_ERROR(e.ForwardPass(false, /*all_float_args=*/true));
  std::vector<uint32_t> returned;
  for (ArgumentDerivative& a : e.mutable_args()) {
    bool asked = opts.wrt.empty()
                     ? a.value.kind() != VKind::kFunction
                     : std::find(opts.wrt.begin(), opts.wrt.end(), a.pos) != opts.wrt.end();
    a.chosen = asked;
    if (asked && a.differentiable) returned.push_back(a.pos);
  }
  IRT_RETURN_IF_ERROR(CheckSomeDifferentiable(r, e.args()));
  double t0 = Now();
  WriterOptions wo;
  wo.producer_name = "irt-grad";
  wo.producer_version = IRT_VERSION;
  TraceWriter w(&out, wo);
  Emitter em(e, w, opts);
  IRT_ASSIGN_OR_RETURN(std::vector<Value> grads, em.Run(r, returned));
  std::string wrt;
  for (uint32_t p : returned) wrt += (wrt.empty() ? "@" : ",@") + std::to_string(p);
  w.AddTraceMeta("status", Value::String("ok"));
  w.AddTraceMeta("function", Value::String("∇" + r.function));
  w.AddTraceMeta("gradient_of", Value::String(r.function));
  w.AddTraceMeta("wrt", Value::String(wrt));
  IRT_RETURN_IF_ERROR(w.Finish());
  e.stats().write_seconds = Now() - t0;
  r.stats = e.stats();
  r.arguments = e.args();
  size_t gi = 0;
  for (ArgumentDerivative& a : r.arguments) {
    if (a.chosen && a.differentiable && gi < grads.size()) a.derivative = grads[gi++];
  }
  return r;
}

}  // namespace

Result<GradResult> EmitGradientTrace(const Trace& trace, const RuleSet& rules,
                                     const GradOptions& options, Output& out) {
  GradOptions opts;
  IRT_ASSIGN_OR_RETURN(GradResult r, Prepared(trace, options, &opts));
  // As Differentiate: a bounded set of decoded chunks, checked and decoded
  // on a second core ahead of the forward pass.
  trace.UseTransientColumns();
  trace.VerifyAhead();
  try {
    return EmitChecked(trace, rules, opts, std::move(r), out);
  } catch (const internal::grad::ColumnsLost& e) {
    return e.status;
  }
}

}  // namespace irt
