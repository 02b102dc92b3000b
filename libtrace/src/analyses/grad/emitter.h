// Internal to irt-grad's --emit-trace (emit.cc, emit_tuples.cc): the
// Emitter, which writes the backward pass as a trace.
#ifndef IRT_SRC_ANALYSES_GRAD_EMITTER_H_
#define IRT_SRC_ANALYSES_GRAD_EMITTER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "irt/grad.h"
#include "irt/writer.h"

// Last: it turns on the popcnt instruction for the rest of the file.
#include "analyses/grad/engine.h"

namespace irt::internal::grad {

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

}  // namespace irt::internal::grad

#endif  // IRT_SRC_ANALYSES_GRAD_EMITTER_H_
