// The gradient engine that irt-grad's files share (internal).
//
// One forward pass over the raw node columns checks every node it reads
// (class, reference range and distances, value indices, call nesting),
// marks the active nodes (floating-point values that depend on a chosen
// argument) in a bit set with rank, and in forward mode computes tangents
// (forward.cc). The reverse sweep then visits the global node order
// backward (reverse.cc; tuples: reverse_tuples.cc). Nodes are read
// through the column reader (column_reader.h): a node class's facts are
// the reader's ClassFacts, and ClassInfo holds only what the passes add
// per class.
// The writers (annotate.cc, emit.cc) read the engine's activity and
// adjoints through the accessors marked below.
#ifndef IRT_SRC_ANALYSES_GRAD_ENGINE_H_
#define IRT_SRC_ANALYSES_GRAD_ENGINE_H_

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/column_reader.h"
#include "io/grow_buffer.h"
#include "irt/grad.h"
#include "irt/rules.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"
#include "ops/rule_program.h"

// Rank queries on the activity bit set are in the sweep's inner loop; every
// x86-64 processor since 2008 counts bits in one instruction. The pragma
// holds to the end of each file that includes this header, so that the
// engine's inline rank queries can be inlined there: include it last.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__POPCNT__)
#pragma GCC target("popcnt")
#endif

namespace irt::internal::grad {

using internal::kZeroReg;
using internal::Program;

inline uint64_t PopCount(uint64_t w) { return static_cast<uint64_t>(__builtin_popcountll(w)); }

inline double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A bit per node with rank: the slot of an active node is the number of
// active nodes before it. Built in ascending order (Advance keeps the
// prefix counts current), queried anywhere behind.
class RankBits {
 public:
  void Resize(uint64_t n) {
    const uint64_t nw = n / 64 + 1;
    words_ = wbuf_.Zeroed(nw);
    prefix_ = pbuf_.Zeroed(nw + 1);
  }
  void Set(uint64_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  bool Get(uint64_t i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  /// Call with each index in ascending order before Set/Rank at it.
  void Advance(uint64_t i) {
    if ((i & 63) == 0 && i > 0) {
      uint64_t w = i >> 6;
      prefix_[w] = prefix_[w - 1] + PopCount(words_[w - 1]);
    }
  }
  const uint64_t* words() const { return words_; }
  uint64_t* data() { return words_; }
  uint64_t Rank(uint64_t i) const {
    uint64_t w = i >> 6;
    uint64_t mask = (uint64_t{1} << (i & 63)) - 1;
    return prefix_[w] + PopCount(words_[w] & mask);
  }

 private:
  // Tensor blocks when large: a fault per 2 MiB (internal::GrowBuffer).
  internal::GrowBuffer<uint64_t> wbuf_, pbuf_;
  uint64_t* words_ = nullptr;
  uint64_t* prefix_ = nullptr;
};

class Bits {
 public:
  void Resize(uint64_t n) { w_ = buf_.Zeroed(n / 64 + 1); }
  void Set(uint64_t i) { w_[i >> 6] |= uint64_t{1} << (i & 63); }
  bool Get(uint64_t i) const { return (w_[i >> 6] >> (i & 63)) & 1; }

 private:
  internal::GrowBuffer<uint64_t> buf_;
  uint64_t* w_ = nullptr;
};

// Scalar adjoints (or tangents) by slot, in pages of 2^18 (2 MiB, a tensor
// block: one page fault each) that are allocated when first written. The reverse sweep gives a page
// back once it is below it, and takes given-back pages before fresh ones: fresh memory, which the
// kernel must clear, costs more than the sweep itself on a long loop, and a sweep needs only the
// adjoints of the nodes still ahead of it. The lowest slots (the root's arguments) are given back
// last, never.
class AdjointPages {
 public:
  static constexpr unsigned kShift = 18;
  static constexpr uint64_t kPage = uint64_t{1} << kShift;

  /// Room for `n` slots, all zero, and nothing held. Fewer than kSmallSlots
  /// (a small trace) live in one page of exactly `n` on the heap: a fault
  /// per 4 KiB used, where a block costs clearing 2 MiB.
  void Reset(uint64_t n) {
    for (double* p : pages_) {
      if (p != nullptr && p != small_.get()) free_.push_back(p);
    }
    pages_.assign((n + kPage - 1) >> kShift, nullptr);
    small_.reset();
    small_n_ = n < kSmallSlots ? n : 0;
  }
  /// Room for at least `n` slots, keeping what is there.
  void Grow(uint64_t n) {
    if (small_n_ != 0 && n > small_n_) Unsmall();
    uint64_t want = (n + kPage - 1) >> kShift;
    if (pages_.size() < want) pages_.resize(std::max<uint64_t>(want, pages_.size() * 2), nullptr);
  }
  /// The slot, for writing (its page is allocated, zero, if it was not).
  double& operator[](uint64_t s) {
    double* p = pages_[s >> kShift];
    if (p == nullptr) [[unlikely]]
      p = Fill(s >> kShift);
    return p[s & (kPage - 1)];
  }
  /// The slot's value: zero in a page never written.
  double Get(uint64_t s) const {
    const double* p = pages_[s >> kShift];
    return p != nullptr ? p[s & (kPage - 1)] : 0.0;
  }
  /// Gives back the page of slot `s` (none of its slots is read again).
  void Release(uint64_t s) {
    double*& p = pages_[s >> kShift];
    if (p == nullptr || p == small_.get()) return;  // a small page is no whole page
    free_.push_back(p);
    p = nullptr;
  }

 private:
  static constexpr uint64_t kSmallSlots = uint64_t{1} << 13;
  double* Fill(uint64_t page);
  double* Block();  // a whole page, zero
  void Unsmall();   // page 0 becomes a whole page
  std::vector<double*> pages_;
  std::vector<double*> free_;        // given back, to be zeroed and reused
  std::unique_ptr<double[]> small_;  // page 0 of a small trace, once written
  uint64_t small_n_ = 0;             // its slots; 0: page 0 is a whole page
  struct FreeDeleter {
    void operator()(double* p) const { FreeTensorBlock(p, kPage * sizeof(double)); }
  };
  std::vector<std::unique_ptr<double, FreeDeleter>> store_;  // every page allocated
};

// The reverse programs of a (rule, arity), compiled once.
struct RevCache {
  std::vector<std::optional<Program>> progs;  // per argument
  std::vector<uint64_t> reads;                // per argument: operands read (bit j), bit 63: result
  size_t max_regs = 0;
  // FastReverse's compact view of progs, per argument: how the program
  // runs on binary64 registers and where its contribution lands.
  struct Step {
    enum Mode : uint8_t {
      kNone,    // no derivative for this argument
      kCopy,    // no instruction: the contribution is a register already set
      kOne,     // one instruction, no constants: `one`, run inline
      kRun,     // RunScalar
      kSparse,  // contribution and indices (AccumulateSparse); RunScalar first
    };
    Mode mode = kNone;
    int16_t out = 0;  // the contribution's register (souts[0])
    ScalarInstr one{};
    const Program* prog = nullptr;
  };
  std::vector<Step> steps;
};

struct FwdEntry {
  uint64_t mask = ~uint64_t{0};
  const Program* prog = nullptr;
};

// What the passes do with a node of a class.
enum class Cat : uint8_t {
  kInert,     // constants, jumps, nondiff or non-float primitives: never active
  kPrim,      // a primitive or special that may produce a float
  kCall,      // a call marker
  kReturn,    // a return (closer)
  kError,     // an error (closer)
  kRootArg,   // a function argument without operands (the root's, or a literal actual)
  kFuncArg,   // a nested call's function argument (references the actual)
  kBlockArg,  // a block argument (references its jump)
};

// What the passes keep per node class beside its facts (f, from the column
// reader): its category, rule, operand layout and compiled programs.
struct ClassInfo {
  const internal::ClassFacts* f = nullptr;
  Cat cat = Cat::kInert;
  bool y_real = false;  // the node's value is a real scalar
  bool fast = false;    // FastReverse may apply
  bool nondiff = false;
  // tuple(a...), getitem(x, i), getindex(x, i), getslice(x, 1, ...),
  // cat(1, t...), collect(t): derivatives pass through tuples natively
  // (TupleReverse), not by rules.
  enum TupleOp : uint8_t {
    kNoTupleOp,
    kTupleMake,
    kTupleItem,
    kTupleIndex,
    kTupleSlice,
    kTupleCat,
    kTupleCollect
  };
  TupleOp tuple_op = kNoTupleOp;
  std::vector<int32_t> ref_index;  // per operand: index among dynamic refs, or -1 (literal)
  std::vector<double> lit_val;     // per operand: a real literal as binary64
  uint64_t lit_real = 0;           // operands that are real literals (bit j)
  const Rule* rule = nullptr;      // Primitive/Special: its rule; Call: a rule for the callee
  RevCache* rev = nullptr;
  FwdEntry fwd;
};

// The 0-based item that getitem(t, i) (0-based, negative from the end) or
// getindex(t, i) (1-based) of a tuple of n items reads, or -1 when i is
// out of range (any int64_t i: no overflow).
inline int64_t TupleItemAt(const ClassInfo& k, uint64_t bits, int64_t n) {
  const int64_t i = static_cast<int64_t>(bits);
  if (k.tuple_op == ClassInfo::kTupleIndex) return i >= 1 && i <= n ? i - 1 : -1;
  if (i < 0) return i >= -n ? i + n : -1;
  return i < n ? i : -1;
}

struct ChunkView {
  bool ready = false;
  // The decoded node and reference columns may be given back to the trace
  // (GradEngine::Trim) and decoded again on the next Locate.
  bool released = false;
  uint32_t index = 0;  // the chunk's
  uint64_t tick = 0;   // when last entered, for Trim
  uint64_t bytes = 0;  // of the decoded columns
  const internal::ChunkColumns* c = nullptr;
  NodeId base = 0;
  uint32_t n = 0;
  uint32_t base_depth = 0;
  const internal::NodeRec* nodes = nullptr;
  const uint32_t* refs = nullptr;
  uint32_t nrefs = 0;
  const uint32_t* operands = nullptr;
  const internal::ValueRec* literals = nullptr;
  uint32_t ntensors = 0;
  const internal::ClassFacts* facts = nullptr;  // by class: the reader's facts
  std::vector<ClassInfo> classes;               // by class: the passes' side table
  std::vector<uint8_t> inert;                   // by class: classes[i].cat == Cat::kInert
};

inline bool ScalarDouble(VKind k, uint64_t bits, double* out) {
  switch (k) {
    case VKind::kF64:
      *out = std::bit_cast<double>(bits);
      return true;
    case VKind::kF32:
      *out = std::bit_cast<float>(static_cast<uint32_t>(bits));
      return true;
    case VKind::kI64:
      *out = static_cast<double>(static_cast<int64_t>(bits));
      return true;
    case VKind::kBool:
      *out = bits != 0 ? 1.0 : 0.0;
      return true;
    default:
      return false;
  }
}

/// Whether a value holds a float: a Float64 or Float32, a tensor of them,
/// or a tuple holding one.
bool HoldsFloat(const Value& v);

inline Value ScalarValue(double d, bool f32) {
  return f32 ? Value::F32(static_cast<float>(d)) : Value::F64(d);
}

inline std::string LocationText(const ClassInfo& k) {
  bool branch = k.f->kind == NodeKind::kJump || k.f->kind == NodeKind::kReturn;
  return "§" + std::to_string(k.f->block) + (branch ? ":&" : ":%") + std::to_string(k.f->pos);
}

// One operand of a node, as the rules see it.
struct OperandVal {
  bool is_ref = false;
  NodeId target = kNoNode;
  VKind vkind = VKind::kNone;
  uint64_t bits = 0;
  const internal::ChunkColumns* chunk = nullptr;  // where bits are interpreted
  bool varied = false;
};

// Who gives an adjoint to AccumulateValue, spelled out only when it reports
// an error: a node's name walks back over its call body, so building it for
// every node would make the sweep quadratic in the body's length.
struct Giver {
  const char* text = nullptr;  // e.g. "a pass-through"; else the rule's
  const Rule* rule = nullptr;  // "the rule for SIGNATURE"
  NodeId node = kNoNode;       // with a rule: named before it
};

// A tensor adjoint being accumulated. Dense: t holds every element. Or
// sparse, while nothing but single elements has been added into it
// (getindex's and getitem's rules, at most kSparse distinct ones): those
// elements' sums, and only t's dtype and shape. A tensor passed to a call
// per iteration, one element read in each, then gets an adjoint of one
// element per call, not a tensor of zeros the size of it (quadratic time
// and, kept, memory). Either way the adjoint holds no -0, so an element a
// sparse adjoint lacks is +0 and adding it changes nothing.
struct TensorAdj {
  static constexpr uint32_t kSparse = 8;
  Tensor t;
  bool sparse = false;
  uint32_t n = 0;             // sparse elements
  int64_t off[kSparse] = {};  // their row-major offsets
  double sum[kSparse] = {};   // their sums (of a Float32 adjoint: Float32 sums)
  /// A sparse adjoint of nothing yet, of t's type and shape.
  static TensorAdj Sparse(DType dtype, std::vector<int64_t> shape) {
    TensorAdj a;
    a.t.dtype = dtype;
    a.t.shape = std::move(shape);
    a.sparse = true;
    return a;
  }
  /// Makes a sparse adjoint dense: zeros, its elements set.
  void Densify() {
    if (!sparse) return;
    t = Tensor::Zeros(t.dtype, t.shape);
    for (uint32_t i = 0; i < n; ++i) {
      if (t.dtype == DType::kF64) {
        t.f64()[off[i]] = sum[i];
      } else {
        t.f32()[off[i]] = static_cast<float>(sum[i]);
      }
    }
    sparse = false;
    n = 0;
  }
};

// A tuple adjoint being accumulated: an adjoint per item (a number's, a
// tensor's, a nested tuple's as a tuple), Nothing where none has come.
struct TupleAdj {
  std::vector<Value> items;
};

// Thrown from Locate when a released chunk cannot be decoded again (its file
// changed since it was checked); Differentiate returns the status.
struct ColumnsLost {
  Status status;
};

// The passes over one trace and what they leave: activity, adjoints or
// tangents, the root's arguments, statistics.
//
// On a trace that uses transient columns (Trace::UseTransientColumns) the
// engine holds the decoded columns of a bounded set of chunks: Trim gives
// back the least recently entered ones beyond the budget, at the top of the
// passes' loops only (a Loc stays valid until then), and Locate decodes a
// given-back chunk again. A pass that keeps coming back to chunks it gave
// back (references scattered over the trace) quadruples the budget, up to
// kMaxColumnBudget. The forward pass gives back the least recently entered
// chunk first; the reverse sweep, which walks the chunks from the last
// down, the highest (those it has left behind).
class GradEngine {
 public:
  GradEngine(const Trace& trace, const RuleSet& rules, const GradOptions& opts)
      : trace_(trace),
        rules_(rules),
        opts_(opts),
        budget_(opts.column_budget != 0 ? opts.column_budget : kColumnBudget) {}

  Status ForwardPass(bool forward_mode, bool all_float_args);
  Status ReversePass();
  Status Finish(GradResult* out);

  // For the writers.
  const Trace& trace() const { return trace_; }
  bool Varied(NodeId id) const { return varied_.Get(id); }
  uint64_t Slot(NodeId id) const { return varied_.Rank(id); }
  bool Touched(NodeId id) const { return varied_.Get(id) && touched_.Get(Slot(id)); }
  /// The adjoint of an active node (kept with keep_adjoints), or none.
  std::optional<Value> Adjoint(NodeId id);

  struct Loc {
    ChunkView* cv;
    uint32_t local;
  };
  Result<ChunkView*> View(uint32_t ci);
  /// The chunk of a node: the chunk in use or the last far one (a value
  /// referenced from far away, like a loop's input), else a search.
  Loc Locate(NodeId id) {
    ChunkView* cv = cur_;
    if (id - cv->base < cv->n) return {cv, static_cast<uint32_t>(id - cv->base)};
    cv = far_;
    if (id - cv->base < cv->n) return {cv, static_cast<uint32_t>(id - cv->base)};
    far_ = &views_[trace_.chunk_of(id)];
    if (far_->released) Reload(far_);
    far_->tick = ++clock_;
    return {far_, static_cast<uint32_t>(id - far_->base)};
  }
  /// Gives back decoded columns beyond the budget (see the class comment).
  void Trim() {
    if (held_bytes_ > budget_) TrimSlow();
  }
  const ClassInfo& Cls(const Loc& l) const { return l.cv->classes[l.cv->nodes[l.local].cls]; }
  const internal::ClassFacts& Facts(const Loc& l) const {
    return l.cv->facts[l.cv->nodes[l.local].cls];
  }
  uint64_t BitsOf(const Loc& l) const { return l.cv->nodes[l.local].value; }
  NodeId RefTarget(const Loc& l, NodeId id, uint32_t k) const {
    return id - l.cv->refs[l.cv->nodes[l.local].first_ref + k];
  }
  /// The node a pass-through node (block or nested function argument,
  /// return) forwards, or kNoNode.
  NodeId PassTarget(const Loc& l, NodeId id);
  /// The operands of a primitive node, or of a ruled call's marker.
  void Operands(const Loc& l, NodeId id, std::vector<OperandVal>* out);
  /// getslice(x, 1, start, stop[, step]) of a tuple x of n items (node id,
  /// its operands): the positions it took (first, step, count).
  Status TupleSliceOf(NodeId id, const std::vector<OperandVal>& ops, int64_t n, int64_t* first,
                      int64_t* step, int64_t* count);
  Value DecodeOperand(const OperandVal& o) { return DecodeAt(*o.chunk, o.bits, o.vkind); }
  /// A value stored in chunk `c`: a tensor argument of the root as the
  /// forward pass decoded it (up to kDecodedBudget bytes of them are kept),
  /// one of the last two other tensors decoded, else decoded now. The
  /// root's tensors (inputs, weights) are what rules read again and again;
  /// other tensors are not kept beyond those two, since holding them costs
  /// fresh memory, which costs more than decoding them again.
  Value DecodeAt(const internal::ChunkColumns& c, uint64_t bits, VKind kind);
  /// The root call's literal operands as the caller decoded them: a root
  /// argument stored with the same bytes as one of them takes that value
  /// instead of a copy of its own.
  void UseRootOperands(const std::vector<Value>* values) { root_operands_ = values; }
  bool IsFloatValue(const ChunkView& cv, VKind k, uint64_t bits) const {
    if (k == VKind::kF64 || k == VKind::kF32) return true;
    return k == VKind::kTensor && cv.c->FloatTensor(bits);
  }
  // A float value, or a tuple (whose items may be): what a varied value
  // passed on by a return or an argument stays.
  bool MayHoldFloats(const ChunkView& cv, VKind k, uint64_t bits) const {
    return k == VKind::kTuple || IsFloatValue(cv, k, bits);
  }
  std::string NodeName(NodeId id);

  NodeId result_node() const { return trace_.size() - 1; }
  NodeId RootMarkerOfRuledCloser(const Loc& l, NodeId id) const {
    const ClassInfo& k = Cls(l);
    return id - l.cv->refs[l.cv->nodes[l.local].first_ref + k.f->n_refs];
  }
  /// The marker of a ruled call that `id` closes, or kNoNode.
  NodeId RuledMarker(const Loc& l, NodeId id);

  const std::vector<ArgumentDerivative>& args() const { return args_; }
  std::vector<ArgumentDerivative>& mutable_args() { return args_; }
  GradStats& stats() { return stats_; }
  const RuleSet& rules() const { return rules_; }
  Result<RevCache*> Reverse(ClassInfo& k, const Rule* rule, size_t arity);
  Status MissingRule(NodeId id, const ClassInfo& k, std::string_view op, size_t arity);
  uint64_t num_active() const { return n_active_; }
  void set_last_chunk(uint32_t ci) { cur_ = &views_[ci]; }

 private:
  Status Fail(NodeId id, const std::string& what) {
    return DataError(trace_.name() + ": " + internal::At(trace_.chunk_of(id), id, what));
  }
  struct OpenCall {
    NodeId marker;
    const Rule* rule;  // a function rule applies: its body is skipped
  };
  using OpenCalls = std::vector<OpenCall, TensorAllocator<OpenCall>>;  // GrowStack
  // The forward pass's rare cases: calls, returns, function arguments.
  Status StructuralNode(ChunkView* cv, uint32_t local, NodeId id, const ClassInfo& k,
                        bool forward_mode, bool choose_all, OpenCalls& open, uint32_t& ruled_depth,
                        uint64_t& root_children);
  Status ForwardTangent(const Loc& l, NodeId id, const ClassInfo& k, NodeId marker,
                        const Rule* rule);
  bool FastForward(const Loc& l, NodeId id, const ClassInfo& k);
  void SetTangent(uint64_t slot, const Value& v);
  Status ApplyReverse(const Loc& l, NodeId id, uint64_t slot, NodeId marker, const Rule* rule);
  bool FastReverse(const Loc& l, NodeId id, uint64_t slot, ClassInfo& k);
  // FastReverse's body, for kN operands (0: any number up to kFastMaxArity).
  template <size_t kN>
  bool FastReverseN(const Loc& l, NodeId id, uint64_t slot, const ClassInfo& k, const RevCache* rc);
  static constexpr size_t kFastMaxArity = 8;
  static constexpr int32_t kFastMaxRegs = 48;
  // Adds g into the scalar adjoint of the active node `target`.
  void AddScalar(NodeId target, double g) {
    const uint64_t s = varied_.Rank(target);
    adj_[s] += g;
    touched_.Set(s);
  }
  Status AccumulateScalar(NodeId target, double g);
  // Adds g into the target's adjoint. A tensor target's first adjoint
  // takes g's tensor over when g is its only holder (no fresh buffer);
  // `no_negative_zero` (g is a matrix product's result) spares it the pass
  // that turns -0s into 0s.
  Status AccumulateValue(NodeId target, Value g, const Giver& who, bool no_negative_zero = false);
  std::string GiverText(const Giver& who);
  // Adds g into element `off` of the tensor adjoint a (of `slot`).
  void AddAt(TensorAdj* a, uint64_t slot, int64_t off, double g);
  bool AddItem(size_t j, const Program& p, size_t arity, uint64_t slot);
  Status AccumulateSparse(NodeId target, double g, const double* idx, size_t nidx,
                          const Value* vidx);
  // The tensor adjoint of `slot` (node `target`), made if absent: dense,
  // or with `sparse_ok` as it is (a new one sparse), for AddAt.
  Result<TensorAdj*> TensorAdjOf(NodeId target, uint64_t slot, bool sparse_ok = false);
  Status Propagate(uint64_t from_slot, NodeId target, const Loc& from);
  // Drops a tensor adjoint the sweep has passed on.
  void ForgetAdjoint(std::unordered_map<uint64_t, TensorAdj>::iterator it);
  Value AdjointValue(uint64_t slot, const Loc& l, bool take);
  // Tuples: tuple(a...) gives item j of its adjoint to a_j; getitem and
  // getindex of a tuple add theirs into one item of its adjoint. False
  // leaves the node to the rules (getitem of a tensor).
  Result<bool> TupleReverse(const Loc& l, NodeId id, uint64_t slot, const ClassInfo& k);
  // Adds g into item `item` of the adjoint of the tuple `target` (n items).
  Status AccumulateTupleItem(NodeId target, size_t item, size_t n, Value g);
  // Forward mode's TupleReverse: a tuple's tangent is the tuple of its
  // items' (Nothing for zero). Reads ops_.
  Result<bool> TupleForward(const Loc& l, NodeId id, uint64_t slot, const ClassInfo& k);

  void Hold(ChunkView* cv);
  void Reload(ChunkView* cv);  // throws ColumnsLost
  void TrimSlow();

  static constexpr uint64_t kColumnBudget = uint64_t{8} << 20;
  static constexpr uint64_t kMaxColumnBudget = uint64_t{1} << 30;

  const Trace& trace_;
  const RuleSet& rules_;
  const GradOptions& opts_;
  std::vector<ChunkView> views_;
  ChunkView* cur_ = nullptr;  // Locate's caches
  ChunkView* far_ = nullptr;
  std::vector<uint32_t> held_;  // views whose columns are held, and their bytes
  uint64_t held_bytes_ = 0;
  uint64_t budget_ = kColumnBudget;
  uint64_t clock_ = 0;
  uint64_t reloads_ = 0;   // since the budget last grew
  bool sweeping_ = false;  // Trim gives back the highest chunks first

  RankBits varied_;
  Bits touched_;
  uint64_t n_active_ = 0;
  AdjointPages adj_;                                    // scalar adjoints / tangents by slot
  std::unordered_map<uint64_t, TensorAdj> tensor_adj_;  // tensor adjoints by slot
  std::unordered_map<uint64_t, Value> tensor_tan_;      // tensor tangents by slot
  std::unordered_map<uint64_t, TupleAdj> tuple_adj_;    // tuple adjoints by slot
  uint64_t cached_slot_ = ~uint64_t{0};
  TensorAdj* cached_adj_ = nullptr;
  Bits poisoned_;  // forward mode: tangents that passed a primitive without a rule
  std::unordered_map<uint64_t, NodeId> poison_origin_;

  std::map<std::pair<const Rule*, size_t>, std::unique_ptr<RevCache>> rev_cache_;
  std::map<std::tuple<const Rule*, size_t, uint64_t>, std::unique_ptr<Program>> fwd_cache_;
  std::vector<double> scratch_;
  std::vector<Value> vscratch_;
  std::vector<OperandVal> ops_;

  std::vector<ArgumentDerivative> args_;
  std::vector<bool> chosen_;  // by root position
  // The root's tensor arguments for DecodeAt, by chunk and bits, and their bytes.
  static constexpr uint64_t kDecodedBudget = uint64_t{64} << 20;
  struct DecodedKey {
    uint32_t chunk;
    uint64_t bits;
    bool operator==(const DecodedKey&) const = default;
  };
  struct DecodedHash {
    size_t operator()(const DecodedKey& k) const {
      return std::hash<uint64_t>()(k.bits * 0x9E3779B97F4A7C15ull ^ k.chunk);
    }
  };
  std::unordered_map<DecodedKey, Value, DecodedHash> decoded_;
  uint64_t decoded_bytes_ = 0;
  // And the last two other tensors DecodeAt decoded: a loop that reads a
  // tensor it made element by element (getindex, whose rules read the
  // tensor in a backward trace) decodes it once, not once per element.
  static constexpr size_t kRecentTensors = 2;
  struct RecentTensor {
    DecodedKey key{~0u, 0};
    Value value;
  };
  RecentTensor recent_[kRecentTensors];
  size_t next_recent_ = 0;
  const std::vector<Value>* root_operands_ = nullptr;
  Value RootArgumentValue(const internal::ChunkColumns& c, uint64_t bits, VKind kind);
  GradStats stats_;
  bool forward_mode_ = false;
};

// The driver's checks that the writers share (driver.cc).

/// Fails unless some chosen argument is differentiable.
Status CheckSomeDifferentiable(const GradResult& r, const std::vector<ArgumentDerivative>& args);
/// Checks a trace for the writers (reverse mode only) and fills in the
/// options they run with, the seed included.
Result<GradResult> Prepared(const Trace& trace, const GradOptions& options, GradOptions* opts);

}  // namespace irt::internal::grad

#endif  // IRT_SRC_ANALYSES_GRAD_ENGINE_H_
