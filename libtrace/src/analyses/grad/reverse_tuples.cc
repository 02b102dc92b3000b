// The reverse sweep's tuples: derivatives pass through tuple(...),
// getitem, getindex, getslice, cat and collect natively (TupleReverse),
// a tuple's adjoint kept item by item, not by rules.
#include <string>
#include <utility>
#include <vector>

#include "irt/ops.h"
#include "irt/print.h"

// Last: it turns on the popcnt instruction for the rest of the file.
#include "analyses/grad/engine.h"
#include "io/chunk.h"

namespace irt::internal::grad {

namespace {

// Adds the adjoint g into `dst`, an item of a tuple adjoint (Nothing: none
// yet): numbers to numbers, tensors to tensors of the same shape, tuples
// item by item. Tuples nest at most kMaxTupleDepth deep (VerifyChunk), which
// bounds the recursion.
Status AddItemAdjoint(Value& dst, const Value& g, int depth) {
  if (g.kind() == VKind::kNothing) return Status::Ok();
  if (dst.kind() == VKind::kNothing) {
    dst = g;
    return Status::Ok();
  }
  if (dst.is_scalar() && g.is_scalar() && dst.kind() != VKind::kNone && g.kind() != VKind::kNone) {
    dst = ScalarValue(dst.to_double() + g.to_double(), dst.kind() == VKind::kF32);
    return Status::Ok();
  }
  if (dst.kind() == VKind::kTensor && g.kind() == VKind::kTensor &&
      dst.tensor().shape == g.tensor().shape &&
      (dst.tensor().dtype == DType::kF64 || dst.tensor().dtype == DType::kF32)) {
    Tensor t = dst.tensor();
    const Tensor& b = g.tensor();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype == DType::kF64) {
        t.f64()[i] += b.at(i);
      } else {
        t.f32()[i] += static_cast<float>(b.at(i));
      }
    }
    dst = Value::MakeTensor(std::move(t));
    return Status::Ok();
  }
  if (dst.kind() == VKind::kTuple && g.kind() == VKind::kTuple &&
      dst.tuple().size() == g.tuple().size() && depth < 2 * internal::kMaxTupleDepth) {
    std::vector<Value> items = dst.tuple();
    for (size_t i = 0; i < items.size(); ++i) {
      IRT_RETURN_IF_ERROR(AddItemAdjoint(items[i], g.tuple()[i], depth + 1));
    }
    dst = Value::MakeTuple(std::move(items));
    return Status::Ok();
  }
  return InvalidArgument("a " + TypeName(g) + " adjoint added to a " + TypeName(dst) +
                         " one in a tuple");
}

}  // namespace

Status GradEngine::AccumulateTupleItem(NodeId target, size_t item, size_t n, Value g) {
  uint64_t s = varied_.Rank(target);
  TupleAdj& a = tuple_adj_[s];
  if (a.items.empty()) a.items.assign(n, Value::Nothing());
  if (item >= a.items.size()) {
    return InvalidArgument("item " + std::to_string(item) + " of the adjoint of " +
                           NodeName(target) + ", a tuple of " + std::to_string(a.items.size()));
  }
  Status st = AddItemAdjoint(a.items[item], g, 0);
  if (!st.ok()) return Status(st.code(), NodeName(target) + ": " + st.message());
  touched_.Set(s);
  return Status::Ok();
}

Result<bool> GradEngine::TupleReverse(const Loc& l, NodeId id, uint64_t slot, const ClassInfo& k) {
  if (k.tuple_op == ClassInfo::kTupleMake) {
    auto it = tuple_adj_.find(slot);
    if (it == tuple_adj_.end()) return true;
    std::vector<Value> items = it->second.items;
    if (!opts_.keep_adjoints) tuple_adj_.erase(it);
    Operands(l, id, &ops_);
    for (size_t j = 0; j < ops_.size() && j < items.size(); ++j) {
      const OperandVal& o = ops_[j];
      if (!o.varied || items[j].kind() == VKind::kNothing) continue;
      if (o.vkind == VKind::kTuple) {
        if (items[j].kind() != VKind::kTuple) {
          return InvalidArgument(NodeName(id) + ": a " + TypeName(items[j]) +
                                 " adjoint for the tuple " + NodeName(o.target));
        }
        const std::vector<Value>& sub = items[j].tuple();
        for (size_t q = 0; q < sub.size(); ++q) {
          IRT_RETURN_IF_ERROR(AccumulateTupleItem(o.target, q, sub.size(), sub[q]));
        }
        continue;
      }
      IRT_RETURN_IF_ERROR(
          AccumulateValue(o.target, std::move(items[j]), Giver{.text = "a tuple's item"}));
    }
    return true;
  }
  if (k.tuple_op == ClassInfo::kTupleCat) {
    // cat(1, t1, t2, ...) of tuples: each receives its run of items.
    if (Facts(l).vkind != VKind::kTuple) return false;  // tensors': the rule
    Operands(l, id, &ops_);
    Value dy = AdjointValue(slot, l, /*take=*/true);
    if (dy.kind() != VKind::kTuple) return true;  // none came
    const std::vector<Value>& items = dy.tuple();
    size_t at = 0;
    for (size_t j = 1; j < ops_.size(); ++j) {
      const OperandVal& o = ops_[j];
      if (o.vkind != VKind::kTuple) {
        return InvalidArgument(NodeName(id) + ": joins a tuple with what is not one");
      }
      const size_t n = static_cast<size_t>(o.chunk->tuple_size(o.bits));
      for (size_t q = 0; o.varied && q < n && at + q < items.size(); ++q) {
        if (items[at + q].kind() == VKind::kNothing) continue;
        IRT_RETURN_IF_ERROR(AccumulateTupleItem(o.target, q, n, items[at + q]));
      }
      at += n;
    }
    return true;
  }
  if (k.tuple_op == ClassInfo::kTupleCollect) {
    // collect(t): element q of the vector's adjoint to item q of t, a float.
    Operands(l, id, &ops_);
    const OperandVal& o = ops_[0];
    if (!o.varied) return true;
    Value dy = AdjointValue(slot, l, /*take=*/true);
    Value t = DecodeOperand(o);
    if (dy.kind() != VKind::kTensor || t.kind() != VKind::kTuple) return true;
    const std::vector<Value>& items = t.tuple();
    if (dy.tensor().numel() != static_cast<int64_t>(items.size())) {
      return InvalidArgument(NodeName(id) + ": a vector adjoint of " +
                             std::to_string(dy.tensor().numel()) + " elements for a tuple of " +
                             std::to_string(items.size()));
    }
    for (size_t q = 0; q < items.size(); ++q) {
      const VKind ik = items[q].kind();
      if (ik != VKind::kF64 && ik != VKind::kF32) continue;
      IRT_RETURN_IF_ERROR(AccumulateTupleItem(
          o.target, q, items.size(),
          ScalarValue(dy.tensor().at(static_cast<int64_t>(q)), ik == VKind::kF32)));
    }
    return true;
  }
  // getitem(x, i), getindex(x, i), getslice(x, 1, ...) of a tuple x.
  if (k.ref_index[0] < 0) return false;
  const NodeId x = RefTarget(l, id, static_cast<uint32_t>(k.ref_index[0]));
  Loc xl = Locate(x);
  if (Facts(xl).vkind != VKind::kTuple) return false;  // a tensor's: the rule
  if (!varied_.Get(x)) return true;
  Operands(l, id, &ops_);
  if (k.tuple_op == ClassInfo::kTupleSlice) {
    const uint64_t xs = varied_.Rank(x);
    auto xa = tuple_adj_.find(xs);
    const int64_t n = xa != tuple_adj_.end() && !xa->second.items.empty()
                          ? static_cast<int64_t>(xa->second.items.size())
                          : xl.cv->c->tuple_size(BitsOf(xl));
    int64_t first = 0, step = 1, count = 0;
    IRT_RETURN_IF_ERROR(TupleSliceOf(id, ops_, n, &first, &step, &count));
    Value dy = AdjointValue(slot, l, /*take=*/true);
    if (dy.kind() != VKind::kTuple) return true;  // none came
    const std::vector<Value>& items = dy.tuple();
    for (int64_t q = 0; q < count && static_cast<size_t>(q) < items.size(); ++q) {
      IRT_RETURN_IF_ERROR(AccumulateTupleItem(x, static_cast<size_t>(first + q * step),
                                              static_cast<size_t>(n), items[q]));
    }
    return true;
  }
  const OperandVal& o = ops_[1];
  if (o.vkind != VKind::kI64 && o.vkind != VKind::kBool) {
    return InvalidArgument(NodeName(id) + ": a tuple's index must be an integer");
  }
  const uint64_t xs = varied_.Rank(x);
  auto it = tuple_adj_.find(xs);
  const int64_t n = it != tuple_adj_.end() && !it->second.items.empty()
                        ? static_cast<int64_t>(it->second.items.size())
                        : xl.cv->c->tuple_size(BitsOf(xl));
  const int64_t i = TupleItemAt(k, o.bits, n);
  if (i < 0) return InvalidArgument(NodeName(id) + ": index out of bounds");
  IRT_RETURN_IF_ERROR(AccumulateTupleItem(x, static_cast<size_t>(i), static_cast<size_t>(n),
                                          AdjointValue(slot, l, /*take=*/true)));
  return true;
}

}  // namespace irt::internal::grad
