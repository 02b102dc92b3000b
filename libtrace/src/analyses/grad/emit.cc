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
#include "analyses/grad/engine.h"
#include "io/chunk.h"

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

// Per-slot storage in pages allocated when first written and given back
// once the sweep has passed them: it walks the slots from the last down and
// adds only into slots below the one it is at, so only the slots between it
// and the lowest one written to are held, not one per active node.
template <class T>
class SlotPages {
 public:
  static constexpr unsigned kShift = 12;
  static constexpr uint64_t kPage = uint64_t{1} << kShift;
  void Reset(uint64_t n) {
    pages_.clear();
    pages_.resize((n >> kShift) + 1);
  }
  T& operator[](uint64_t s) {
    std::unique_ptr<T[]>& p = pages_[s >> kShift];
    if (!p) p = std::make_unique<T[]>(kPage);
    return p[s & (kPage - 1)];
  }
  const T& Get(uint64_t s) const {
    static const T none{};
    const std::unique_ptr<T[]>& p = pages_[s >> kShift];
    return p ? p[s & (kPage - 1)] : none;
  }
  // Gives back the page of slot s (none of its slots is read again).
  void Release(uint64_t s) {
    if ((s >> kShift) < pages_.size()) pages_[s >> kShift].reset();
  }

 private:
  std::vector<std::unique_ptr<T[]>> pages_;
};

// Writes the backward pass as a trace: a flat root body holding the
// recomputed active primal, then the adjoint nodes, then the return.
class Emitter : public internal::ProgramObserver {
 public:
  struct Ref {
    NodeId node = kNoNode;  // kNoNode: a literal (or absent, when value is none)
    Value value;
    bool absent() const { return node == kNoNode && value.is_none(); }
  };

  Emitter(GradEngine& e, TraceWriter& w, const GradOptions& opts) : e_(e), w_(w), opts_(opts) {}

  Result<std::vector<Value>> Run(const GradResult& r, const std::vector<uint32_t>& returned);

  void OnConst(int32_t reg, const Value& v) override {
    regs_[static_cast<size_t>(reg)] = {kNoNode, v};
  }
  Status OnInstr(const internal::Instr& in, const std::vector<Value>& values) override;

 private:
  // What a node's class is made of; an operand is a reference when its
  // Ref has a node, else the Ref's value is its literal.
  struct Shape {
    NodeKind kind = NodeKind::kPrimitive;
    std::string_view op;
    uint32_t block = 0, pos = 0, aux = 0, line = 0;
    uint16_t col = 0;
    std::span<const Ref> args;
  };
  ClassId Class(const Shape& s);
  NodeId Emit(NodeKind kind, std::string_view op, std::span<const Ref> args, const Value& v,
              const Location& loc, NodeId adjoint_of);
  Location LocOf(NodeId orig);
  NodeId PrimalOf(NodeId orig);
  Result<NodeId> RefFor(NodeId orig);
  Status EmitPrimal(const GradEngine::Loc& l, NodeId id, NodeId marker, uint64_t slot);
  Status ApplyRule(const GradEngine::Loc& l, NodeId id, uint64_t slot, NodeId marker,
                   const Rule* rule);
  Status Accumulate(NodeId target, const Ref& c);
  // Adds c into the adjoint a (of target's): c itself when a is absent,
  // else a `+` node.
  Status AddRef(Ref& a, const Ref& c, NodeId target);
  // Tuples, as GradEngine::TupleReverse: an adjoint per item, never a tuple
  // node. True when the node was one of tuple, getitem or getindex of a tuple.
  Result<bool> TupleRule(const GradEngine::Loc& l, NodeId id, uint64_t slot, const ClassInfo& k);
  // A tuple's adjoint, item by item, never a tuple node: an item's Ref
  // (absent: none yet), or for an item that is itself a tuple, its own
  // (sub).
  struct TupleRefs {
    std::vector<Ref> items;
    std::vector<std::unique_ptr<TupleRefs>> sub;
    void Resize(size_t n) {
      items.resize(n);
      sub.resize(n);
    }
  };
  // Adds src into dst item by item (dst empty: takes it over).
  Status MergeRefs(TupleRefs& dst, TupleRefs&& src, NodeId target, int depth);
  // The adjoint of the tuple operand x, made (of its size) if absent.
  TupleRefs& TupleRefsOf(const OperandVal& x);
  // A pass-through's tuple adjoint goes to its target, item by item.
  Status PassTuple(uint64_t from, NodeId target);
  // A tuple node shaped like `like` from the adjoint t (null: none), zero
  // for an item that received none.
  Result<Ref> TupleNode(const TupleRefs* t, const Value& like, NodeId at, int depth);
  // The derivative of a tuple argument, as a tuple node.
  Result<Ref> TupleArgument(const ArgumentDerivative& a);
  Status AccumulateSparse(NodeId target, const Ref& v, const std::vector<Ref>& idx);
  // A tensor's adjoint while only single elements have been added to it
  // (getindex's rule, dx[i...] += dy): each element's adjoint so far, by
  // row-major offset. Written as one tensor when the adjoint is read
  // (Materialize): the trace then holds each element's sum once, and the
  // whole tensor once per level of a tree of joins, where writing every
  // addition as an addindex node held a copy of the tensor per element
  // added (10^12 values for a loop over 10^6 elements).
  struct Pending {
    DType dtype;                             // the tensor's type
    std::vector<int64_t> shape;              // and dimensions (its data is never needed)
    std::unordered_map<int64_t, Ref> elems;  // by row-major offset
    // The elements in offset order (the order in which they are written).
    std::vector<std::pair<int64_t, Ref>> Sorted() const {
      std::vector<std::pair<int64_t, Ref>> v(elems.begin(), elems.end());
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      return v;
    }
  };
  // Adds v at `index` into the pending adjoint of the tensor at `st`
  // (whose adjoint is otherwise absent): 1-based as getindex reads it, or
  // with `item` 0-based as getitem does (ItemElementOffset). False, adding
  // nothing, when v is not a scalar of the tensor's type or the index
  // names no element.
  Result<bool> AddElement(uint64_t st, NodeId target, const Ref& v, std::span<const int64_t> index,
                          bool item);
  // getitem's reverse line, additem(zero(x), dy, i...) into operand x,
  // when i... are Int64 operands naming one element and x's adjoint is
  // still absent or pending: dy as that element's contribution, which the
  // program's tensor would hold there (zeros elsewhere). Writing the
  // program out instead held two copies of x per element read. False
  // leaves the line to the program.
  Result<bool> AddItem(NodeId target, const Ref& dy, const Program& p,
                       const std::vector<OperandVal>& ops);
  // Adds `c` into element `off` of `p`: the sum in the order the sweep adds.
  Status AddInto(Pending& p, int64_t off, const Ref& c, NodeId target);
  // Writes the pending adjoint of `st` as a tensor into adj_[st]: a fill of
  // each element's sum, Constant zeros between them, joined pairwise by cat
  // (log2 levels), then reshaped to the tensor's dimensions.
  Status Materialize(uint64_t st, NodeId target);
  // A pass-through's pending adjoint goes to its target: as it is, or
  // added element by element into the target's pending one.
  Status PassPending(uint64_t from, NodeId from_id, NodeId target);
  Result<NodeId> AsNode(const Ref& r, NodeId target);
  // Whether an instruction's operation may be the identity on its first
  // operand (unbroadcasting to the same shape), by its OpDef once.
  bool MayPassThrough(const internal::Instr& in);

  GradEngine& e_;
  TraceWriter& w_;
  [[maybe_unused]] const GradOptions& opts_;
  // The classes defined so far, by a hash of their Shape.
  struct Defined {
    ClassSpec spec;
    ClassId id;
  };
  std::unordered_multimap<uint64_t, Defined> classes_;
  std::vector<NodeId> refs_;   // Emit's references
  std::vector<Ref> args_;      // OnInstr's operands
  std::vector<Value> values_;  // ApplyRule's registers
  std::vector<std::pair<const OpDef*, bool>> pass_through_;
  NodeId meta_of_ = kNoNode;  // the adjoint_of value last written, kept
  Value meta_value_;
  std::unordered_map<NodeId, NodeId> root_new_;          // original root argument -> its copy
  std::unordered_map<NodeId, NodeId> constants_;         // original inactive node -> Constant copy
  std::vector<NodeId> prim_;                             // by slot: the active node's primal copy
  SlotPages<Ref> adj_;                                   // by slot: the adjoint so far
  std::unordered_map<uint64_t, Pending> pending_;        // by slot, where adj_ is absent
  std::unordered_map<uint64_t, TupleRefs> tuple_items_;  // by slot: a tuple's adjoint
  std::vector<Ref> regs_;                                // registers of the program running
  std::vector<OperandVal> ops_;
  Location cur_loc_;
  NodeId cur_of_ = kNoNode;
};

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

Status Emitter::MergeRefs(TupleRefs& dst, TupleRefs&& src, NodeId target, int depth) {
  if (dst.items.empty()) {
    dst = std::move(src);
    return Status::Ok();
  }
  if (dst.items.size() != src.items.size() || depth > 2 * internal::kMaxTupleDepth) {
    return InvalidArgument(e_.NodeName(target) + ": a tuple of " +
                           std::to_string(src.items.size()) + " items added to one of " +
                           std::to_string(dst.items.size()));
  }
  for (size_t q = 0; q < src.items.size(); ++q) {
    if (!src.items[q].absent()) IRT_RETURN_IF_ERROR(AddRef(dst.items[q], src.items[q], target));
    if (src.sub[q] == nullptr) continue;
    if (dst.sub[q] == nullptr) {
      dst.sub[q] = std::move(src.sub[q]);
    } else {
      IRT_RETURN_IF_ERROR(MergeRefs(*dst.sub[q], std::move(*src.sub[q]), target, depth + 1));
    }
  }
  return Status::Ok();
}

Emitter::TupleRefs& Emitter::TupleRefsOf(const OperandVal& x) {
  TupleRefs& t = tuple_items_[e_.Slot(x.target)];
  if (t.items.empty()) t.Resize(x.chunk->tuple_size(x.bits));
  return t;
}

Status Emitter::PassTuple(uint64_t from, NodeId target) {
  auto src = tuple_items_.find(from);
  if (src == tuple_items_.end()) return Status::Ok();
  TupleRefs items = std::move(src->second);
  tuple_items_.erase(src);
  return MergeRefs(tuple_items_[e_.Slot(target)], std::move(items), target, 0);
}

Result<bool> Emitter::TupleRule(const GradEngine::Loc& l, NodeId id, uint64_t slot,
                                const ClassInfo& k) {
  e_.Operands(l, id, &ops_);
  // The adjoint of this node when it is a tuple, taken out.
  auto take = [&](TupleRefs* out) {
    auto it = tuple_items_.find(slot);
    if (it == tuple_items_.end()) return false;
    *out = std::move(it->second);
    tuple_items_.erase(it);
    return true;
  };
  if (k.tuple_op == ClassInfo::kTupleMake) {
    TupleRefs dy;
    if (!take(&dy)) return true;
    for (size_t j = 0; j < ops_.size() && j < dy.items.size(); ++j) {
      const OperandVal& o = ops_[j];
      if (!o.varied) continue;
      if (o.vkind == VKind::kTuple) {
        if (dy.sub[j] != nullptr) {
          IRT_RETURN_IF_ERROR(
              MergeRefs(tuple_items_[e_.Slot(o.target)], std::move(*dy.sub[j]), o.target, 0));
        }
        continue;
      }
      if (!dy.items[j].absent()) IRT_RETURN_IF_ERROR(Accumulate(o.target, dy.items[j]));
    }
    return true;
  }
  if (ops_.empty() || ops_[0].vkind != VKind::kTuple) return false;  // a tensor's: the rule
  const OperandVal x = ops_[0];
  if (!x.varied) return true;
  if (k.tuple_op == ClassInfo::kTupleSlice) {
    const int64_t n = static_cast<int64_t>(TupleRefsOf(x).items.size());
    int64_t first = 0, step = 1, count = 0;
    IRT_RETURN_IF_ERROR(e_.TupleSliceOf(id, ops_, n, &first, &step, &count));
    TupleRefs dy;
    if (!take(&dy)) return true;
    TupleRefs& xr = TupleRefsOf(x);  // (the erase moved no other entry)
    for (int64_t q = 0; q < count && static_cast<size_t>(q) < dy.items.size(); ++q) {
      const size_t at = static_cast<size_t>(first + q * step);
      if (!dy.items[q].absent()) IRT_RETURN_IF_ERROR(AddRef(xr.items[at], dy.items[q], x.target));
      if (dy.sub[q] == nullptr) continue;
      if (xr.sub[at] == nullptr) {
        xr.sub[at] = std::move(dy.sub[q]);
      } else {
        IRT_RETURN_IF_ERROR(MergeRefs(*xr.sub[at], std::move(*dy.sub[q]), x.target, 0));
      }
    }
    return true;
  }
  if (ops_.size() != 2) return false;
  if (ops_[1].vkind != VKind::kI64 && ops_[1].vkind != VKind::kBool) {
    return InvalidArgument(e_.NodeName(id) + ": a tuple's index must be an integer");
  }
  const int64_t n = static_cast<int64_t>(TupleRefsOf(x).items.size());
  int64_t i = static_cast<int64_t>(ops_[1].bits);
  if (k.tuple_op == ClassInfo::kTupleItem && i < 0) i += n;
  if (k.tuple_op == ClassInfo::kTupleIndex) --i;
  if (i < 0 || i >= n) return InvalidArgument(e_.NodeName(id) + ": index out of bounds");
  const size_t at = static_cast<size_t>(i);
  if (k.f->vkind == VKind::kTuple) {  // an item that is a tuple: its items' adjoints
    TupleRefs dy;
    if (!take(&dy)) return true;
    TupleRefs& xr = TupleRefsOf(x);
    if (xr.sub[at] == nullptr) {
      xr.sub[at] = std::make_unique<TupleRefs>(std::move(dy));
      return true;
    }
    IRT_RETURN_IF_ERROR(MergeRefs(*xr.sub[at], std::move(dy), x.target, 0));
    return true;
  }
  IRT_RETURN_IF_ERROR(Materialize(slot, id));
  const Ref dy = adj_.Get(slot);
  if (!dy.absent()) IRT_RETURN_IF_ERROR(AddRef(TupleRefsOf(x).items[at], dy, x.target));
  return true;
}

Result<Emitter::Ref> Emitter::TupleNode(const TupleRefs* t, const Value& like, NodeId at,
                                        int depth) {
  const std::vector<Value>& items = like.tuple();
  if (depth > 2 * internal::kMaxTupleDepth) {
    return InvalidArgument(e_.NodeName(at) + ": tuples nested too deep");
  }
  std::vector<Ref> refs;
  std::vector<Value> values;
  for (size_t q = 0; q < items.size(); ++q) {
    Ref r;
    if (items[q].kind() == VKind::kTuple) {
      const TupleRefs* sub = t != nullptr && q < t->sub.size() ? t->sub[q].get() : nullptr;
      IRT_ASSIGN_OR_RETURN(r, TupleNode(sub, items[q], at, depth + 1));
    } else {
      r = t != nullptr && q < t->items.size() ? t->items[q] : Ref{};
    }
    if (r.absent()) {
      const Value& v = items[q];
      const bool real = v.kind() == VKind::kF64 || v.kind() == VKind::kF32 ||
                        (v.kind() == VKind::kTensor &&
                         (v.tensor().dtype == DType::kF64 || v.tensor().dtype == DType::kF32));
      Value z = Value::Nothing();
      if (real) {
        IRT_ASSIGN_OR_RETURN(z, ApplyOp("zero", std::vector<Value>{v}));
      }
      r = {kNoNode, z};
    }
    IRT_ASSIGN_OR_RETURN(NodeId node, AsNode(r, at));
    refs.push_back({node, r.value});
    values.push_back(r.value);
  }
  Value v = Value::MakeTuple(values);
  return Ref{Emit(NodeKind::kPrimitive, "tuple", refs, v, LocOf(at), PrimalOf(at)), v};
}

Result<Emitter::Ref> Emitter::TupleArgument(const ArgumentDerivative& a) {
  auto it = e_.Varied(a.id) ? tuple_items_.find(e_.Slot(a.id)) : tuple_items_.end();
  return TupleNode(it != tuple_items_.end() ? &it->second : nullptr, a.value, a.id, 0);
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

}  // namespace

namespace {

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
