// The engine's chunk views and node queries, and its results: the
// adjoints and tangents of the root's arguments and result.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "irt/print.h"

// Last: it turns on the popcnt instruction for the rest of the file.
#include "analyses/grad/engine.h"
#include "io/chunk.h"
#include "ops/ops_internal.h"

namespace irt::internal::grad {

void GradEngine::Hold(ChunkView* cv) {
  held_.push_back(cv->index);
  held_bytes_ += cv->bytes;
}

void GradEngine::Reload(ChunkView* cv) {
  Result<const internal::ChunkColumns*> c = internal::ColumnsOf(trace_, cv->index);
  if (!c) throw ColumnsLost{c.error()};
  cv->nodes = (*c)->nodes;
  cv->refs = (*c)->refs;
  cv->released = false;
  ++reloads_;
  Hold(cv);
}

void GradEngine::TrimSlow() {
  if (reloads_ > 2 * views_.size() + 16 && budget_ < kMaxColumnBudget) {
    budget_ *= 4;
    reloads_ = 0;
    if (held_bytes_ <= budget_) return;
  }
  while (held_bytes_ > budget_ && held_.size() > 2) {
    size_t best = held_.size();
    for (size_t q = 0; q < held_.size(); ++q) {
      const ChunkView* v = &views_[held_[q]];
      if (v == cur_ || v == far_) continue;
      if (best == held_.size() ||
          (sweeping_ ? v->index > views_[held_[best]].index : v->tick < views_[held_[best]].tick)) {
        best = q;
      }
    }
    if (best == held_.size()) return;
    ChunkView* v = &views_[held_[best]];
    held_[best] = held_.back();
    held_.pop_back();
    held_bytes_ -= v->bytes;
    // A chunk the trace cannot give back stays decoded, uncounted.
    if (trace_.ReleaseColumns(v->index) == 0) continue;
    v->nodes = nullptr;
    v->refs = nullptr;
    v->released = true;
  }
}

Result<ChunkView*> GradEngine::View(uint32_t ci) {
  ChunkView& cv = views_[ci];
  if (cv.ready) {
    if (cv.released) Reload(&cv);
    cv.tick = ++clock_;
    return &cv;
  }
  // The column reader verified the chunk and every one of its nodes.
  IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, internal::ColumnsOf(trace_, ci));
  cv.index = ci;
  cv.tick = ++clock_;
  cv.bytes = uint64_t{c->count} * sizeof(internal::NodeRec) + c->n_refs * sizeof(uint32_t);
  Hold(&cv);
  cv.c = c;
  cv.base = c->base;
  cv.n = c->count;
  cv.base_depth = c->base_depth;
  cv.nodes = c->nodes;
  cv.refs = c->refs;
  cv.operands = c->operands;
  cv.literals = c->literals;
  cv.ntensors = c->n_tensors;
  cv.facts = c->classes.data();
  uint32_t nclasses = static_cast<uint32_t>(c->classes.size());
  cv.classes.resize(nclasses);
  for (uint32_t i = 0; i < nclasses; ++i) {
    const internal::ClassFacts& fc = c->classes[i];
    ClassInfo& k = cv.classes[i];
    k.f = &fc;
    k.ref_index.resize(fc.n_operands);
    int32_t r = 0;
    for (uint32_t j = 0; j < fc.n_operands; ++j) {
      k.ref_index[j] = cv.operands[fc.first_operand + j] == 0 ? r++ : -1;
    }
    k.lit_val.assign(fc.n_operands, 0.0);
    for (uint32_t j = 0; j < fc.n_operands; ++j) {
      uint32_t o = cv.operands[fc.first_operand + j];
      if (o == 0) continue;
      const internal::ValueRec& lit = cv.literals[o - 1];
      if (j < 63 && ScalarDouble(static_cast<VKind>(lit.vkind), lit.bits, &k.lit_val[j]))
        k.lit_real |= uint64_t{1} << j;
    }
    double unused;
    k.y_real = ScalarDouble(fc.vkind, 0, &unused);
    // A tuple may hold floats: a primitive that makes one from an active
    // value needs a rule (none passes derivatives through tuples yet), so
    // that differentiating through it is an error, not a silent zero.
    bool floaty = fc.vkind == VKind::kF64 || fc.vkind == VKind::kF32 ||
                  fc.vkind == VKind::kTensor || fc.vkind == VKind::kTuple;
    switch (fc.kind) {
      case NodeKind::kPrimitive:
      case NodeKind::kSpecial:
        k.rule = rules_.Find(fc.op, fc.n_operands);
        k.nondiff = k.rule == nullptr && rules_.IsNondiff(fc.op);
        k.cat = (k.nondiff || !floaty) ? Cat::kInert : Cat::kPrim;
        k.fast = k.rule != nullptr && k.y_real;
        if (fc.kind == NodeKind::kPrimitive && fc.op == "tuple") {
          k.tuple_op = ClassInfo::kTupleMake;
        } else if (fc.kind == NodeKind::kPrimitive && fc.n_operands == 2 &&
                   (fc.op == "getitem" || fc.op == "getindex")) {
          k.tuple_op = fc.op == "getitem" ? ClassInfo::kTupleItem : ClassInfo::kTupleIndex;
        } else if (fc.kind == NodeKind::kPrimitive && fc.op == "getslice" &&
                   (fc.n_operands == 4 || fc.n_operands == 5)) {
          k.tuple_op = ClassInfo::kTupleSlice;
        } else if (fc.kind == NodeKind::kPrimitive && fc.op == "cat" && fc.n_operands >= 2) {
          k.tuple_op = ClassInfo::kTupleCat;
        } else if (fc.kind == NodeKind::kPrimitive && fc.op == "collect" && fc.n_operands == 1) {
          k.tuple_op = ClassInfo::kTupleCollect;
        }
        break;
      case NodeKind::kCall:
        k.rule = rules_.Find(fc.op, fc.n_operands);
        k.cat = Cat::kCall;
        break;
      case NodeKind::kReturn:
        k.cat = Cat::kReturn;
        break;
      case NodeKind::kError:
        k.cat = Cat::kError;
        break;
      case NodeKind::kArgument:
        if (fc.aux != 0) {
          // A block or nested function argument that cannot hold a float is
          // never active: nothing reads through it.
          k.cat = floaty ? Cat::kBlockArg : Cat::kInert;
        } else if (fc.n_operands == 1 && k.ref_index[0] >= 0) {
          k.cat = floaty ? Cat::kFuncArg : Cat::kInert;
        } else {
          k.cat = Cat::kRootArg;
        }
        break;
      default:
        k.cat = Cat::kInert;
    }
  }
  cv.inert.resize(nclasses);
  for (uint32_t i = 0; i < nclasses; ++i) cv.inert[i] = cv.classes[i].cat == Cat::kInert;
  cv.ready = true;
  return &cv;
}

NodeId GradEngine::PassTarget(const Loc& l, NodeId id) {
  const ClassInfo& k = Cls(l);
  const internal::ClassFacts& kf = *k.f;
  if (kf.kind == NodeKind::kReturn) {
    if (kf.n_operands != 1 || k.ref_index[0] < 0) return kNoNode;
    return RefTarget(l, id, 0);
  }
  if (kf.kind != NodeKind::kArgument || kf.n_operands != 1 || k.ref_index[0] < 0) return kNoNode;
  NodeId ref = RefTarget(l, id, 0);
  if (kf.aux == 0) return ref;
  // A block argument: the aux-th operand of the jump it references.
  Loc j = Locate(ref);
  const ClassInfo& jk = Cls(j);
  if (jk.f->kind != NodeKind::kJump) return kNoNode;
  uint32_t nargs = jk.f->n_operands - ((jk.f->flags & 1) ? 1 : 0);
  if (kf.aux > nargs) return kNoNode;
  int32_t ri = jk.ref_index[kf.aux - 1];
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
  const internal::ClassFacts& kf = *k.f;
  out->resize(kf.n_operands);
  for (uint32_t j = 0; j < kf.n_operands; ++j) {
    OperandVal& o = (*out)[j];
    if (k.ref_index[j] < 0) {
      const internal::ValueRec& lit = l.cv->literals[l.cv->operands[kf.first_operand + j] - 1];
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
    o.vkind = Facts(tl).vkind;
    o.bits = BitsOf(tl);
    o.chunk = tl.cv->c;
    o.varied = varied_.Get(t);
  }
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
      if (IsCloser(k.f->kind)) {
        ++count;
        i = RootMarkerOfRuledCloser(l, i);
        continue;
      }
      if (k.f->kind == NodeKind::kCall) {
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
  if (!k.f->op.empty()) what += ", ⟨" + DisplayString(k.f->op) + "⟩";
  what += " at " + LocationText(k) + ")";
  return what;
}

Status GradEngine::MissingRule(NodeId id, const ClassInfo& k, std::string_view op, size_t arity) {
  std::string kind = k.f->kind == NodeKind::kCall ? "function" : "primitive";
  std::string hint;
  if (rules_.HasRule(op)) {
    hint = " (there are rules for '" + DisplayString(op) + "' with other numbers of arguments)";
  } else if (k.f->kind == NodeKind::kPrimitive && trace_.FunctionIR(op, id)) {
    hint =
        " (a module function recorded as a primitive: trace it with its body or give a rule "
        "with --rules)";
  } else {
    hint = "; add one with --rules";
  }
  std::string taking = std::to_string(arity) + (arity == 1 ? " argument" : " arguments");
  return NotFound("no derivative rule for " + kind + " '" + DisplayString(op) + "' taking " +
                  taking + " at " + NodeName(id) + hint);
}

double* AdjointPages::Block() {
  double* p;
  if (!free_.empty()) {
    p = free_.back();
    free_.pop_back();
    std::memset(p, 0, kPage * sizeof(double));
  } else {
    p = static_cast<double*>(AllocateTensorBlock(kPage * sizeof(double)));
    store_.emplace_back(p);
  }
  return p;
}

double* AdjointPages::Fill(uint64_t page) {
  if (page == 0 && small_n_ != 0) {
    small_.reset(new double[small_n_]());
    return pages_[0] = small_.get();
  }
  return pages_[page] = Block();
}

void AdjointPages::Unsmall() {
  if (small_ != nullptr) {
    double* p = Block();
    std::memcpy(p, small_.get(), small_n_ * sizeof(double));
    pages_[0] = p;
    small_.reset();
  }
  small_n_ = 0;
}

Value GradEngine::DecodeAt(const internal::ChunkColumns& c, uint64_t bits, VKind kind) {
  if (kind != VKind::kTensor) return c.Decode(bits, kind);
  const DecodedKey key{c.index, bits};
  if (!decoded_.empty()) {
    auto it = decoded_.find(key);
    if (it != decoded_.end()) return it->second;
  }
  for (const RecentTensor& r : recent_) {
    if (r.key == key && r.value.kind() == VKind::kTensor) return r.value;
  }
  Value v = c.Decode(bits, kind);
  recent_[next_recent_++ % kRecentTensors] = RecentTensor{key, v};
  return v;
}

Value GradEngine::RootArgumentValue(const internal::ChunkColumns& c, uint64_t bits, VKind kind) {
  if (kind == VKind::kTensor && root_operands_ != nullptr) {
    // Comparing the stored bytes is cheaper than copying them into fresh
    // memory, and a differing tensor differs early.
    const std::span<const uint8_t> data = c.tensor_data(bits);
    const DType dtype = c.tensor_dtype(bits);
    for (const Value& v : *root_operands_) {
      if (v.kind() != VKind::kTensor) continue;
      const Tensor& t = v.tensor();
      if (t.dtype == dtype && t.data.size() == data.size() && t.shape == c.tensor_shape(bits) &&
          std::equal(data.begin(), data.end(), t.data.begin())) {
        return v;
      }
    }
  }
  return c.Decode(bits, kind);
}

std::optional<Value> GradEngine::Adjoint(NodeId id) {
  if (!varied_.Get(id)) return std::nullopt;
  uint64_t s = varied_.Rank(id);
  if (!touched_.Get(s)) return std::nullopt;
  Loc l = Locate(id);
  const ClassInfo& k = Cls(l);
  if (k.f->vkind == VKind::kTuple) {
    auto t = tuple_adj_.find(s);
    if (t == tuple_adj_.end()) return std::nullopt;
    return Value::MakeTuple(t->second.items);
  }
  if (k.f->vkind != VKind::kTensor) return ScalarValue(adj_.Get(s), k.f->vkind == VKind::kF32);
  auto it = tensor_adj_.find(s);
  if (it == tensor_adj_.end()) return std::nullopt;
  it->second.Densify();
  return Value::MakeTensor(it->second.t);
}

bool HoldsFloat(const Value& v) {
  std::vector<const Value*> stack{&v};
  while (!stack.empty()) {
    const Value* x = stack.back();
    stack.pop_back();
    if (x->kind() == VKind::kF64 || x->kind() == VKind::kF32) return true;
    if (x->kind() == VKind::kTensor &&
        (x->tensor().dtype == DType::kF64 || x->tensor().dtype == DType::kF32)) {
      return true;
    }
    if (x->kind() == VKind::kTuple) {
      for (const Value& item : x->tuple()) stack.push_back(&item);
    }
  }
  return false;
}

// The derivative of a tuple argument `like` from its adjoint (or tangent)
// `d`: an item that received none is zero (of a float item's type; other
// items stay nothing). Tuples nest at most kMaxTupleDepth deep.
Value WithZeros(const Value& d, const Value& like, int depth) {
  if (like.kind() == VKind::kTuple) {
    const std::vector<Value>& items = like.tuple();
    const bool has = d.kind() == VKind::kTuple && d.tuple().size() == items.size();
    std::vector<Value> out;
    out.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      out.push_back(depth > 2 * internal::kMaxTupleDepth
                        ? Value::Nothing()
                        : WithZeros(has ? d.tuple()[i] : Value::Nothing(), items[i], depth + 1));
    }
    return Value::MakeTuple(std::move(out));
  }
  if (d.kind() != VKind::kNothing && !d.is_none()) return d;
  if (like.kind() == VKind::kF64 || like.kind() == VKind::kF32) {
    return ScalarValue(0.0, like.kind() == VKind::kF32);
  }
  if (like.kind() == VKind::kTensor &&
      (like.tensor().dtype == DType::kF64 || like.tensor().dtype == DType::kF32)) {
    return Value::MakeTensor(Tensor::Zeros(like.tensor().dtype, like.tensor().shape));
  }
  return Value::Nothing();
}

Status GradEngine::TupleSliceOf(NodeId id, const std::vector<OperandVal>& ops, int64_t n,
                                int64_t* first, int64_t* step, int64_t* count) {
  std::vector<Value> parts;
  for (size_t j = 1; j < ops.size(); ++j) parts.push_back(DecodeOperand(ops[j]));
  double d;
  if (!ScalarDouble(parts[0].kind(), parts[0].bits(), &d) || d != 1.0) {
    return InvalidArgument(NodeName(id) + ": a tuple has one dimension");
  }
  Status s = ::irt::ops::PythonSlice("getslice", n, OpArgs(parts).from(1), first, step, count);
  if (!s.ok()) return Status(s.code(), NodeName(id) + ": " + s.message());
  return Status::Ok();
}

Status GradEngine::Finish(GradResult* out) {
  out->stats = stats_;
  for (ArgumentDerivative& a : args_) {
    if (!a.chosen || !a.differentiable) continue;
    if (forward_mode_) {
      if (varied_.Get(a.id)) {
        uint64_t s = varied_.Rank(a.id);
        Loc l = Locate(a.id);
        if (Cls(l).f->vkind == VKind::kTuple) {
          auto it = tensor_tan_.find(s);
          a.derivative = WithZeros(it != tensor_tan_.end() ? it->second : Value(), a.value, 0);
        } else if (Cls(l).f->vkind == VKind::kTensor) {
          auto it = tensor_tan_.find(s);
          a.derivative = it != tensor_tan_.end() ? it->second : Value();
        } else {
          a.derivative = ScalarValue(adj_.Get(s), Cls(l).f->vkind == VKind::kF32);
        }
      }
      continue;
    }
    if (varied_.Get(a.id)) {
      Loc l = Locate(a.id);
      a.derivative = AdjointValue(varied_.Rank(a.id), l, /*take=*/true);
      if (a.value.kind() == VKind::kTuple) a.derivative = WithZeros(a.derivative, a.value, 0);
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
        bool closer = IsCloser(ok.f->kind);
        NodeId m = closer ? RootMarkerOfRuledCloser(ol, origin) : origin;
        const ClassInfo& mk = Cls(Locate(m));
        return MissingRule(m, mk, mk.f->op, mk.f->n_operands);
      }
      if (k.f->vkind == VKind::kTensor) {
        auto it = tensor_tan_.find(s);
        if (it != tensor_tan_.end()) {
          out->tangent = it->second;
        } else {
          out->tangent = AdjointValue(~uint64_t{0}, l, false);
        }
      } else {
        out->tangent = ScalarValue(adj_.Get(s), k.f->vkind == VKind::kF32);
      }
    } else if (k.f->vkind != VKind::kTensor) {
      out->tangent = ScalarValue(0.0, k.f->vkind == VKind::kF32);
    } else {
      out->tangent = AdjointValue(~uint64_t{0}, l, false);
    }
  }
  return Status::Ok();
}

}  // namespace irt::internal::grad
