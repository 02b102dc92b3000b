// The reverse sweep: visits the active nodes backward and adds each one's
// adjoint into its operands' through the reverse programs of its rule, on
// binary64 registers where it can (FastReverse) and on values otherwise.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "irt/ops.h"
#include "irt/print.h"

// Last: it turns on the popcnt instruction for the rest of the file.
#include "analyses/grad/engine.h"
#include "io/chunk.h"

namespace irt::internal::grad {

Result<RevCache*> GradEngine::Reverse(ClassInfo& k, const Rule* rule, size_t arity) {
  if (k.rev != nullptr) return k.rev;
  auto key = std::make_pair(rule, arity);
  auto it = rev_cache_.find(key);
  if (it == rev_cache_.end()) {
    auto c = std::make_unique<RevCache>();
    c->progs.resize(arity);
    c->reads.assign(arity, 0);
    for (size_t j = 0; j < arity; ++j) {
      if (!rule->Differentiates(j)) continue;
      IRT_ASSIGN_OR_RETURN(Program p, internal::CompileReverse(*rule, arity, j));
      uint64_t reads = 0;
      for (size_t q = 0; q < arity && q < 63; ++q) {
        if (p.reads[q]) reads |= uint64_t{1} << q;
      }
      if (arity >= 63 || !p.scalar) reads = ~uint64_t{0};
      if (p.reads[arity]) reads |= uint64_t{1} << 63;
      c->reads[j] = reads;
      c->max_regs = std::max(c->max_regs, static_cast<size_t>(p.num_regs));
      c->progs[j] = std::move(p);
    }
    c->steps.resize(arity);
    for (size_t j = 0; j < arity; ++j) {
      if (!c->progs[j]) continue;
      const Program& p = *c->progs[j];
      RevCache::Step& st = c->steps[j];
      st.prog = &p;
      if (p.souts.empty()) continue;  // kNone: ApplyReverse reports it
      st.out = static_cast<int16_t>(p.souts[0]);
      if (p.souts.size() > 1) {
        st.mode = RevCache::Step::kSparse;
      } else if (p.scode.empty() && p.consts.empty()) {
        st.mode = RevCache::Step::kCopy;
      } else if (p.scode.size() == 1 && p.consts.empty()) {
        st.mode = RevCache::Step::kOne;
        st.one = p.scode[0];
      } else {
        st.mode = RevCache::Step::kRun;
      }
    }
    it = rev_cache_.emplace(key, std::move(c)).first;
  }
  k.rev = it->second.get();
  return k.rev;
}

Result<TensorAdj*> GradEngine::TensorAdjOf(NodeId target, uint64_t slot, bool sparse_ok) {
  if (slot != cached_slot_) {
    auto it = tensor_adj_.find(slot);
    if (it == tensor_adj_.end()) {
      Loc tl = Locate(target);
      const DType dtype = tl.cv->c->tensor_dtype(BitsOf(tl));
      std::vector<int64_t> shape = tl.cv->c->tensor_shape(BitsOf(tl));
      TensorAdj a;
      if (sparse_ok) {
        a = TensorAdj::Sparse(dtype, std::move(shape));
      } else {
        a.t = Tensor::Zeros(dtype, shape);
      }
      it = tensor_adj_.emplace(slot, std::move(a)).first;
    }
    cached_slot_ = slot;
    cached_adj_ = &it->second;
  }
  if (!sparse_ok) cached_adj_->Densify();
  return cached_adj_;
}

Status GradEngine::AccumulateScalar(NodeId target, double g) {
  AddScalar(target, g);
  return Status::Ok();
}

std::string GradEngine::GiverText(const Giver& who) {
  if (who.rule == nullptr) return who.text != nullptr ? who.text : "a rule";
  std::string rule = "the rule for " + who.rule->Signature();
  return who.node == kNoNode ? rule : NodeName(who.node) + ": " + rule;
}

Status GradEngine::AccumulateValue(NodeId target, Value g, const Giver& who,
                                   bool no_negative_zero) {
  uint64_t s = varied_.Rank(target);
  Loc tl = Locate(target);
  const ClassInfo& tk = Cls(tl);
  if (tk.f->vkind == VKind::kTuple) {
    if (g.kind() != VKind::kTuple) {
      return InvalidArgument(GiverText(who) + " gives a " + TypeName(g) +
                             " adjoint for the tuple " + NodeName(target));
    }
    const std::vector<Value>& items = g.tuple();
    for (size_t q = 0; q < items.size(); ++q) {
      IRT_RETURN_IF_ERROR(AccumulateTupleItem(target, q, items.size(), items[q]));
    }
    touched_.Set(s);
    return Status::Ok();
  }
  if (tk.f->vkind != VKind::kTensor) {
    if (!g.is_scalar() || g.kind() == VKind::kNone || g.kind() == VKind::kNothing) {
      return InvalidArgument(GiverText(who) + " gives a " + TypeName(g) +
                             " adjoint for the scalar " + NodeName(target));
    }
    adj_[s] += g.to_double();
    touched_.Set(s);
    return Status::Ok();
  }
  if (g.kind() == VKind::kTensor && s != cached_slot_ && !tensor_adj_.contains(s)) {
    const ChunkColumns& c = *tl.cv->c;
    uint64_t bits = BitsOf(tl);
    if (g.tensor().dtype == c.tensor_dtype(bits) && g.tensor().shape == c.tensor_shape(bits)) {
      // The first adjoint: g itself, as zeros + g would give it (+ 0 turns
      // -0 into 0 and keeps everything else).
      TensorAdj a;
      a.t = Value::TakeTensor(std::move(g));
      int64_t n = no_negative_zero ? 0 : a.t.numel();
      if (a.t.dtype == DType::kF64) {
        double* p = a.t.f64();
        for (int64_t i = 0; i < n; ++i) p[i] += 0.0;
      } else if (a.t.dtype == DType::kF32) {
        float* p = a.t.f32();
        for (int64_t i = 0; i < n; ++i) p[i] += 0.0f;
      }
      tensor_adj_.emplace(s, std::move(a));
      touched_.Set(s);
      return Status::Ok();
    }
  }
  IRT_ASSIGN_OR_RETURN(TensorAdj * a, TensorAdjOf(target, s));
  if (g.kind() != VKind::kTensor || g.tensor().shape != a->t.shape) {
    return InvalidArgument(
        GiverText(who) + " gives a " + TypeName(g) +
        (g.kind() == VKind::kTensor ? " " + FormatValue(g, {.max_elements = 3}) : "") +
        " adjoint for " + NodeName(target) + ", a " +
        TypeName(Value::MakeTensor(Tensor::Zeros(a->t.dtype, {}))) + " tensor of another shape");
  }
  const Tensor& gt = g.tensor();
  int64_t n = a->t.numel();
  if (a->t.dtype == DType::kF64) {
    double* p = a->t.f64();
    if (gt.dtype == DType::kF64) {
      const double* q = gt.f64();
      for (int64_t i = 0; i < n; ++i) p[i] += q[i];
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] += gt.at(i);
    }
  } else {
    float* p = a->t.f32();
    for (int64_t i = 0; i < n; ++i) p[i] += static_cast<float>(gt.at(i));
  }
  touched_.Set(s);
  return Status::Ok();
}

Status GradEngine::AccumulateSparse(NodeId target, double g, const double* idx, size_t nidx,
                                    const Value* vidx) {
  uint64_t s = varied_.Rank(target);
  Loc tl = Locate(target);
  if (Cls(tl).f->vkind == VKind::kTuple) {
    return NotFound("derivatives do not pass through tuples (no rule takes the tuple " +
                    NodeName(target) + ")");
  }
  if (Cls(tl).f->vkind != VKind::kTensor) {
    return InvalidArgument("a sparse rule adds into the scalar " + NodeName(target));
  }
  // The common case first, as the general path below computes it: one
  // index into the dense binary64 adjoint added into last (a loop reading
  // a vector element by element).
  if (nidx == 1 && vidx == nullptr && s == cached_slot_ && !cached_adj_->sparse &&
      cached_adj_->t.dtype == DType::kF64) {
    const double x = idx[0];
    if (x == std::trunc(x) && std::fabs(x) < 0x1p62) {
      const int64_t i = static_cast<int64_t>(x);
      Tensor& t = cached_adj_->t;
      if (i >= 1 && i <= t.numel()) {
        t.f64()[i - 1] += g;
        touched_.Set(s);
        return Status::Ok();
      }
    }
  }
  IRT_ASSIGN_OR_RETURN(TensorAdj * a, TensorAdjOf(target, s, /*sparse_ok=*/true));
  const std::vector<int64_t>& shape = a->t.shape;
  if (nidx != 1 && nidx != shape.size()) {
    return InvalidArgument("wrong number of indices adding into the adjoint of " +
                           NodeName(target));
  }
  int64_t small[8];
  std::vector<int64_t> big;
  int64_t* index = small;
  if (nidx > 8) {
    big.resize(nidx);
    index = big.data();
  }
  bool whole = true;
  for (size_t d = 0; d < nidx && whole; ++d) {
    double x = vidx ? vidx[d].to_double() : idx[d];
    whole = x == std::trunc(x) && std::fabs(x) < 0x1p62;
    index[d] = whole ? static_cast<int64_t>(x) : 0;
  }
  const int64_t off = whole ? ElementOffset(shape, std::span<const int64_t>(index, nidx)) : -1;
  if (off < 0) {
    return InvalidArgument("index out of bounds adding into the adjoint of " + NodeName(target));
  }
  AddAt(a, s, off, g);
  return Status::Ok();
}

void GradEngine::AddAt(TensorAdj* a, uint64_t slot, int64_t off, double g) {
  touched_.Set(slot);
  if (a->sparse) {
    // The sums a dense adjoint would hold: +0 plus each g in turn.
    const bool f32 = a->t.dtype != DType::kF64;
    uint32_t i = 0;
    while (i < a->n && a->off[i] != off) ++i;
    if (i < TensorAdj::kSparse) {
      if (i == a->n) {
        a->off[i] = off;
        a->sum[i] = 0.0;
        ++a->n;
      }
      a->sum[i] = f32 ? static_cast<double>(static_cast<float>(a->sum[i]) + static_cast<float>(g))
                      : a->sum[i] + g;
      return;
    }
    a->Densify();
  }
  if (a->t.dtype == DType::kF64) {
    a->t.f64()[off] += g;
  } else {
    a->t.f32()[off] += static_cast<float>(g);
  }
  touched_.Set(slot);
}

// getitem's reverse line, additem(zero(x), dy, i...), when dy is a number
// and i... name one element of x: dy added into that element of x's
// adjoint, as adding the program's tensor (zeros elsewhere) would: the
// adjoint holds no -0, so adding 0 changes no other element. False leaves
// the line to the values path (sub-tensors, other indices, errors).
bool GradEngine::AddItem(size_t j, const Program& p, size_t arity, uint64_t slot) {
  constexpr size_t kMaxIndices = 8;
  const OperandVal& o = ops_[j];
  // dy into zeros shaped like operand j itself.
  if (p.item_value != static_cast<int32_t>(arity + 1) ||
      p.item_zeros_of != static_cast<int32_t>(j) || o.vkind != VKind::kTensor ||
      p.item_index.size() > kMaxIndices) {
    return false;
  }
  int64_t index[kMaxIndices];
  for (size_t q = 0; q < p.item_index.size(); ++q) {
    const size_t reg = static_cast<size_t>(p.item_index[q]);
    if (reg >= arity || (ops_[reg].vkind != VKind::kI64 && ops_[reg].vkind != VKind::kBool)) {
      return false;
    }
    index[q] = static_cast<int64_t>(ops_[reg].bits);
  }
  const uint64_t s = varied_.Rank(o.target);
  Result<TensorAdj*> a = TensorAdjOf(o.target, s, /*sparse_ok=*/true);
  if (!a.ok()) return false;
  const int64_t off =
      ItemElementOffset((*a)->t.shape, std::span<const int64_t>(index, p.item_index.size()));
  if (off < 0) return false;
  AddAt(*a, s, off, adj_.Get(slot));
  return true;
}

// The adjoint of the node at `slot` as a value (scalars as the node's type).
// With `take`, a tensor adjoint is moved out (it is not needed again).
Value GradEngine::AdjointValue(uint64_t slot, const Loc& l, bool take) {
  const ClassInfo& k = Cls(l);
  if (k.f->vkind == VKind::kTuple) {
    auto t = tuple_adj_.find(slot);
    if (t == tuple_adj_.end()) return Value::Nothing();
    Value v = Value::MakeTuple(t->second.items);
    if (take && !opts_.keep_adjoints) tuple_adj_.erase(t);
    return v;
  }
  if (k.f->vkind != VKind::kTensor) return ScalarValue(adj_.Get(slot), k.f->vkind == VKind::kF32);
  auto it = tensor_adj_.find(slot);
  if (it == tensor_adj_.end()) {
    return Value::MakeTensor(
        Tensor::Zeros(l.cv->c->tensor_dtype(BitsOf(l)), l.cv->c->tensor_shape(BitsOf(l))));
  }
  it->second.Densify();
  if (!take || opts_.keep_adjoints) return Value::MakeTensor(it->second.t);
  Value v = Value::MakeTensor(std::move(it->second.t));
  if (cached_slot_ == slot) cached_slot_ = ~uint64_t{0};
  tensor_adj_.erase(it);
  return v;
}

Status GradEngine::Propagate(uint64_t from_slot, NodeId target, const Loc& from) {
  if (target == kNoNode || !varied_.Get(target)) return Status::Ok();
  const ClassInfo& k = Cls(from);
  if (k.f->vkind == VKind::kTuple) {
    auto it = tuple_adj_.find(from_slot);
    if (it == tuple_adj_.end()) {
      touched_.Set(varied_.Rank(target));
      return Status::Ok();
    }
    uint64_t ts = varied_.Rank(target);
    if (!opts_.keep_adjoints && !tuple_adj_.contains(ts) &&
        Cls(Locate(target)).f->vkind == VKind::kTuple) {
      TupleAdj moved = std::move(it->second);  // handed over, as a tensor's is
      tuple_adj_.erase(from_slot);
      tuple_adj_.emplace(ts, std::move(moved));
      touched_.Set(ts);
      return Status::Ok();
    }
    Value g = AdjointValue(from_slot, from, /*take=*/true);
    return AccumulateValue(target, std::move(g), Giver{.text = "a pass-through"});
  }
  if (k.f->vkind != VKind::kTensor) return AccumulateScalar(target, adj_.Get(from_slot));
  auto it = tensor_adj_.find(from_slot);
  if (it == tensor_adj_.end()) {
    touched_.Set(varied_.Rank(target));
    return Status::Ok();
  }
  uint64_t ts = varied_.Rank(target);
  auto tt = tensor_adj_.find(ts);
  const bool to_tensor = Cls(Locate(target)).f->vkind == VKind::kTensor;
  if (tt == tensor_adj_.end() && !opts_.keep_adjoints && to_tensor) {
    // Hand the buffer over.
    if (cached_slot_ == from_slot || cached_slot_ == ts) cached_slot_ = ~uint64_t{0};
    TensorAdj moved = std::move(it->second);
    tensor_adj_.erase(it);
    tensor_adj_.emplace(ts, std::move(moved));
    touched_.Set(ts);
    return Status::Ok();
  }
  TensorAdj& from_adj = it->second;
  if (from_adj.sparse && to_tensor) {
    // Element by element, as adding the dense adjoint would (its other
    // elements are +0): into the target's, when of the same shape.
    IRT_ASSIGN_OR_RETURN(TensorAdj * a, TensorAdjOf(target, ts, /*sparse_ok=*/true));
    if (a->t.dtype == from_adj.t.dtype && a->t.shape == from_adj.t.shape) {
      for (uint32_t i = 0; i < from_adj.n; ++i) AddAt(a, ts, from_adj.off[i], from_adj.sum[i]);
      touched_.Set(ts);
      if (!opts_.keep_adjoints) ForgetAdjoint(tensor_adj_.find(from_slot));
      return Status::Ok();
    }
  }
  from_adj.Densify();
  IRT_RETURN_IF_ERROR(
      AccumulateValue(target, Value::MakeTensor(from_adj.t), Giver{.text = "a pass-through"}));
  // Passed on: the sweep does not read it again.
  if (!opts_.keep_adjoints) ForgetAdjoint(tensor_adj_.find(from_slot));
  return Status::Ok();
}

void GradEngine::ForgetAdjoint(std::unordered_map<uint64_t, TensorAdj>::iterator it) {
  if (it == tensor_adj_.end()) return;
  if (cached_slot_ == it->first) cached_slot_ = ~uint64_t{0};
  tensor_adj_.erase(it);
}

// The common case without allocation: a primitive with a scalar result whose
// rule programs read only real scalars and add into scalar adjoints (or
// sparsely into tensors). Returns false to leave the node to ApplyReverse,
// which handles (and reports) everything else. Always inlined into the
// sweep, its only caller: it runs once per active node, where a call costs
// about 1% of the whole run (callgrind, testdata/ir/h.ir). FastReverse
// checks the class once and picks FastReverseN for its arity.
template <size_t kN>
[[gnu::always_inline]] inline bool GradEngine::FastReverseN(const Loc& l, NodeId id, uint64_t slot,
                                                            const ClassInfo& k,
                                                            const RevCache* rc) {
  constexpr size_t kMaxArity = kFastMaxArity;
  constexpr int32_t kMaxRegs = kFastMaxRegs;
  const size_t arity = kN != 0 ? kN : k.f->n_operands;
  double regs[kMaxRegs];
  NodeId targets[kMaxArity];
  bool var[kMaxArity];
  uint64_t real = k.lit_real | (uint64_t{1} << 63);
  const internal::NodeRec& nd = l.cv->nodes[l.local];
  const uint32_t* r = l.cv->refs + nd.first_ref;
  for (size_t j = 0; j < arity; ++j) {
    int32_t ri = k.ref_index[j];
    if (ri < 0) {
      regs[j] = k.lit_val[j];
      var[j] = false;
      continue;
    }
    NodeId t = id - r[ri];
    targets[j] = t;
    Loc tl = Locate(t);
    const internal::NodeRec& tn = tl.cv->nodes[tl.local];
    if (ScalarDouble(tl.cv->facts[tn.cls].vkind, tn.value, &regs[j])) real |= uint64_t{1} << j;
    var[j] = varied_.Get(t);
  }
  const RevCache::Step* steps = rc->steps.data();
  for (size_t j = 0; j < arity; ++j) {
    if (!var[j] || steps[j].prog == nullptr) continue;
    if (steps[j].mode == RevCache::Step::kNone || (rc->reads[j] & ~real) != 0) return false;
  }
  ScalarDouble(k.f->vkind, nd.value, &regs[arity]);
  regs[arity + 1] = adj_.Get(slot);
  ++stats_.rule_applications;
  for (size_t j = 0; j < arity; ++j) {
    const RevCache::Step& st = steps[j];
    if (!var[j] || st.mode == RevCache::Step::kNone) continue;
    switch (st.mode) {
      case RevCache::Step::kOne:
        internal::RunScalarInstr(st.one, regs);
        break;
      case RevCache::Step::kRun:
      case RevCache::Step::kSparse:
        internal::RunScalar(*st.prog, regs);
        break;
      default:  // kCopy: sum_to(dy, a) on scalars is no instruction at all
        break;
    }
    const double g = regs[st.out];
    const NodeId t = targets[j];
    if (st.mode == RevCache::Step::kSparse) [[unlikely]] {
      const Program& p = *st.prog;
      double idx[kMaxArity];
      size_t ni = p.souts.size() - 1;
      if (ni > kMaxArity) return false;
      for (size_t q = 0; q < ni; ++q) idx[q] = regs[p.souts[q + 1]];
      if (!AccumulateSparse(t, g, idx, ni, nullptr).ok()) return false;
      continue;
    }
    if (!((real >> j) & 1)) return false;  // a dense scalar into a tensor: a rule error
    AddScalar(t, g);
  }
  return true;
}

[[gnu::always_inline]] inline bool GradEngine::FastReverse(const Loc& l, NodeId id, uint64_t slot,
                                                           ClassInfo& k) {
  RevCache* rc = k.rev;
  if (rc == nullptr) {
    auto r = Reverse(k, k.rule, k.f->n_operands);
    if (!r) return false;
    rc = *r;
  }
  const size_t arity = k.f->n_operands;
  if (arity > kFastMaxArity || rc->max_regs > static_cast<size_t>(kFastMaxRegs)) {
    k.fast = false;
    return false;
  }
  // The arity known at compile time for the common operations, so that
  // the loops over the operands unroll and their arrays stay in registers.
  switch (arity) {
    case 1:
      return FastReverseN<1>(l, id, slot, k, rc);
    case 2:
      return FastReverseN<2>(l, id, slot, k, rc);
    default:
      return FastReverseN<0>(l, id, slot, k, rc);
  }
}

Status GradEngine::ApplyReverse(const Loc& l, NodeId id, uint64_t slot, NodeId marker,
                                const Rule* rule) {
  Loc src = marker != kNoNode ? Locate(marker) : l;
  NodeId src_id = marker != kNoNode ? marker : id;
  ClassInfo& sk = const_cast<ClassInfo&>(Cls(src));
  const ClassInfo& k = Cls(l);
  if (rule == nullptr) return MissingRule(src_id, sk, sk.f->op, sk.f->n_operands);
  Operands(src, src_id, &ops_);
  size_t arity = ops_.size();
  IRT_ASSIGN_OR_RETURN(RevCache * rc, Reverse(sk, rule, arity));
  ++stats_.rule_applications;
  uint64_t ybits = BitsOf(l);
  bool y_scalar = k.f->vkind != VKind::kTensor;
  uint64_t real = 0;  // operands that are real scalars
  for (size_t j = 0; j < arity && j < 63; ++j) {
    VKind vk = ops_[j].vkind;
    if (vk == VKind::kF64 || vk == VKind::kF32 || vk == VKind::kI64 || vk == VKind::kBool) {
      real |= uint64_t{1} << j;
    }
  }
  if (y_scalar) real |= uint64_t{1} << 63;
  bool regs_ready = false;
  bool values_ready = false;
  Value dy;
  for (size_t j = 0; j < arity; ++j) {
    const OperandVal& o = ops_[j];
    if (!o.varied || !rc->progs[j]) continue;
    const Program& p = *rc->progs[j];
    bool sparse = p.outputs.size() > 1;
    if (y_scalar && p.item_value >= 0 && AddItem(j, p, arity, slot)) continue;
    if (y_scalar && (rc->reads[j] & ~real) == 0) {
      if (!regs_ready) {
        scratch_.resize(rc->max_regs);
        for (size_t q = 0; q < arity; ++q) ScalarDouble(ops_[q].vkind, ops_[q].bits, &scratch_[q]);
        ScalarDouble(k.f->vkind, ybits, &scratch_[arity]);
        scratch_[arity + 1] = adj_.Get(slot);
        regs_ready = true;
      }
      internal::RunScalar(p, scratch_.data());
      double g = scratch_[static_cast<size_t>(p.souts[0])];
      if (sparse) {
        double idx[8];
        size_t ni = p.souts.size() - 1;
        if (ni <= 8) {
          for (size_t q = 0; q < ni; ++q) idx[q] = scratch_[static_cast<size_t>(p.souts[q + 1])];
          IRT_RETURN_IF_ERROR(AccumulateSparse(o.target, g, idx, ni, nullptr));
          continue;
        }
        std::vector<Value> vidx;
        for (size_t q = 0; q < ni; ++q) {
          vidx.push_back(Value::F64(scratch_[static_cast<size_t>(p.souts[q + 1])]));
        }
        IRT_RETURN_IF_ERROR(AccumulateSparse(o.target, g, nullptr, ni, vidx.data()));
        continue;
      }
      Loc tl = Locate(o.target);
      if (Cls(tl).f->vkind == VKind::kTensor) {
        IRT_RETURN_IF_ERROR(
            AccumulateValue(o.target, ScalarValue(g, false), Giver{.rule = rule, .node = src_id}));
      } else {
        IRT_RETURN_IF_ERROR(AccumulateScalar(o.target, g));
      }
      continue;
    }
    // On values.
    if (!values_ready) {
      vscratch_.assign(rc->max_regs, Value());
      dy = AdjointValue(slot, l, /*take=*/true);
      values_ready = true;
    }
    for (size_t q = 0; q < arity; ++q) {
      if (p.reads[q] && vscratch_[q].is_none()) vscratch_[q] = DecodeOperand(ops_[q]);
    }
    if (p.reads[arity] && vscratch_[arity].is_none()) {
      vscratch_[arity] = DecodeAt(*l.cv->c, ybits, k.f->vkind);
    }
    vscratch_[arity + 1] = dy;
    bool f32 =
        k.f->vkind == VKind::kF32 || (!y_scalar && l.cv->c->tensor_dtype(ybits) == DType::kF32);
    Status s = internal::RunValues(p, vscratch_, f32);
    if (!s.ok()) return Status(s.code(), NodeName(src_id) + ": " + s.message());
    const Value& g = vscratch_[static_cast<size_t>(p.outputs[0])];
    if (sparse) {
      std::vector<Value> vidx;
      for (size_t q = 1; q < p.outputs.size(); ++q) {
        vidx.push_back(vscratch_[static_cast<size_t>(p.outputs[q])]);
      }
      if (!g.is_scalar()) {
        return InvalidArgument(NodeName(src_id) + ": a sparse rule must add a number");
      }
      IRT_RETURN_IF_ERROR(
          AccumulateSparse(o.target, g.to_double(), nullptr, vidx.size(), vidx.data()));
      continue;
    }
    // The registers past the inputs (arguments, result, dy) are written
    // again by the next program that uses them: g can be handed over, once
    // the others (which may share its tensor) are let go.
    Value gv = g;
    if (p.outputs[0] > static_cast<int32_t>(arity + 1)) {
      for (size_t q = arity + 2; q < vscratch_.size(); ++q) vscratch_[q] = Value();
    }
    IRT_RETURN_IF_ERROR(AccumulateValue(o.target, std::move(gv),
                                        Giver{.rule = rule, .node = src_id}, p.output_is_product));
  }
  return Status::Ok();
}

Status GradEngine::ReversePass() {
  double t0 = Now();
  uint64_t n = trace_.size();
  adj_.Reset(n_active_);
  touched_.Resize(n_active_);
  NodeId res = result_node();
  if (varied_.Get(res)) {
    uint64_t s = varied_.Rank(res);
    Loc l = Locate(res);
    const ClassInfo& k = Cls(l);
    const Value& seed = *opts_.seed;
    if (k.f->vkind == VKind::kTensor) {
      IRT_ASSIGN_OR_RETURN(TensorAdj * a, TensorAdjOf(res, s));
      if (seed.kind() == VKind::kTensor) {
        if (seed.tensor().shape != a->t.shape) {
          return UsageError("the seed has the shape of " + FormatValue(seed, {.max_elements = 3}) +
                            ", the result's is different");
        }
        for (int64_t i = 0; i < a->t.numel(); ++i) {
          if (a->t.dtype == DType::kF64) {
            a->t.f64()[i] = seed.tensor().at(i);
          } else {
            a->t.f32()[i] = static_cast<float>(seed.tensor().at(i));
          }
        }
      } else {
        for (int64_t i = 0; i < a->t.numel(); ++i) {
          if (a->t.dtype == DType::kF64) {
            a->t.f64()[i] = seed.to_double();
          } else {
            a->t.f32()[i] = static_cast<float>(seed.to_double());
          }
        }
      }
    } else {
      adj_[s] = seed.to_double();
    }
    touched_.Set(s);
  }
  uint64_t slot = n_active_;
  const uint64_t* const words = varied_.words();
  sweeping_ = true;
  // The sweep counts as a second pass over the trace's nodes: 2^16 nodes
  // (1024 words of the bit set) at a time, so the loop stays as it was.
  Progress* progress = trace_.progress();
  if (progress != nullptr) progress->AddTotal(n);
  for (uint64_t w = (n + 63) / 64; w-- > 0;) {
    if (progress != nullptr && w % 1024 == 0) progress->Add(std::min<uint64_t>(n - w * 64, 65536));
    uint64_t word = words[w];
    while (word != 0) {
      int bit = 63 - __builtin_clzll(word);
      word &= ~(uint64_t{1} << bit);
      NodeId id = w * 64 + static_cast<uint64_t>(bit);
      --slot;
      // Entering a page of adjoints: the one above is done with.
      if ((slot & (AdjointPages::kPage - 1)) == AdjointPages::kPage - 1 && !opts_.keep_adjoints) {
        adj_.Release(slot + 1);
      }
      if (!touched_.Get(slot)) continue;
      Trim();  // no Loc is held from node to node
      Loc l = Locate(id);
      if (l.cv != cur_) trace_.DecodeBehind(l.cv->index);
      cur_ = l.cv;
      const ClassInfo& k = Cls(l);
      switch (k.cat) {
        case Cat::kReturn: {
          NodeId m = RuledMarker(l, id);
          if (m != kNoNode) {
            IRT_RETURN_IF_ERROR(ApplyReverse(l, id, slot, m, Cls(Locate(m)).rule));
            break;
          }
          [[fallthrough]];  // a call's result, passed on to its caller
        }
        case Cat::kFuncArg:
        case Cat::kBlockArg:
          if (k.y_real) {
            // A number passed on (a loop's variable, a call's argument or
            // result): Propagate's scalar case, without its Status.
            const NodeId t = PassTarget(l, id);
            if (t != kNoNode && varied_.Get(t)) AddScalar(t, adj_.Get(slot));
            break;
          }
          IRT_RETURN_IF_ERROR(Propagate(slot, PassTarget(l, id), l));
          break;
        case Cat::kPrim:
          // FastReverse first: the getindex of a tensor is the common case,
          // and it adds nothing into a tuple (not a real scalar; a sparse
          // rule's AccumulateSparse refuses one), leaving it to TupleReverse.
          if (k.fast && FastReverse(l, id, slot, const_cast<ClassInfo&>(k))) break;
          if (k.tuple_op != ClassInfo::kNoTupleOp) {
            IRT_ASSIGN_OR_RETURN(bool done, TupleReverse(l, id, slot, k));
            if (done) break;
          }
          IRT_RETURN_IF_ERROR(ApplyReverse(l, id, slot, kNoNode, k.rule));
          break;
        default:
          break;
      }
    }
  }
  stats_.sweep_seconds = Now() - t0;
  return Status::Ok();
}

}  // namespace irt::internal::grad
