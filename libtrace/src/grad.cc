// Reverse and forward mode over a stored trace.
//
// One forward pass over the raw node columns checks every node it reads
// (class, reference range and distances, value indices, call nesting),
// marks the active nodes (floating-point values that depend on a chosen
// argument) in a bit set with rank, and in forward mode computes tangents.
// The reverse sweep then visits the global node order backward: a node's
// adjoint is complete when the sweep reaches it, because every user of a
// value comes after it. Adjoints live in a dense array indexed by the rank
// of the node among active nodes (scalars) and in a map for tensors, so
// memory is proportional to the active nodes only. Nested calls need no
// stack: a caller's use of a call's result references the call's closing
// node, whose adjoint passes to the value it returns; the callee's function
// arguments reference the caller's actual arguments.
//
// Per node, the derivative comes from the rule compiled once per (rule,
// arity): a binary64 register program when the operands it reads are real
// scalars, otherwise the same program run on values by irt::ApplyOp.
#include "irt/grad.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "column_reader.h"
#include "control_flow.h"
#include "irt/json.h"
#include "irt/ops.h"
#include "irt/print.h"
#include "irt/writer.h"
#include "rule_program.h"

// Rank queries on the activity bit set are in the sweep's inner loop; every
// x86-64 processor since 2008 counts bits in one instruction.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__POPCNT__)
#pragma GCC target("popcnt")
#endif

namespace irt {

namespace {

using internal::kZeroReg;

inline uint64_t PopCount(uint64_t w) { return static_cast<uint64_t>(__builtin_popcountll(w)); }
using internal::Program;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---------------------------------------------------------------- bit sets

// A bit per node with rank: the slot of an active node is the number of
// active nodes before it. Built in ascending order (Advance keeps the
// prefix counts current), queried anywhere behind.
class RankBits {
 public:
  void Resize(uint64_t n) {
    words_.assign(n / 64 + 1, 0);
    prefix_.assign(words_.size() + 1, 0);
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
  const std::vector<uint64_t>& words() const { return words_; }
  uint64_t* data() { return words_.data(); }
  uint64_t Rank(uint64_t i) const {
    uint64_t w = i >> 6;
    uint64_t mask = (uint64_t{1} << (i & 63)) - 1;
    return prefix_[w] + PopCount(words_[w] & mask);
  }

 private:
  std::vector<uint64_t> words_;
  std::vector<uint64_t> prefix_;
};

class Bits {
 public:
  void Resize(uint64_t n) { w_.assign(n / 64 + 1, 0); }
  void Set(uint64_t i) { w_[i >> 6] |= uint64_t{1} << (i & 63); }
  bool Get(uint64_t i) const { return (w_[i >> 6] >> (i & 63)) & 1; }

 private:
  std::vector<uint64_t> w_;
};

// ---------------------------------------------------------------- chunk views

struct RevCache {
  std::vector<std::optional<Program>> progs;  // per argument
  std::vector<uint64_t> reads;                // per argument: operands read (bit j), bit 63: result
  size_t max_regs = 0;
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

struct ClassInfo {
  Cat cat = Cat::kInert;
  NodeKind kind = NodeKind::kArgument;
  VKind vkind = VKind::kNone;
  uint8_t flags = 0;
  uint16_t n_ops = 0;
  uint32_t first_op = 0;
  uint32_t n_refs = 0;  // dynamic references, without a closer's call link
  uint32_t aux = 0;
  std::string_view op;
  uint32_t n_refs_total = 0;       // n_refs plus a closer's call link
  std::vector<int32_t> ref_index;  // per operand: index among dynamic refs, or -1 (literal)
  std::vector<double> lit_val;     // per operand: a real literal as binary64
  uint64_t lit_real = 0;           // operands that are real literals (bit j)
  bool y_real = false;             // the node's value is a real scalar
  bool fast = false;               // FastReverse may apply
  const Rule* rule = nullptr;      // Primitive/Special: its rule; Call: a rule for the callee
  bool nondiff = false;
  RevCache* rev = nullptr;
  FwdEntry fwd;
  uint32_t block = 0, pos = 0, line = 0;
  uint16_t col = 0;
};

struct ChunkView {
  bool ready = false;
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
  std::vector<ClassInfo> classes;
};

using internal::IsCloser;

bool ScalarDouble(VKind k, uint64_t bits, double* out) {
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

Value ScalarValue(double d, bool f32) {
  return f32 ? Value::F32(static_cast<float>(d)) : Value::F64(d);
}

std::string LocationText(const ClassInfo& k) {
  bool branch = k.kind == NodeKind::kJump || k.kind == NodeKind::kReturn;
  return "§" + std::to_string(k.block) + (branch ? ":&" : ":%") + std::to_string(k.pos);
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

// A tensor adjoint being accumulated.
struct TensorAdj {
  Tensor t;
};

}  // namespace

// ---------------------------------------------------------------- engine

class GradEngine {
 public:
  GradEngine(const Trace& trace, const RuleSet& rules, const GradOptions& opts)
      : trace_(trace), rules_(rules), opts_(opts) {}

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
    return {far_, static_cast<uint32_t>(id - far_->base)};
  }
  const ClassInfo& Cls(const Loc& l) const { return l.cv->classes[l.cv->nodes[l.local].cls]; }
  uint64_t BitsOf(const Loc& l) const { return l.cv->nodes[l.local].value; }
  NodeId RefTarget(const Loc& l, NodeId id, uint32_t k) const {
    return id - l.cv->refs[l.cv->nodes[l.local].first_ref + k];
  }
  /// The node a pass-through node (block or nested function argument,
  /// return) forwards, or kNoNode.
  NodeId PassTarget(const Loc& l, NodeId id);
  /// The operands of a primitive node, or of a ruled call's marker.
  void Operands(const Loc& l, NodeId id, std::vector<OperandVal>* out);
  Value DecodeOperand(const OperandVal& o) const;
  bool IsFloatValue(const ChunkView& cv, VKind k, uint64_t bits) const;
  std::string NodeName(NodeId id);

  NodeId result_node() const { return trace_.size() - 1; }
  NodeId RootMarkerOfRuledCloser(const Loc& l, NodeId id) const {
    const ClassInfo& k = Cls(l);
    return id - l.cv->refs[l.cv->nodes[l.local].first_ref + k.n_refs];
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
  // The forward pass's rare cases: calls, returns, function arguments.
  Status StructuralNode(ChunkView* cv, uint32_t local, NodeId id, const ClassInfo& k,
                        bool forward_mode, bool choose_all, std::vector<OpenCall>& open,
                        uint32_t& ruled_depth, uint64_t& root_children);
  Status ForwardTangent(const Loc& l, NodeId id, const ClassInfo& k, NodeId marker,
                        const Rule* rule);
  void SetTangent(uint64_t slot, const Value& v);
  Status ApplyReverse(const Loc& l, NodeId id, uint64_t slot, NodeId marker, const Rule* rule);
  bool FastReverse(const Loc& l, NodeId id, uint64_t slot, ClassInfo& k);
  Status AccumulateScalar(NodeId target, double g);
  Status AccumulateValue(NodeId target, const Value& g, const char* what);
  Status AccumulateSparse(NodeId target, double g, const double* idx, size_t nidx,
                          const Value* vidx);
  Result<TensorAdj*> TensorAdjOf(NodeId target, uint64_t slot);
  Status Propagate(uint64_t from_slot, NodeId target, const Loc& from);
  Value AdjointValue(uint64_t slot, const Loc& l, bool take);

  const Trace& trace_;
  const RuleSet& rules_;
  const GradOptions& opts_;
  std::vector<ChunkView> views_;
  ChunkView* cur_ = nullptr;  // Locate's caches
  ChunkView* far_ = nullptr;

  RankBits varied_;
  Bits touched_;
  uint64_t n_active_ = 0;
  std::vector<double> adj_;                             // scalar adjoints / tangents by slot
  std::unordered_map<uint64_t, TensorAdj> tensor_adj_;  // tensor adjoints by slot
  std::unordered_map<uint64_t, Value> tensor_tan_;      // tensor tangents by slot
  std::unordered_map<uint64_t, Value> kept_;            // tensor adjoints kept for annotation
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
  GradStats stats_;
  bool forward_mode_ = false;
};

Result<ChunkView*> GradEngine::View(uint32_t ci) {
  ChunkView& cv = views_[ci];
  if (cv.ready) return &cv;
  // The column reader verified the chunk and every one of its nodes.
  IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, internal::ColumnsOf(trace_, ci));
  cv.c = c;
  cv.base = c->base;
  cv.n = c->count;
  cv.base_depth = c->base_depth;
  cv.nodes = c->nodes;
  cv.refs = c->refs;
  cv.operands = c->operands;
  cv.literals = c->literals;
  cv.ntensors = c->n_tensors;
  uint32_t nclasses = static_cast<uint32_t>(c->classes.size());
  cv.classes.resize(nclasses);
  for (uint32_t i = 0; i < nclasses; ++i) {
    const internal::ClassFacts& fc = c->classes[i];
    ClassInfo& k = cv.classes[i];
    k.kind = fc.kind;
    k.vkind = fc.vkind;
    k.flags = fc.flags;
    k.n_ops = fc.n_operands;
    k.first_op = fc.first_operand;
    k.aux = fc.aux;
    k.block = fc.block;
    k.pos = fc.pos;
    k.line = fc.line;
    k.col = fc.col;
    k.op = fc.op;
    k.ref_index.resize(k.n_ops);
    int32_t r = 0;
    for (uint32_t j = 0; j < k.n_ops; ++j) {
      k.ref_index[j] = cv.operands[k.first_op + j] == 0 ? r++ : -1;
    }
    k.n_refs = static_cast<uint32_t>(r);
    k.n_refs_total = k.n_refs + (IsCloser(k.kind) ? 1 : 0);
    k.lit_val.assign(k.n_ops, 0.0);
    for (uint32_t j = 0; j < k.n_ops; ++j) {
      uint32_t o = cv.operands[k.first_op + j];
      if (o == 0) continue;
      const internal::ValueRec& lit = cv.literals[o - 1];
      if (j < 63 && ScalarDouble(static_cast<VKind>(lit.vkind), lit.bits, &k.lit_val[j]))
        k.lit_real |= uint64_t{1} << j;
    }
    double unused;
    k.y_real = ScalarDouble(k.vkind, 0, &unused);
    // A tuple may hold floats: a primitive that makes one from an active
    // value needs a rule (none passes derivatives through tuples yet), so
    // that differentiating through it is an error, not a silent zero.
    bool floaty = k.vkind == VKind::kF64 || k.vkind == VKind::kF32 ||
                  k.vkind == VKind::kTensor || k.vkind == VKind::kTuple;
    switch (k.kind) {
      case NodeKind::kPrimitive:
      case NodeKind::kSpecial:
        k.rule = rules_.Find(k.op, k.n_ops);
        k.nondiff = k.rule == nullptr && rules_.IsNondiff(k.op);
        k.cat = (k.nondiff || !floaty) ? Cat::kInert : Cat::kPrim;
        k.fast = k.rule != nullptr && k.y_real;
        break;
      case NodeKind::kCall:
        k.rule = rules_.Find(k.op, k.n_ops);
        k.cat = Cat::kCall;
        break;
      case NodeKind::kReturn:
        k.cat = Cat::kReturn;
        break;
      case NodeKind::kError:
        k.cat = Cat::kError;
        break;
      case NodeKind::kArgument:
        if (k.aux != 0) {
          // A block or nested function argument that cannot hold a float is
          // never active: nothing reads through it.
          k.cat = floaty ? Cat::kBlockArg : Cat::kInert;
        } else if (k.n_ops == 1 && k.ref_index[0] >= 0) {
          k.cat = floaty ? Cat::kFuncArg : Cat::kInert;
        } else {
          k.cat = Cat::kRootArg;
        }
        break;
      default:
        k.cat = Cat::kInert;
    }
  }
  cv.ready = true;
  return &cv;
}

bool GradEngine::IsFloatValue(const ChunkView& cv, VKind k, uint64_t bits) const {
  if (k == VKind::kF64 || k == VKind::kF32) return true;
  return k == VKind::kTensor && cv.c->FloatTensor(bits);
}

NodeId GradEngine::PassTarget(const Loc& l, NodeId id) {
  const ClassInfo& k = Cls(l);
  if (k.kind == NodeKind::kReturn) {
    if (k.n_ops != 1 || k.ref_index[0] < 0) return kNoNode;
    return RefTarget(l, id, 0);
  }
  if (k.kind != NodeKind::kArgument || k.n_ops != 1 || k.ref_index[0] < 0) return kNoNode;
  NodeId ref = RefTarget(l, id, 0);
  if (k.aux == 0) return ref;
  // A block argument: the aux-th operand of the jump it references.
  Loc j = Locate(ref);
  const ClassInfo& jk = Cls(j);
  if (jk.kind != NodeKind::kJump) return kNoNode;
  uint32_t nargs = jk.n_ops - ((jk.flags & 1) ? 1 : 0);
  if (k.aux > nargs) return kNoNode;
  int32_t ri = jk.ref_index[k.aux - 1];
  if (ri < 0) return kNoNode;
  return RefTarget(j, ref, static_cast<uint32_t>(ri));
}

NodeId GradEngine::RuledMarker(const Loc& l, NodeId id) {
  if (rules_.rules().empty()) return kNoNode;
  NodeId marker = RootMarkerOfRuledCloser(l, id);
  if (marker == 0) return kNoNode;  // the root's own rule is not used
  Loc m = Locate(marker);
  return Cls(m).rule != nullptr ? marker : kNoNode;
}

void GradEngine::Operands(const Loc& l, NodeId id, std::vector<OperandVal>* out) {
  const ClassInfo& k = Cls(l);
  out->resize(k.n_ops);
  for (uint32_t j = 0; j < k.n_ops; ++j) {
    OperandVal& o = (*out)[j];
    if (k.ref_index[j] < 0) {
      const internal::ValueRec& lit = l.cv->literals[l.cv->operands[k.first_op + j] - 1];
      o.is_ref = false;
      o.target = kNoNode;
      o.vkind = static_cast<VKind>(lit.vkind);
      o.bits = lit.bits;
      o.chunk = l.cv->c;
      o.varied = false;
      continue;
    }
    NodeId t = RefTarget(l, id, static_cast<uint32_t>(k.ref_index[j]));
    Loc tl = Locate(t);
    o.is_ref = true;
    o.target = t;
    o.vkind = Cls(tl).vkind;
    o.bits = BitsOf(tl);
    o.chunk = tl.cv->c;
    o.varied = varied_.Get(t);
  }
}

Value GradEngine::DecodeOperand(const OperandVal& o) const {
  return o.chunk->Decode(o.bits, o.vkind);
}

// "node 12 (@3/@4, ⟨sin⟩ at §1:%4)": the path of positions from the root,
// found by walking back over siblings (nested calls hopped via their
// closers); only the innermost 16 levels are spelled out.
std::string GradEngine::NodeName(NodeId id) {
  std::vector<uint64_t> parts;
  NodeId cur = id;
  bool truncated = false;
  while (cur != 0) {
    if (parts.size() == 16) {
      truncated = true;
      break;
    }
    uint64_t count = 0;
    NodeId i = cur;
    NodeId parent = 0;
    while (i > 0) {
      --i;
      Loc l = Locate(i);
      const ClassInfo& k = Cls(l);
      if (IsCloser(k.kind)) {
        ++count;
        i = RootMarkerOfRuledCloser(l, i);
        continue;
      }
      if (k.kind == NodeKind::kCall) {
        parent = i;
        break;
      }
      ++count;
    }
    parts.push_back(count + 1);
    cur = parent;
  }
  std::string path = truncated ? "…" : "";
  for (size_t i = parts.size(); i-- > 0;) path += "/@" + std::to_string(parts[i]);
  if (!truncated && !path.empty()) path.erase(0, 1);
  Loc l = Locate(id);
  const ClassInfo& k = Cls(l);
  std::string what = "node " + std::to_string(id) + " (" + (path.empty() ? "@" : path);
  if (!k.op.empty()) what += ", ⟨" + DisplayString(k.op) + "⟩";
  what += " at " + LocationText(k) + ")";
  return what;
}

Status GradEngine::MissingRule(NodeId id, const ClassInfo& k, std::string_view op, size_t arity) {
  std::string kind = k.kind == NodeKind::kCall ? "function" : "primitive";
  std::string hint;
  if (rules_.HasRule(op)) {
    hint = " (there are rules for '" + DisplayString(op) + "' with other numbers of arguments)";
  } else if (k.kind == NodeKind::kPrimitive && trace_.FunctionIR(op, id)) {
    hint =
        " (a module function recorded as a primitive: trace it with its body or give a rule "
        "with --rules)";
  } else {
    hint = "; add one with --rules";
  }
  return NotFound("no derivative rule for " + kind + " '" + DisplayString(op) + "' with " +
                  std::to_string(arity) + " arguments at " + NodeName(id) + hint);
}

// ---------------------------------------------------------------- forward pass

Status GradEngine::StructuralNode(ChunkView* cv, uint32_t local, NodeId id, const ClassInfo& k,
                                  bool forward_mode, bool choose_all, std::vector<OpenCall>& open,
                                  uint32_t& ruled_depth, uint64_t& root_children) {
  const uint32_t* r = cv->refs + cv->nodes[local].first_ref;
  uint64_t bits = cv->nodes[local].value;
  if (id == 0 && k.kind != NodeKind::kCall) {
    return Fail(id, "the first node must open the root call");
  }
  if (open.size() == 1 && k.cat != Cat::kReturn) ++root_children;
  bool v = false;
  NodeId marker = kNoNode;
  const Rule* rule = nullptr;
  switch (k.cat) {
    case Cat::kCall: {
      const Rule* ru = (id != 0 && ruled_depth == 0) ? k.rule : nullptr;
      if (ru != nullptr) ++ruled_depth;
      open.push_back({id, ru});
      return Status::Ok();
    }
    case Cat::kError:
      return Fail(id, "the trace records a failed run (an Error node); it has no derivative");
    case Cat::kReturn: {
      NodeId m = id - r[k.n_refs];
      if (open.empty() || open.back().marker != m) {
        return Fail(id, "closes node " + std::to_string(m) + ", not the innermost open call");
      }
      if (k.n_ops != 1) return Fail(id, "a return needs one operand");
      OpenCall top = open.back();
      open.pop_back();
      if (top.rule != nullptr) {
        --ruled_depth;
        if (ruled_depth == 0 && IsFloatValue(*cv, k.vkind, bits)) {
          marker = m;
          rule = top.rule;
          Loc ml = Locate(m);
          Operands(ml, m, &ops_);
          for (const OperandVal& o : ops_) v = v || o.varied;
        }
        break;
      }
      if (ruled_depth > 0 || k.ref_index[0] < 0) return Status::Ok();
      v = varied_.Get(id - r[0]) && IsFloatValue(*cv, k.vkind, bits);
      break;
    }
    case Cat::kRootArg: {
      if (ruled_depth > 0) return Status::Ok();
      if (open.size() != 1) return Status::Ok();  // a nested argument whose actual was a literal
      ArgumentDerivative a;
      a.pos = static_cast<uint32_t>(root_children);
      a.id = id;
      a.location = Location{k.block, k.pos, false, k.line, k.col};
      a.value = cv->c->Decode(bits, k.vkind);
      a.differentiable = IsFloatValue(*cv, k.vkind, bits);
      bool picked = a.pos < chosen_.size() && chosen_[a.pos];
      a.chosen = picked || (choose_all && k.vkind != VKind::kFunction);
      v = a.chosen && a.differentiable;
      args_.push_back(std::move(a));
      break;
    }
    case Cat::kFuncArg:
      if (ruled_depth > 0) return Status::Ok();
      v = varied_.Get(id - r[0]) && IsFloatValue(*cv, k.vkind, bits);
      break;
    default:
      return Status::Ok();
  }
  if (!v) return Status::Ok();
  varied_.Set(id);
  ++n_active_;
  if (forward_mode) {
    cur_ = cv;
    IRT_RETURN_IF_ERROR(ForwardTangent(Loc{cv, local}, id, k, marker, rule));
  }
  return Status::Ok();
}

Status GradEngine::ForwardPass(bool forward_mode, bool all_float_args) {
  double t0 = Now();
  forward_mode_ = forward_mode;
  uint64_t n = trace_.size();
  stats_.nodes = n;
  views_.assign(trace_.chunks().size(), ChunkView{});
  varied_.Resize(n);
  if (forward_mode) poisoned_.Resize(n);
  if (n == 0 || views_.empty()) return DataError(trace_.name() + ": the trace has no nodes");
  cur_ = far_ = &views_[0];
  uint32_t max_pos = 0;
  for (uint32_t p : opts_.wrt) max_pos = std::max(max_pos, p);
  for (const auto& [p, v] : opts_.tangents) max_pos = std::max(max_pos, p);
  chosen_.assign(max_pos + 1, false);
  for (uint32_t p : opts_.wrt) chosen_[p] = true;
  for (const auto& [p, v] : opts_.tangents) chosen_[p] = true;
  bool choose_all = all_float_args || (!forward_mode && opts_.wrt.empty());

  std::vector<OpenCall> open;
  uint32_t ruled_depth = 0;
  uint64_t root_children = 0;
  for (uint32_t ci = 0; ci < views_.size(); ++ci) {
    IRT_ASSIGN_OR_RETURN(ChunkView * cv, View(ci));
    if (cv->base_depth != open.size()) {
      return DataError(trace_.name() + ": chunk " + std::to_string(ci) + ": starts at call depth " +
                       std::to_string(cv->base_depth) + ", the nodes before it leave " +
                       std::to_string(open.size()) + " calls open");
    }
    cur_ = cv;
    const internal::NodeRec* nodes = cv->nodes;
    const uint32_t* refs = cv->refs;
    const ClassInfo* classes = cv->classes.data();
    const uint64_t nclasses = cv->classes.size();
    const NodeId base = cv->base;
    const uint32_t count = cv->n;
    uint64_t* words = varied_.data();
    uint64_t active = n_active_;
    if (ci == 0 && count > 0 &&
        (nodes[0].cls >= nclasses || classes[nodes[0].cls].kind != NodeKind::kCall)) {
      return Fail(0, "the first node must open the root call");
    }
    for (uint32_t local = 0; local < count; ++local) {
      const NodeId id = base + local;
      if ((id & 63) == 0) varied_.Advance(id);
      // View() verified the chunk: every node's class, references and value
      // indices are in range (internal::CheckNodes).
      const internal::NodeRec& nd = nodes[local];
      const ClassInfo& k = classes[nd.cls];
      if (k.cat == Cat::kInert) {
        if (open.size() == 1) ++root_children;
        continue;
      }
      const uint32_t* r = refs + nd.first_ref;
      bool v = false;
      switch (k.cat) {
        case Cat::kInert:
          continue;
        case Cat::kPrim: {
          if (open.size() == 1) ++root_children;
          if (ruled_depth > 0) continue;
          for (uint32_t j = 0; j < k.n_refs; ++j) {
            NodeId t = id - r[j];
            if ((words[t >> 6] >> (t & 63)) & 1) {
              v = true;
              break;
            }
          }
          if (k.vkind == VKind::kTensor) v = v && IsFloatValue(*cv, k.vkind, nd.value);
          if (v && forward_mode) {
            words[id >> 6] |= uint64_t{1} << (id & 63);
            n_active_ = ++active;
            IRT_RETURN_IF_ERROR(ForwardTangent(Loc{cv, local}, id, k, kNoNode, k.rule));
            cur_ = cv;
            continue;
          }
          break;
        }
        case Cat::kBlockArg: {
          if (open.size() == 1) ++root_children;
          if (ruled_depth > 0) continue;
          if (k.n_ops != 1 || k.ref_index[0] < 0) {
            return Fail(id, "a block argument must reference the jump that set it");
          }
          const NodeId jid = id - r[0];
          Loc j = jid >= base ? Loc{cv, static_cast<uint32_t>(jid - base)} : Locate(jid);
          const internal::NodeRec& jn = j.cv->nodes[j.local];
          const ClassInfo& jk = j.cv->classes[jn.cls];
          if (jk.kind != NodeKind::kJump ||
              static_cast<int64_t>(k.aux) > int64_t{jk.n_ops} - ((jk.flags & 1) ? 1 : 0)) {
            return Fail(id, "block argument " + std::to_string(k.aux) +
                                " does not name an operand of a jump");
          }
          const int32_t ri = jk.ref_index[k.aux - 1];
          if (ri < 0) continue;
          const NodeId t = jid - j.cv->refs[jn.first_ref + static_cast<uint32_t>(ri)];
          v = (words[t >> 6] >> (t & 63)) & 1;
          if (v && k.vkind == VKind::kTensor) v = IsFloatValue(*cv, k.vkind, nd.value);
          if (v && forward_mode) {
            words[id >> 6] |= uint64_t{1} << (id & 63);
            n_active_ = ++active;
            IRT_RETURN_IF_ERROR(ForwardTangent(Loc{cv, local}, id, k, kNoNode, nullptr));
            cur_ = cv;
            continue;
          }
          break;
        }
        default: {
          // Calls, returns, function arguments: the rare, structural cases.
          n_active_ = active;
          IRT_RETURN_IF_ERROR(StructuralNode(cv, local, id, k, forward_mode, choose_all, open,
                                             ruled_depth, root_children));
          active = n_active_;
          cur_ = cv;
          continue;
        }
      }
      if (v) {
        words[id >> 6] |= uint64_t{1} << (id & 63);
        ++active;
      }
    }
    n_active_ = active;
  }
  varied_.Advance((n + 63) & ~uint64_t{63});
  if (!open.empty()) {
    return DataError(trace_.name() + ": the trace ends with " + std::to_string(open.size()) +
                     " calls still open");
  }
  // Every position asked for must be an argument of the root.
  for (uint32_t p = 1; p < chosen_.size(); ++p) {
    if (!chosen_[p]) continue;
    bool found = false;
    for (const ArgumentDerivative& a : args_) found = found || a.pos == p;
    if (!found) {
      return UsageError("@" + std::to_string(p) + " is not an argument of the root call (" +
                        (args_.empty() ? std::string("it has none")
                                       : "its arguments are @" + std::to_string(args_.front().pos) +
                                             " to @" + std::to_string(args_.back().pos)) +
                        ")");
    }
  }
  stats_.active_nodes = n_active_;
  stats_.activity_seconds = Now() - t0;
  return Status::Ok();
}

void GradEngine::SetTangent(uint64_t slot, const Value& v) {
  if (v.kind() == VKind::kTensor) {
    tensor_tan_[slot] = v;
  } else {
    adj_[slot] = v.to_double();
  }
}

Status GradEngine::ForwardTangent(const Loc& l, NodeId id, const ClassInfo& k, NodeId marker,
                                  const Rule* rule) {
  uint64_t slot = n_active_ - 1;
  if (adj_.size() <= slot) adj_.resize(std::max<size_t>(slot + 1, adj_.size() * 2 + 64), 0.0);
  adj_[slot] = 0.0;
  auto poison = [&](NodeId origin) {
    poisoned_.Set(slot);
    poison_origin_[slot] = origin;
    adj_[slot] = std::nan("");
  };
  bool is_tensor = k.vkind == VKind::kTensor;
  if (k.kind == NodeKind::kArgument && marker == kNoNode && PassTarget(l, id) == kNoNode) {
    // A root argument: its tangent was given.
    for (const auto& [p, t] : opts_.tangents) {
      if (p != args_.back().pos) continue;
      const Value& arg = args_.back().value;
      if (arg.kind() == VKind::kTensor) {
        if (t.kind() == VKind::kTensor) {
          if (t.tensor().shape != arg.tensor().shape) {
            return UsageError("the tangent of @" + std::to_string(p) + " has shape " + TypeName(t) +
                              " " + FormatValue(t, {.max_elements = 4}) +
                              ", not the shape of the argument");
          }
          Value c = t;
          if (t.tensor().dtype != arg.tensor().dtype) {
            IRT_ASSIGN_OR_RETURN(
                c, ApplyOp("+", std::vector<Value>{Value::MakeTensor(Tensor::Zeros(
                                                       arg.tensor().dtype, arg.tensor().shape)),
                                                   t}));
          }
          tensor_tan_[slot] = c;
        } else if (t.is_scalar() && t.kind() != VKind::kNothing && t.kind() != VKind::kNone) {
          IRT_ASSIGN_OR_RETURN(
              Value c,
              ApplyOp("broadcast_to",
                      std::vector<Value>{
                          ScalarValue(t.to_double(), arg.tensor().dtype == DType::kF32), arg}));
          tensor_tan_[slot] = c;
        } else {
          return UsageError("the tangent of @" + std::to_string(p) + " must be a tensor");
        }
      } else {
        if (!t.is_scalar() || t.kind() == VKind::kNothing || t.kind() == VKind::kNone) {
          return UsageError("the tangent of @" + std::to_string(p) + " must be a number, not " +
                            TypeName(t));
        }
        adj_[slot] = t.to_double();
      }
    }
    return Status::Ok();
  }
  if (rule == nullptr && marker == kNoNode &&
      (k.kind == NodeKind::kArgument || k.kind == NodeKind::kReturn)) {
    NodeId t = PassTarget(l, id);
    uint64_t ts = varied_.Rank(t);
    if (poisoned_.Get(ts)) {
      poison(poison_origin_[ts]);
      return Status::Ok();
    }
    if (is_tensor) {
      auto it = tensor_tan_.find(ts);
      if (it != tensor_tan_.end()) tensor_tan_[slot] = it->second;
    } else {
      adj_[slot] = adj_[ts];
    }
    return Status::Ok();
  }
  // A primitive, or the closer of a call with a rule.
  Loc src = marker != kNoNode ? Locate(marker) : l;
  NodeId src_id = marker != kNoNode ? marker : id;
  Operands(src, src_id, &ops_);
  ClassInfo& sk = const_cast<ClassInfo&>(Cls(src));
  size_t arity = ops_.size();
  for (const OperandVal& o : ops_) {
    if (o.varied && poisoned_.Get(varied_.Rank(o.target))) {
      poison(poison_origin_[varied_.Rank(o.target)]);
      return Status::Ok();
    }
  }
  if (rule == nullptr) {
    poison(id);
    return Status::Ok();
  }
  uint64_t mask = 0;
  for (size_t j = 0; j < arity && j < 63; ++j) {
    const OperandVal& o = ops_[j];
    if (!o.varied || !rule->Differentiates(j)) continue;
    uint64_t ts = varied_.Rank(o.target);
    if (o.vkind == VKind::kTensor && tensor_tan_.find(ts) == tensor_tan_.end()) continue;
    mask |= uint64_t{1} << j;
  }
  if (arity >= 63) return Unsupported(NodeName(id) + ": more than 62 operands");
  if (mask == 0) return Status::Ok();  // no tangent reaches it: zero
  const Program* prog = sk.fwd.prog;
  if (prog == nullptr || sk.fwd.mask != mask) {
    auto key = std::make_tuple(rule, arity, mask);
    auto it = fwd_cache_.find(key);
    if (it == fwd_cache_.end()) {
      std::vector<bool> has(arity, false);
      for (size_t j = 0; j < arity; ++j) has[j] = (mask >> j) & 1;
      auto p = internal::CompileForward(*rule, arity, has);
      if (!p) return Status(p.error().code(), p.error().message() + " (at " + NodeName(id) + ")");
      it = fwd_cache_.emplace(key, std::make_unique<Program>(std::move(p).value())).first;
    }
    prog = it->second.get();
    sk.fwd = {mask, prog};
  }
  ++stats_.rule_applications;
  if (prog->outputs[0] == kZeroReg) return Status::Ok();
  // Scalar path: every operand the program reads is a real scalar.
  bool scalar = prog->scalar && !is_tensor;
  double yv = 0;
  uint64_t ybits = BitsOf(l);
  if (scalar && prog->reads[arity]) scalar = ScalarDouble(k.vkind, ybits, &yv);
  for (size_t j = 0; j < arity && scalar; ++j) {
    double d;
    if ((prog->reads[j] || ((mask >> j) & 1)) && !ScalarDouble(ops_[j].vkind, ops_[j].bits, &d)) {
      scalar = false;
    }
  }
  if (scalar) {
    scratch_.assign(static_cast<size_t>(prog->num_regs), 0.0);
    for (size_t j = 0; j < arity; ++j) {
      ScalarDouble(ops_[j].vkind, ops_[j].bits, &scratch_[j]);
      if ((mask >> j) & 1) scratch_[arity + 1 + j] = adj_[varied_.Rank(ops_[j].target)];
    }
    scratch_[arity] = yv;
    internal::RunScalar(*prog, scratch_.data());
    adj_[slot] = scratch_[static_cast<size_t>(prog->souts[0])];
    return Status::Ok();
  }
  vscratch_.assign(static_cast<size_t>(prog->num_regs), Value());
  for (size_t j = 0; j < arity; ++j) {
    if (prog->reads[j]) vscratch_[j] = DecodeOperand(ops_[j]);
    if ((mask >> j) & 1) {
      uint64_t ts = varied_.Rank(ops_[j].target);
      if (ops_[j].vkind == VKind::kTensor) {
        vscratch_[arity + 1 + j] = tensor_tan_[ts];
      } else {
        vscratch_[arity + 1 + j] = ScalarValue(adj_[ts], ops_[j].vkind == VKind::kF32);
      }
    }
  }
  if (prog->reads[arity]) vscratch_[arity] = l.cv->c->Decode(ybits, k.vkind);
  bool f32 = k.vkind == VKind::kF32 || (is_tensor && l.cv->c->tensor_dtype(ybits) == DType::kF32);
  Status s = internal::RunValues(*prog, vscratch_, f32);
  if (!s.ok()) return Status(s.code(), NodeName(id) + ": " + s.message());
  const Value& out = vscratch_[static_cast<size_t>(prog->outputs[0])];
  if (is_tensor != (out.kind() == VKind::kTensor)) {
    return InvalidArgument(NodeName(id) + ": the forward rule of " + rule->Signature() +
                           " gives a " + TypeName(out) + " tangent for a " +
                           (is_tensor ? "tensor" : "scalar") + " value");
  }
  SetTangent(slot, out);
  return Status::Ok();
}

// ---------------------------------------------------------------- reverse sweep

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
    it = rev_cache_.emplace(key, std::move(c)).first;
  }
  k.rev = it->second.get();
  return k.rev;
}

Result<TensorAdj*> GradEngine::TensorAdjOf(NodeId target, uint64_t slot) {
  if (slot == cached_slot_) return cached_adj_;
  auto it = tensor_adj_.find(slot);
  if (it == tensor_adj_.end()) {
    Loc tl = Locate(target);
    TensorAdj a;
    a.t = Tensor::Zeros(tl.cv->c->tensor_dtype(BitsOf(tl)), tl.cv->c->tensor_shape(BitsOf(tl)));
    it = tensor_adj_.emplace(slot, std::move(a)).first;
  }
  cached_slot_ = slot;
  cached_adj_ = &it->second;
  return cached_adj_;
}

Status GradEngine::AccumulateScalar(NodeId target, double g) {
  uint64_t s = varied_.Rank(target);
  adj_[s] += g;
  touched_.Set(s);
  return Status::Ok();
}

Status GradEngine::AccumulateValue(NodeId target, const Value& g, const char* what) {
  uint64_t s = varied_.Rank(target);
  Loc tl = Locate(target);
  const ClassInfo& tk = Cls(tl);
  if (tk.vkind != VKind::kTensor) {
    if (!g.is_scalar() || g.kind() == VKind::kNone || g.kind() == VKind::kNothing) {
      return InvalidArgument(std::string(what) + " gives a " + TypeName(g) +
                             " adjoint for the scalar " + NodeName(target));
    }
    adj_[s] += g.to_double();
    touched_.Set(s);
    return Status::Ok();
  }
  IRT_ASSIGN_OR_RETURN(TensorAdj * a, TensorAdjOf(target, s));
  if (g.kind() != VKind::kTensor || g.tensor().shape != a->t.shape) {
    return InvalidArgument(std::string(what) + " gives a " + TypeName(g) + " " +
                           (g.kind() == VKind::kTensor ? FormatValue(g, {.max_elements = 3}) : "") +
                           " adjoint for " + NodeName(target) + ", a " +
                           TypeName(Value::MakeTensor(Tensor::Zeros(a->t.dtype, {}))) +
                           " tensor of another shape");
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
  if (Cls(tl).vkind == VKind::kTuple) {
    return NotFound("derivatives do not pass through tuples (no rule takes the tuple " +
                    NodeName(target) + ")");
  }
  if (Cls(tl).vkind != VKind::kTensor) {
    return InvalidArgument("a sparse rule adds into the scalar " + NodeName(target));
  }
  IRT_ASSIGN_OR_RETURN(TensorAdj * a, TensorAdjOf(target, s));
  const std::vector<int64_t>& shape = a->t.shape;
  int64_t n = a->t.numel();
  int64_t off = 0;
  auto index = [&](size_t d, int64_t* out) -> bool {
    double x = vidx ? vidx[d].to_double() : idx[d];
    if (x != std::trunc(x)) return false;
    *out = static_cast<int64_t>(x);
    return true;
  };
  if (nidx == 1) {
    int64_t i;
    if (!index(0, &i) || i < 1 || i > n) {
      return InvalidArgument("index out of bounds adding into the adjoint of " + NodeName(target));
    }
    off = i - 1;  // a linear index is row-major, as getindex takes it (irt/ops.h)
  } else {
    if (nidx != shape.size()) {
      return InvalidArgument("wrong number of indices adding into the adjoint of " +
                             NodeName(target));
    }
    for (size_t d = 0; d < nidx; ++d) {
      int64_t i;
      if (!index(d, &i) || i < 1 || i > shape[d]) {
        return InvalidArgument("index out of bounds adding into the adjoint of " +
                               NodeName(target));
      }
      off = off * shape[d] + (i - 1);
    }
  }
  if (a->t.dtype == DType::kF64) {
    a->t.f64()[off] += g;
  } else {
    a->t.f32()[off] += static_cast<float>(g);
  }
  touched_.Set(s);
  return Status::Ok();
}

// The adjoint of the node at `slot` as a value (scalars as the node's type).
// With `take`, a tensor adjoint is moved out (it is not needed again).
Value GradEngine::AdjointValue(uint64_t slot, const Loc& l, bool take) {
  const ClassInfo& k = Cls(l);
  if (k.vkind != VKind::kTensor) return ScalarValue(adj_[slot], k.vkind == VKind::kF32);
  auto it = tensor_adj_.find(slot);
  if (it == tensor_adj_.end()) {
    return Value::MakeTensor(
        Tensor::Zeros(l.cv->c->tensor_dtype(BitsOf(l)), l.cv->c->tensor_shape(BitsOf(l))));
  }
  if (!take || opts_.keep_adjoints) return Value::MakeTensor(it->second.t);
  Value v = Value::MakeTensor(std::move(it->second.t));
  if (cached_slot_ == slot) cached_slot_ = ~uint64_t{0};
  tensor_adj_.erase(it);
  return v;
}

Status GradEngine::Propagate(uint64_t from_slot, NodeId target, const Loc& from) {
  if (target == kNoNode || !varied_.Get(target)) return Status::Ok();
  const ClassInfo& k = Cls(from);
  if (k.vkind != VKind::kTensor) return AccumulateScalar(target, adj_[from_slot]);
  auto it = tensor_adj_.find(from_slot);
  if (it == tensor_adj_.end()) {
    touched_.Set(varied_.Rank(target));
    return Status::Ok();
  }
  uint64_t ts = varied_.Rank(target);
  auto tt = tensor_adj_.find(ts);
  if (tt == tensor_adj_.end() && !opts_.keep_adjoints &&
      Cls(Locate(target)).vkind == VKind::kTensor) {
    // Hand the buffer over.
    if (cached_slot_ == from_slot || cached_slot_ == ts) cached_slot_ = ~uint64_t{0};
    TensorAdj moved = std::move(it->second);
    tensor_adj_.erase(it);
    tensor_adj_.emplace(ts, std::move(moved));
    touched_.Set(ts);
    return Status::Ok();
  }
  return AccumulateValue(target, Value::MakeTensor(it->second.t), "a pass-through");
}

// The common case without allocation: a primitive with a scalar result whose
// rule programs read only real scalars and add into scalar adjoints (or
// sparsely into tensors). Returns false to leave the node to ApplyReverse,
// which handles (and reports) everything else.
bool GradEngine::FastReverse(const Loc& l, NodeId id, uint64_t slot, ClassInfo& k) {
  constexpr size_t kMaxArity = 8;
  constexpr int32_t kMaxRegs = 48;
  RevCache* rc = k.rev;
  if (rc == nullptr) {
    auto r = Reverse(k, k.rule, k.n_ops);
    if (!r) return false;
    rc = *r;
  }
  size_t arity = k.n_ops;
  if (arity > kMaxArity || rc->max_regs > static_cast<size_t>(kMaxRegs)) {
    k.fast = false;
    return false;
  }
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
    if (ScalarDouble(tl.cv->classes[tn.cls].vkind, tn.value, &regs[j])) real |= uint64_t{1} << j;
    var[j] = varied_.Get(t);
  }
  for (size_t j = 0; j < arity; ++j) {
    if (var[j] && rc->progs[j] && (rc->reads[j] & ~real) != 0) return false;
  }
  ScalarDouble(k.vkind, nd.value, &regs[arity]);
  regs[arity + 1] = adj_[slot];
  ++stats_.rule_applications;
  for (size_t j = 0; j < arity; ++j) {
    if (!var[j] || !rc->progs[j]) continue;
    const Program& p = *rc->progs[j];
    internal::RunScalar(p, regs);
    double g = regs[p.souts[0]];
    NodeId t = targets[j];
    if (p.souts.size() > 1) {
      double idx[kMaxArity];
      size_t ni = p.souts.size() - 1;
      if (ni > kMaxArity) return false;
      for (size_t q = 0; q < ni; ++q) idx[q] = regs[p.souts[q + 1]];
      if (!AccumulateSparse(t, g, idx, ni, nullptr).ok()) return false;
      continue;
    }
    if (!((real >> j) & 1)) return false;  // a dense scalar into a tensor: a rule error
    uint64_t ts = varied_.Rank(t);
    adj_[ts] += g;
    touched_.Set(ts);
  }
  return true;
}

Status GradEngine::ApplyReverse(const Loc& l, NodeId id, uint64_t slot, NodeId marker,
                                const Rule* rule) {
  Loc src = marker != kNoNode ? Locate(marker) : l;
  NodeId src_id = marker != kNoNode ? marker : id;
  ClassInfo& sk = const_cast<ClassInfo&>(Cls(src));
  const ClassInfo& k = Cls(l);
  if (rule == nullptr) return MissingRule(src_id, sk, sk.op, sk.n_ops);
  Operands(src, src_id, &ops_);
  size_t arity = ops_.size();
  IRT_ASSIGN_OR_RETURN(RevCache * rc, Reverse(sk, rule, arity));
  ++stats_.rule_applications;
  uint64_t ybits = BitsOf(l);
  bool y_scalar = k.vkind != VKind::kTensor;
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
    if (y_scalar && (rc->reads[j] & ~real) == 0) {
      if (!regs_ready) {
        scratch_.resize(rc->max_regs);
        for (size_t q = 0; q < arity; ++q) ScalarDouble(ops_[q].vkind, ops_[q].bits, &scratch_[q]);
        ScalarDouble(k.vkind, ybits, &scratch_[arity]);
        scratch_[arity + 1] = adj_[slot];
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
      if (Cls(tl).vkind == VKind::kTensor) {
        IRT_RETURN_IF_ERROR(AccumulateValue(o.target, ScalarValue(g, false),
                                            ("the rule for " + rule->Signature()).c_str()));
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
      vscratch_[arity] = l.cv->c->Decode(ybits, k.vkind);
    }
    vscratch_[arity + 1] = dy;
    bool f32 = k.vkind == VKind::kF32 || (!y_scalar && l.cv->c->tensor_dtype(ybits) == DType::kF32);
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
    std::string what = NodeName(src_id) + ": the rule for " + rule->Signature();
    IRT_RETURN_IF_ERROR(AccumulateValue(o.target, g, what.c_str()));
  }
  return Status::Ok();
}

Status GradEngine::ReversePass() {
  double t0 = Now();
  uint64_t n = trace_.size();
  adj_.assign(n_active_, 0.0);
  touched_.Resize(n_active_);
  NodeId res = result_node();
  if (varied_.Get(res)) {
    uint64_t s = varied_.Rank(res);
    Loc l = Locate(res);
    const ClassInfo& k = Cls(l);
    const Value& seed = *opts_.seed;
    if (k.vkind == VKind::kTensor) {
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
  const std::vector<uint64_t>& words = varied_.words();
  for (uint64_t w = (n + 63) / 64; w-- > 0;) {
    uint64_t word = words[w];
    while (word != 0) {
      int bit = 63 - __builtin_clzll(word);
      word &= ~(uint64_t{1} << bit);
      NodeId id = w * 64 + static_cast<uint64_t>(bit);
      --slot;
      if (!touched_.Get(slot)) continue;
      Loc l = Locate(id);
      cur_ = l.cv;
      const ClassInfo& k = Cls(l);
      switch (k.cat) {
        case Cat::kReturn: {
          NodeId m = RuledMarker(l, id);
          if (m != kNoNode) {
            IRT_RETURN_IF_ERROR(ApplyReverse(l, id, slot, m, Cls(Locate(m)).rule));
            break;
          }
          IRT_RETURN_IF_ERROR(Propagate(slot, PassTarget(l, id), l));
          break;
        }
        case Cat::kFuncArg:
        case Cat::kBlockArg:
          IRT_RETURN_IF_ERROR(Propagate(slot, PassTarget(l, id), l));
          break;
        case Cat::kPrim:
          if (k.fast && FastReverse(l, id, slot, const_cast<ClassInfo&>(k))) break;
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

std::optional<Value> GradEngine::Adjoint(NodeId id) {
  if (!varied_.Get(id)) return std::nullopt;
  uint64_t s = varied_.Rank(id);
  if (!touched_.Get(s)) return std::nullopt;
  Loc l = Locate(id);
  const ClassInfo& k = Cls(l);
  if (k.vkind != VKind::kTensor) return ScalarValue(adj_[s], k.vkind == VKind::kF32);
  auto it = tensor_adj_.find(s);
  if (it != tensor_adj_.end()) return Value::MakeTensor(it->second.t);
  auto kt = kept_.find(s);
  if (kt != kept_.end()) return kt->second;
  return std::nullopt;
}

Status GradEngine::Finish(GradResult* out) {
  out->stats = stats_;
  for (ArgumentDerivative& a : args_) {
    if (!a.chosen || !a.differentiable) continue;
    if (forward_mode_) {
      if (varied_.Get(a.id)) {
        uint64_t s = varied_.Rank(a.id);
        Loc l = Locate(a.id);
        if (Cls(l).vkind == VKind::kTensor) {
          auto it = tensor_tan_.find(s);
          a.derivative = it != tensor_tan_.end() ? it->second : Value();
        } else {
          a.derivative = ScalarValue(adj_[s], Cls(l).vkind == VKind::kF32);
        }
      }
      continue;
    }
    if (varied_.Get(a.id)) {
      Loc l = Locate(a.id);
      a.derivative = AdjointValue(varied_.Rank(a.id), l, /*take=*/false);
    }
  }
  out->arguments = args_;
  if (forward_mode_) {
    NodeId res = result_node();
    Loc l = Locate(res);
    const ClassInfo& k = Cls(l);
    if (varied_.Get(res)) {
      uint64_t s = varied_.Rank(res);
      if (poisoned_.Get(s)) {
        NodeId origin = poison_origin_[s];
        Loc ol = Locate(origin);
        const ClassInfo& ok = Cls(ol);
        bool closer = IsCloser(ok.kind);
        NodeId m = closer ? RootMarkerOfRuledCloser(ol, origin) : origin;
        const ClassInfo& mk = Cls(Locate(m));
        return MissingRule(m, mk, mk.op, mk.n_ops);
      }
      if (k.vkind == VKind::kTensor) {
        auto it = tensor_tan_.find(s);
        if (it != tensor_tan_.end()) {
          out->tangent = it->second;
        } else {
          out->tangent = AdjointValue(~uint64_t{0}, l, false);
        }
      } else {
        out->tangent = ScalarValue(adj_[s], k.vkind == VKind::kF32);
      }
    } else if (k.vkind != VKind::kTensor) {
      out->tangent = ScalarValue(0.0, k.vkind == VKind::kF32);
    } else {
      out->tangent = AdjointValue(~uint64_t{0}, l, false);
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- driver

namespace {

Status Prepare(const Trace& trace, GradResult* r, bool* result_float) {
  if (!trace.complete()) return DataError(trace.name() + ": the trace is incomplete");
  IRT_ASSIGN_OR_RETURN(NodeView root, trace.node(0));
  if (root.kind() != NodeKind::kCall) {
    return DataError(trace.name() + ": the first node does not open the root call");
  }
  r->function = std::string(root.op());
  for (size_t i = 0; i < root.num_operands(); ++i) {
    Operand o = root.operand(i);
    r->call_args.push_back(o.is_ref ? Value() : o.literal);
  }
  IRT_ASSIGN_OR_RETURN(NodeView last, trace.node(trace.size() - 1));
  if (last.kind() == NodeKind::kError) {
    return DataError(trace.name() + ": the trace records a failed run of " + r->function +
                     "; it has no derivative");
  }
  if (last.kind() != NodeKind::kReturn || last.closes() != 0) {
    return DataError(trace.name() + ": the last node does not close the root call");
  }
  r->result = last.value();
  bool f = r->result.is_float() ||
           (r->result.kind() == VKind::kTensor &&
            (r->result.tensor().dtype == DType::kF64 || r->result.tensor().dtype == DType::kF32));
  *result_float = f;
  return Status::Ok();
}

Status CheckResultDifferentiable(const GradResult& r, bool result_float) {
  if (!result_float) {
    return InvalidArgument("the result of " + DisplayString(r.function) + " is " +
                           TypeName(r.result) +
                           "; only Float64, Float32 and tensors of them have derivatives");
  }
  return Status::Ok();
}

Status CheckSomeDifferentiable(const GradResult& r, const std::vector<ArgumentDerivative>& args) {
  std::string names;
  for (const ArgumentDerivative& a : args) {
    if (a.chosen && a.differentiable) return Status::Ok();
    if (a.chosen)
      names +=
          (names.empty() ? "" : ", ") + ("@" + std::to_string(a.pos)) + "::" + TypeName(a.value);
  }
  return InvalidArgument("no differentiable argument: " + DisplayString(r.function) + " takes " +
                         (names.empty() ? std::string("no chosen arguments") : names) +
                         "; derivatives exist for Float64, Float32 and tensors of them");
}

Result<Value> DefaultSeed(const GradResult& r, const GradOptions& opts) {
  if (opts.seed) {
    const Value& s = *opts.seed;
    bool ok = (s.is_scalar() && s.kind() != VKind::kNone && s.kind() != VKind::kNothing) ||
              s.kind() == VKind::kTensor;
    if (!ok) return UsageError("the seed must be a number or a tensor, not " + TypeName(s));
    if (r.result.kind() != VKind::kTensor && s.kind() == VKind::kTensor) {
      return InvalidArgument("the result of " + DisplayString(r.function) + " is a " +
                             TypeName(r.result) + "; the seed must be a number");
    }
    return s;
  }
  if (r.result.kind() == VKind::kTensor) {
    return InvalidArgument("the result of " + DisplayString(r.function) + " is a " +
                           TypeName(r.result) +
                           "; give its adjoint with --seed (a tensor of its shape, or a number)");
  }
  return r.result.kind() == VKind::kF32 ? Value::F32(1.0f) : Value::F64(1.0);
}

}  // namespace

Result<GradResult> Differentiate(const Trace& trace, const RuleSet& rules,
                                 const GradOptions& options) {
  GradResult r;
  r.mode = options.mode;
  bool result_float = false;
  IRT_RETURN_IF_ERROR(Prepare(trace, &r, &result_float));
  IRT_RETURN_IF_ERROR(CheckResultDifferentiable(r, result_float));
  GradOptions opts = options;
  if (opts.mode == GradMode::kReverse) {
    IRT_ASSIGN_OR_RETURN(r.seed, DefaultSeed(r, opts));
    opts.seed = r.seed;
  }
  if (opts.mode == GradMode::kForward && opts.tangents.empty()) {
    return UsageError("forward mode needs at least one tangent (--tangent @N=VALUE)");
  }
  GradEngine e(trace, rules, opts);
  IRT_RETURN_IF_ERROR(e.ForwardPass(opts.mode == GradMode::kForward, false));
  IRT_RETURN_IF_ERROR(CheckSomeDifferentiable(r, e.args()));
  if (opts.mode == GradMode::kForward) {
    for (const auto& [p, t] : opts.tangents) {
      for (const ArgumentDerivative& a : e.args()) {
        if (a.pos == p && !a.differentiable) {
          return UsageError("@" + std::to_string(p) + " is " + TypeName(a.value) +
                            ", which is not differentiable");
        }
      }
    }
  } else {
    IRT_RETURN_IF_ERROR(e.ReversePass());
  }
  IRT_RETURN_IF_ERROR(e.Finish(&r));
  if (opts.mode == GradMode::kForward) {
    // The tangents as given, scalars in the argument's type.
    for (ArgumentDerivative& a : r.arguments) {
      for (const auto& [p, t] : opts.tangents) {
        if (a.pos != p) continue;
        a.derivative = t;
        if (t.kind() != VKind::kTensor && a.value.is_float()) {
          a.derivative = ScalarValue(t.to_double(), a.value.kind() == VKind::kF32);
        }
      }
    }
  }
  return r;
}

// ---------------------------------------------------------------- writers

namespace {

ClassSpec SpecOf(const internal::ChunkColumns& c, const internal::ClassFacts& fc) {
  ClassSpec s;
  s.kind = fc.kind;
  s.op = std::string(fc.op);
  s.block = fc.block;
  s.pos = fc.pos;
  s.aux = fc.aux;
  s.line = fc.line;
  s.col = fc.col;
  s.has_condition = (fc.flags & 1) != 0;
  s.condition_taken_when = (fc.flags & 2) != 0;
  for (uint32_t j = 0; j < fc.n_operands; ++j) {
    uint32_t o = c.operand_code(fc, j);
    if (o == 0) {
      s.operands.push_back(OperandSpec::Ref());
    } else {
      s.operands.push_back(OperandSpec::Literal(c.literal(o)));
    }
  }
  return s;
}

// Runs the forward pass and the reverse sweep for the writers.
Result<GradResult> Prepared(const Trace& trace, const GradOptions& options, GradOptions* opts) {
  GradResult r;
  r.mode = GradMode::kReverse;
  if (options.mode != GradMode::kReverse) {
    return UsageError("the backward pass and adjoints are reverse mode");
  }
  bool result_float = false;
  IRT_RETURN_IF_ERROR(Prepare(trace, &r, &result_float));
  IRT_RETURN_IF_ERROR(CheckResultDifferentiable(r, result_float));
  *opts = options;
  IRT_ASSIGN_OR_RETURN(r.seed, DefaultSeed(r, *opts));
  opts->seed = r.seed;
  return r;
}

}  // namespace

Result<GradResult> WriteAnnotated(const Trace& trace, const RuleSet& rules,
                                  const GradOptions& options, Output& out) {
  GradOptions opts;
  IRT_ASSIGN_OR_RETURN(GradResult r, Prepared(trace, options, &opts));
  opts.keep_adjoints = true;
  GradEngine e(trace, rules, opts);
  IRT_RETURN_IF_ERROR(e.ForwardPass(false, false));
  IRT_RETURN_IF_ERROR(CheckSomeDifferentiable(r, e.args()));
  IRT_RETURN_IF_ERROR(e.ReversePass());
  IRT_RETURN_IF_ERROR(e.Finish(&r));
  double t0 = Now();
  // A nested call's marker shows the adjoint of the call's result (its closer's).
  std::unordered_map<NodeId, NodeId> marker_closer;
  for (NodeId id = trace.size(); id-- > 0;) {
    if (!e.Touched(id)) continue;
    GradEngine::Loc l = e.Locate(id);
    if (e.Cls(l).kind == NodeKind::kReturn) marker_closer[e.RootMarkerOfRuledCloser(l, id)] = id;
  }
  WriterOptions wo;
  wo.producer_name = std::string(trace.producer_name());
  wo.producer_version = std::string(trace.producer_version());
  TraceWriter w(&out, wo);
  std::vector<NodeId> refs;
  for (uint32_t ci = 0; ci < trace.chunks().size(); ++ci) {
    IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, internal::ColumnsOf(trace, ci));
    for (const internal::ChunkColumns::Function& f : c->Functions()) {
      w.RegisterFunction(std::string(f.name), std::string(f.ir));
      if (f.facts) w.RegisterControlFlow(std::string(f.name), *f.facts);
    }
    std::vector<ClassId> cls(c->classes.size(), ~0u);
    e.set_last_chunk(ci);
    for (uint32_t local = 0; local < c->count; ++local) {
      const internal::RawNode nd(c, local);
      const NodeId id = nd.id();
      GradEngine::Loc l = e.Locate(id);
      const ClassInfo& k = e.Cls(l);
      uint32_t ki = nd.class_index();
      if (cls[ki] == ~0u) cls[ki] = w.DefineClass(SpecOf(*c, nd.cls()));
      refs.clear();
      for (uint32_t j = 0; j < k.n_refs; ++j) refs.push_back(e.RefTarget(l, id, j));
      w.Append(cls[ki], nd.value(), refs);
      for (const MetaEntry& m : nd.meta()) w.AddMeta(m.key, m.value);
      std::optional<Value> adj = e.Adjoint(id);
      if (!adj && k.cat == Cat::kRootArg) {
        for (const ArgumentDerivative& a : r.arguments) {
          if (a.id == id && a.chosen && a.differentiable && !a.derivative.is_none()) {
            adj = a.derivative;
          }
        }
      }
      if (!adj && k.kind == NodeKind::kCall) {
        auto it = marker_closer.find(id);
        if (it != marker_closer.end()) adj = e.Adjoint(it->second);
      }
      if (adj) w.AddMeta("adjoint", *adj);
    }
  }
  for (const MetaEntry& m : trace.trace_meta()) w.AddTraceMeta(m.key, m.value);
  IRT_RETURN_IF_ERROR(w.Finish());
  r.stats.write_seconds = Now() - t0;
  return r;
}

namespace {

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
  ClassId Class(const ClassSpec& s);
  NodeId Emit(NodeKind kind, const std::string& op, const std::vector<Ref>& args, const Value& v,
              const Location& loc, NodeId adjoint_of);
  Location LocOf(NodeId orig);
  NodeId PrimalOf(NodeId orig);
  Result<NodeId> RefFor(NodeId orig);
  Status EmitPrimal(const GradEngine::Loc& l, NodeId id, NodeId marker, uint64_t slot);
  Status ApplyRule(const GradEngine::Loc& l, NodeId id, uint64_t slot, NodeId marker,
                   const Rule* rule);
  Status Accumulate(NodeId target, const Ref& c);
  Status AccumulateSparse(NodeId target, const Ref& v, const std::vector<Ref>& idx);
  Result<NodeId> AsNode(const Ref& r, NodeId target);

  GradEngine& e_;
  TraceWriter& w_;
  [[maybe_unused]] const GradOptions& opts_;
  std::unordered_map<std::string, ClassId> classes_;
  std::unordered_map<NodeId, NodeId> root_new_;   // original root argument -> its copy
  std::unordered_map<NodeId, NodeId> constants_;  // original inactive node -> Constant copy
  std::vector<NodeId> prim_;                      // by slot: the active node's primal copy
  std::vector<Ref> adj_;                          // by slot: the adjoint so far
  std::vector<Ref> regs_;                         // registers of the program running
  std::vector<OperandVal> ops_;
  Location cur_loc_;
  NodeId cur_of_ = kNoNode;
};

ClassId Emitter::Class(const ClassSpec& s) {
  std::string key = std::to_string(static_cast<int>(s.kind)) + "|" + s.op + "|" +
                    std::to_string(s.block) + "|" + std::to_string(s.pos) + "|" +
                    std::to_string(s.aux) + "|" + std::to_string(s.line) + "|" +
                    std::to_string(s.col) + "|" + (s.has_condition ? "c" : "") +
                    (s.condition_taken_when ? "t" : "");
  for (const OperandSpec& o : s.operands) {
    if (o.is_ref) {
      key += "|R";
    } else {
      key += "|L" + std::to_string(static_cast<int>(o.literal.kind())) + ":" +
             (o.literal.is_scalar() ? std::to_string(o.literal.bits())
                                    : FormatValue(o.literal, {.max_elements = 0}));
    }
  }
  auto it = classes_.find(key);
  if (it != classes_.end()) return it->second;
  ClassId id = w_.DefineClass(s);
  classes_.emplace(std::move(key), id);
  return id;
}

NodeId Emitter::Emit(NodeKind kind, const std::string& op, const std::vector<Ref>& args,
                     const Value& v, const Location& loc, NodeId adjoint_of) {
  ClassSpec s;
  s.kind = kind;
  s.op = op;
  s.block = loc.block;
  s.pos = loc.pos;
  s.line = loc.line;
  s.col = loc.col;
  std::vector<NodeId> refs;
  for (const Ref& a : args) {
    if (a.node != kNoNode) {
      s.operands.push_back(OperandSpec::Ref());
      refs.push_back(a.node);
    } else {
      s.operands.push_back(OperandSpec::Literal(a.value));
    }
  }
  NodeId id = w_.Append(Class(s), v, refs);
  if (adjoint_of != kNoNode)
    w_.AddMeta("adjoint_of", Value::String("@" + std::to_string(adjoint_of)));
  return id;
}

Location Emitter::LocOf(NodeId orig) {
  GradEngine::Loc l = e_.Locate(orig);
  const ClassInfo& k = e_.Cls(l);
  return Location{k.block, k.pos, false, k.line, k.col};
}

NodeId Emitter::PrimalOf(NodeId orig) {
  auto it = root_new_.find(orig);
  if (it != root_new_.end()) return it->second;
  if (e_.Varied(orig)) return prim_[e_.Slot(orig)];
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
  Value v = l.cv->c->Decode(e_.BitsOf(l), k.vkind);
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
  Value v = l.cv->c->Decode(e_.BitsOf(l), k.vkind);
  NodeKind kind = sk.kind == NodeKind::kSpecial ? NodeKind::kSpecial : NodeKind::kPrimitive;
  prim_[slot] = Emit(kind, std::string(sk.op), args, v, LocOf(src_id), kNoNode);
  return Status::Ok();
}

Status Emitter::OnInstr(const internal::Instr& in, const std::vector<Value>& values) {
  const Value& v = values[static_cast<size_t>(in.dst)];
  std::vector<Ref> args;
  for (int32_t a : in.args) args.push_back(regs_[static_cast<size_t>(a)]);
  // Identities (unbroadcasting to the same shape) emit nothing.
  if (!args.empty() && (in.op == "identity" || in.op == "sum_to" || in.op == "broadcast_to" ||
                        in.op == "reshape" || in.op == "transpose")) {
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

Result<NodeId> Emitter::AsNode(const Ref& r, NodeId target) {
  if (r.node != kNoNode) return r.node;
  return Emit(NodeKind::kConstant, "", {}, r.value, LocOf(target), PrimalOf(target));
}

Status Emitter::Accumulate(NodeId target, const Ref& c) {
  uint64_t st = e_.Slot(target);
  Ref& a = adj_[st];
  if (a.absent()) {
    a = c;
    return Status::Ok();
  }
  IRT_ASSIGN_OR_RETURN(Value sum, ApplyOp("+", std::vector<Value>{a.value, c.value}));
  NodeId id = Emit(NodeKind::kPrimitive, "+", {a, c}, sum, LocOf(target), PrimalOf(target));
  a = {id, sum};
  return Status::Ok();
}

Status Emitter::AccumulateSparse(NodeId target, const Ref& v, const std::vector<Ref>& idx) {
  uint64_t st = e_.Slot(target);
  Ref acc = adj_[st];
  NodeId primal = PrimalOf(target);
  if (acc.absent()) {
    GradEngine::Loc l = e_.Locate(target);
    Value pv = l.cv->c->Decode(e_.BitsOf(l), e_.Cls(l).vkind);
    IRT_ASSIGN_OR_RETURN(Value z, ApplyOp("zero", std::vector<Value>{pv}));
    NodeId id = Emit(NodeKind::kPrimitive, "zero", {{primal, pv}}, z, LocOf(target), primal);
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
  if (rule == nullptr) return e_.MissingRule(src_id, sk, sk.op, sk.n_ops);
  e_.Operands(src, src_id, &ops_);
  std::vector<OperandVal> ops = ops_;
  size_t arity = ops.size();
  IRT_ASSIGN_OR_RETURN(RevCache * rc, e_.Reverse(sk, rule, arity));
  ++e_.stats().rule_applications;
  Value y = l.cv->c->Decode(e_.BitsOf(l), k.vkind);
  bool f32 =
      k.vkind == VKind::kF32 || (y.kind() == VKind::kTensor && y.tensor().dtype == DType::kF32);
  for (size_t j = 0; j < arity; ++j) {
    const OperandVal& o = ops[j];
    if (!o.varied || !rc->progs[j]) continue;
    const Program& p = *rc->progs[j];
    std::vector<Value> values(static_cast<size_t>(p.num_regs));
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
    values[arity + 1] = adj_[slot].value;
    regs_[arity + 1] = adj_[slot];
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
  IRT_ASSIGN_OR_RETURN(NodeView root, trace.node(0));
  std::vector<Ref> call_args;
  for (const Value& v : r.call_args) call_args.push_back({kNoNode, v});
  Emit(NodeKind::kCall, "∇" + r.function, call_args, Value(), root.location(), kNoNode);
  for (const ArgumentDerivative& a : e_.args()) {
    ClassSpec s;
    s.kind = NodeKind::kArgument;
    s.block = a.location.block;
    s.pos = a.location.pos;
    s.line = a.location.line;
    s.col = a.location.col;
    root_new_[a.id] = w_.Append(Class(s), a.value, {});
  }
  // The active primal, in execution order.
  prim_.assign(e_.num_active(), kNoNode);
  uint64_t slot = 0;
  for (NodeId id = 0; id < n; ++id) {
    if (!e_.Varied(id)) continue;
    uint64_t s = slot++;
    GradEngine::Loc l = e_.Locate(id);
    const ClassInfo& k = e_.Cls(l);
    auto root_arg = root_new_.find(id);
    if (root_arg != root_new_.end()) {
      prim_[s] = root_arg->second;
      continue;
    }
    switch (k.kind) {
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
  adj_.assign(e_.num_active(), Ref{});
  NodeId res = n - 1;
  if (e_.Varied(res)) {
    NodeId seed = Emit(NodeKind::kConstant, "", {}, r.seed, LocOf(res), PrimalOf(res));
    adj_[e_.Slot(res)] = {seed, r.seed};
  }
  slot = e_.num_active();
  for (NodeId id = n; id-- > 0;) {
    if (!e_.Varied(id)) continue;
    --slot;
    if (adj_[slot].absent()) continue;
    GradEngine::Loc l = e_.Locate(id);
    const ClassInfo& k = e_.Cls(l);
    switch (k.kind) {
      case NodeKind::kReturn: {
        NodeId m = e_.RuledMarker(l, id);
        if (m != kNoNode) {
          IRT_RETURN_IF_ERROR(ApplyRule(l, id, slot, m, e_.Cls(e_.Locate(m)).rule));
          break;
        }
        [[fallthrough]];
      }
      case NodeKind::kArgument: {
        NodeId t = e_.PassTarget(l, id);
        if (t != kNoNode && e_.Varied(t)) IRT_RETURN_IF_ERROR(Accumulate(t, adj_[slot]));
        break;
      }
      case NodeKind::kPrimitive:
      case NodeKind::kSpecial:
        IRT_RETURN_IF_ERROR(ApplyRule(l, id, slot, kNoNode, k.rule));
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
      Ref ref = e_.Varied(a.id) ? adj_[e_.Slot(a.id)] : Ref{};
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
  ClassSpec rs;
  rs.kind = NodeKind::kReturn;
  rs.block = 1;
  rs.pos = 1;
  rs.operands.push_back(OperandSpec::Ref());
  std::vector<NodeId> rr{ret.node};
  w_.Append(Class(rs), ret.value, rr);
  return values;
}

}  // namespace

Result<GradResult> EmitGradientTrace(const Trace& trace, const RuleSet& rules,
                                     const GradOptions& options, Output& out) {
  GradOptions opts;
  IRT_ASSIGN_OR_RETURN(GradResult r, Prepared(trace, options, &opts));
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

// ---------------------------------------------------------------- output

namespace {

std::string ArgLocation(const ArgumentDerivative& a) {
  return "§" + std::to_string(a.location.block) + ":%" + std::to_string(a.location.pos);
}

}  // namespace

Status PrintGradient(const GradResult& r, const GradPrintOptions& opts, Output& out) {
  FormatOptions fo;
  fo.max_elements = opts.max_elements;
  std::string s;
  bool forward = r.mode == GradMode::kForward;
  if (opts.json) {
    JsonValueOptions jo;
    jo.max_elements = opts.json_max_elements;
    s += "{\"mode\":";
    s += forward ? "\"forward\"" : "\"reverse\"";
    s += ",\"function\":";
    AppendJsonString(s, r.function);
    s += ",\"args\":[";
    for (size_t i = 0; i < r.call_args.size(); ++i) {
      if (i) s += ',';
      AppendJsonValue(s, r.call_args[i], jo);
    }
    s += "],\"value\":";
    AppendJsonValue(s, r.result, jo);
    s += ",\"type\":";
    AppendJsonString(s, TypeName(r.result));
    if (!forward) {
      s += ",\"seed\":";
      AppendJsonValue(s, r.seed, jo);
    }
    s += forward ? ",\"tangents\":[" : ",\"derivatives\":[";
    bool first = true;
    for (const ArgumentDerivative& a : r.arguments) {
      if (!a.chosen) continue;
      if (!first) s += ',';
      first = false;
      s += "{\"pos\":" + std::to_string(a.pos) + ",\"location\":";
      AppendJsonString(s, ArgLocation(a));
      s += ",\"value\":";
      AppendJsonValue(s, a.value, jo);
      s += ",\"type\":";
      AppendJsonString(s, TypeName(a.value));
      s += ",\"differentiable\":";
      s += a.differentiable ? "true" : "false";
      if (a.differentiable) {
        s += forward ? ",\"tangent\":" : ",\"derivative\":";
        AppendJsonValue(s, a.derivative, jo);
      }
      s += '}';
    }
    s += ']';
    if (forward) {
      s += ",\"derivative\":";
      AppendJsonValue(s, r.tangent, jo);
    }
    s += "}\n";
    out << s;
    return Status::Ok();
  }
  s += "⟨" + DisplayString(r.function) + "⟩(";
  for (size_t i = 0; i < r.call_args.size(); ++i) {
    if (i) s += ", ";
    s += "⟨" + FormatValue(r.call_args[i], fo) + "⟩";
  }
  s += r.call_args.empty() ? "()...) → " : ", ()...) → ";
  s += FormatValue(r.result, fo) + "::" + TypeName(r.result) + "\n";
  for (const ArgumentDerivative& a : r.arguments) {
    if (!a.chosen) continue;
    s += "  @" + std::to_string(a.pos) + ": [Arg:" + ArgLocation(a) + "] " +
         FormatValue(a.value, fo) + "::" + TypeName(a.value);
    if (!a.differentiable) {
      s += "  not differentiable\n";
      continue;
    }
    s += forward ? "  tangent = " : "  ∂ = ";
    s += FormatValue(a.derivative, fo) + "::" + TypeName(a.derivative) + "\n";
  }
  if (forward) s += "  ∂ = " + FormatValue(r.tangent, fo) + "::" + TypeName(r.tangent) + "\n";
  out << s;
  return Status::Ok();
}

}  // namespace irt
