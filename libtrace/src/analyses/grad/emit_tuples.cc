// --emit-trace's tuples: a tuple's adjoint kept item by item (a tree of
// Refs for nested tuples), never as a tuple node, as GradEngine keeps it.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/chunk.h"
#include "irt/ops.h"

// Last: it turns on the popcnt instruction for the rest of the file.
#include "analyses/grad/emitter.h"

namespace irt::internal::grad {

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
  if (k.tuple_op == ClassInfo::kTupleCat) {
    // cat(1, t1, t2, ...) of tuples: each receives its run of items.
    if (k.f->vkind != VKind::kTuple) return false;  // tensors': the rule
    TupleRefs dy;
    if (!take(&dy)) return true;
    size_t at = 0;
    for (size_t j = 1; j < ops_.size(); ++j) {
      const OperandVal& o = ops_[j];
      if (o.vkind != VKind::kTuple) {
        return InvalidArgument(e_.NodeName(id) + ": joins a tuple with what is not one");
      }
      const size_t n = static_cast<size_t>(o.chunk->tuple_size(o.bits));
      if (o.varied && at + n <= dy.items.size()) {
        TupleRefs part;
        part.Resize(n);
        for (size_t q = 0; q < n; ++q) {
          part.items[q] = dy.items[at + q];
          part.sub[q] = std::move(dy.sub[at + q]);
        }
        IRT_RETURN_IF_ERROR(
            MergeRefs(tuple_items_[e_.Slot(o.target)], std::move(part), o.target, 0));
      }
      at += n;
    }
    return true;
  }
  if (k.tuple_op == ClassInfo::kTupleCollect) {
    // collect(t): getindex(dy, q + 1) to item q of t, a float.
    const OperandVal x = ops_[0];
    if (!x.varied || x.vkind != VKind::kTuple) return true;
    IRT_RETURN_IF_ERROR(Materialize(slot, id));
    const Ref dy = adj_.Get(slot);
    if (dy.absent() || dy.value.kind() != VKind::kTensor) return true;
    const Value t = e_.DecodeOperand(x);
    const std::vector<Value>& items = t.tuple();
    if (dy.value.tensor().numel() != static_cast<int64_t>(items.size())) {
      return InvalidArgument(e_.NodeName(id) + ": a vector adjoint for a tuple of " +
                             std::to_string(items.size()));
    }
    TupleRefs& xr = TupleRefsOf(x);
    for (size_t q = 0; q < items.size() && q < xr.items.size(); ++q) {
      const VKind ik = items[q].kind();
      if (ik != VKind::kF64 && ik != VKind::kF32) continue;
      const Ref idx[] = {dy, Ref{kNoNode, Value::I64(static_cast<int64_t>(q) + 1)}};
      const Value v = ScalarValue(dy.value.tensor().at(static_cast<int64_t>(q)), ik == VKind::kF32);
      const Ref item{Emit(NodeKind::kPrimitive, "getindex", idx, v, LocOf(id), PrimalOf(x.target)),
                     v};
      IRT_RETURN_IF_ERROR(AddRef(xr.items[q], item, x.target));
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
  const int64_t i = TupleItemAt(k, ops_[1].bits, n);
  if (i < 0) return InvalidArgument(e_.NodeName(id) + ": index out of bounds");
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

}  // namespace irt::internal::grad
