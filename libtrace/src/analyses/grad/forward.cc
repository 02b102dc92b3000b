// The forward pass: checks the nesting of calls, marks the active nodes
// and, in forward mode, computes each active node's tangent from the
// forward program of its rule.
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

Status GradEngine::StructuralNode(ChunkView* cv, uint32_t local, NodeId id, const ClassInfo& k,
                                  bool forward_mode, bool choose_all, OpenCalls& open,
                                  uint32_t& ruled_depth, uint64_t& root_children) {
  const uint32_t* r = cv->refs + cv->nodes[local].first_ref;
  uint64_t bits = cv->nodes[local].value;
  if (id == 0 && k.f->kind != NodeKind::kCall) {
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
      GrowStack(open);
      open.push_back({id, ru});
      return Status::Ok();
    }
    case Cat::kError:
      return Fail(id, "the trace records a failed run (an Error node); it has no derivative");
    case Cat::kReturn: {
      NodeId m = id - r[k.f->n_refs];
      if (open.empty() || open.back().marker != m) {
        return Fail(id, "closes node " + std::to_string(m) + ", not the innermost open call");
      }
      if (k.f->n_operands != 1) return Fail(id, "a return needs one operand");
      OpenCall top = open.back();
      open.pop_back();
      if (top.rule != nullptr) {
        --ruled_depth;
        if (ruled_depth == 0 && IsFloatValue(*cv, k.f->vkind, bits)) {
          marker = m;
          rule = top.rule;
          Loc ml = Locate(m);
          Operands(ml, m, &ops_);
          for (const OperandVal& o : ops_) v = v || o.varied;
        }
        break;
      }
      if (ruled_depth > 0 || k.ref_index[0] < 0) return Status::Ok();
      v = varied_.Get(id - r[0]) && MayHoldFloats(*cv, k.f->vkind, bits);
      break;
    }
    case Cat::kRootArg: {
      if (ruled_depth > 0) return Status::Ok();
      if (open.size() != 1) return Status::Ok();  // a nested argument whose actual was a literal
      ArgumentDerivative a;
      a.pos = static_cast<uint32_t>(root_children);
      a.id = id;
      a.location = Location{k.f->block, k.f->pos, false, k.f->line, k.f->col};
      a.value = RootArgumentValue(*cv->c, bits, k.f->vkind);
      if (a.value.kind() == VKind::kTensor &&
          decoded_bytes_ + a.value.tensor().data.size() <= kDecodedBudget &&
          decoded_.emplace(DecodedKey{cv->c->index, bits}, a.value).second) {
        decoded_bytes_ += a.value.tensor().data.size();
      }
      a.differentiable = IsFloatValue(*cv, k.f->vkind, bits) ||
                         (k.f->vkind == VKind::kTuple && HoldsFloat(a.value));
      bool picked = a.pos < chosen_.size() && chosen_[a.pos];
      a.chosen = picked || (choose_all && k.f->vkind != VKind::kFunction);
      v = a.chosen && a.differentiable;
      args_.push_back(std::move(a));
      break;
    }
    case Cat::kFuncArg:
      if (ruled_depth > 0) return Status::Ok();
      v = varied_.Get(id - r[0]) && MayHoldFloats(*cv, k.f->vkind, bits);
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

// ForwardTangent's common case, inline and without allocation: a primitive
// with a real scalar result whose forward program, compiled before for the
// same operands with tangents, reads only real scalars, or reads one
// element of a Float64 tangent at integer indices (getindex's). Returns
// false, having changed nothing, to leave the node to ForwardTangent, which
// handles (and reports) everything else.
[[gnu::always_inline]] inline bool GradEngine::FastForward(const Loc& l, NodeId id,
                                                           const ClassInfo& k) {
  constexpr size_t kMaxArity = 8;
  constexpr int32_t kMaxRegs = 48;
  const Program* prog = k.fwd.prog;
  const size_t arity = k.f->n_operands;
  const bool element = prog != nullptr && !prog->scalar && prog->element_of >= 0;
  if (prog == nullptr || (!prog->scalar && !element) || arity > kMaxArity ||
      prog->num_regs > kMaxRegs || prog->outputs[0] == kZeroReg) {
    return false;
  }
  double regs[kMaxRegs];
  double tangent[kMaxArity];
  uint64_t slots[kMaxArity];
  VKind kinds[kMaxArity];
  uint64_t bits[kMaxArity];
  uint64_t real = k.lit_real, mask = 0;
  const internal::NodeRec& nd = l.cv->nodes[l.local];
  const uint32_t* r = l.cv->refs + nd.first_ref;
  for (size_t j = 0; j < arity; ++j) {
    const int32_t ri = k.ref_index[j];
    if (ri < 0) {
      const internal::ValueRec& lit = l.cv->literals[l.cv->operands[k.f->first_operand + j] - 1];
      kinds[j] = static_cast<VKind>(lit.vkind);
      bits[j] = lit.bits;
      regs[j] = k.lit_val[j];
      continue;
    }
    const NodeId t = id - r[ri];
    const Loc tl = Locate(t);
    const internal::NodeRec& tn = tl.cv->nodes[tl.local];
    kinds[j] = tl.cv->facts[tn.cls].vkind;
    bits[j] = tn.value;
    regs[j] = 0.0;
    if (ScalarDouble(kinds[j], bits[j], &regs[j])) real |= uint64_t{1} << j;
    if (!varied_.Get(t)) continue;
    const uint64_t ts = varied_.Rank(t);
    if (poisoned_.Get(ts) || (!((real >> j) & 1) && !(element && kinds[j] == VKind::kTensor))) {
      return false;
    }
    if (!k.rule->Differentiates(j)) continue;
    slots[j] = ts;
    tangent[j] = adj_.Get(ts);
    mask |= uint64_t{1} << j;
  }
  if (mask == 0 || mask != k.fwd.mask) return false;
  double out;
  if (element) {
    // An element of operand j's tangent, at operands that are integers.
    const size_t j = static_cast<size_t>(prog->element_of) - arity - 1;
    if (j >= arity || !((mask >> j) & 1) || kinds[j] != VKind::kTensor) return false;
    int64_t index[kMaxArity];
    const size_t ni = prog->element_index.size();
    if (ni > kMaxArity) return false;
    for (size_t q = 0; q < ni; ++q) {
      const size_t reg = static_cast<size_t>(prog->element_index[q]);
      if (reg >= arity || (kinds[reg] != VKind::kI64 && kinds[reg] != VKind::kBool)) return false;
      index[q] = static_cast<int64_t>(bits[reg]);
    }
    auto it = tensor_tan_.find(slots[j]);
    if (it == tensor_tan_.end() ||
        !ElementF64(it->second.tensor(), std::span<const int64_t>(index, ni), &out)) {
      return false;
    }
  } else {
    for (size_t j = 0; j < arity; ++j) {
      if (prog->reads[j] && !((real >> j) & 1)) return false;
    }
    ScalarDouble(k.f->vkind, nd.value, &regs[arity]);  // y_real: a real scalar
    for (int32_t q = static_cast<int32_t>(arity) + 1; q < prog->num_regs; ++q) regs[q] = 0.0;
    for (size_t j = 0; j < arity; ++j) {
      if ((mask >> j) & 1) regs[arity + 1 + j] = tangent[j];
    }
    internal::RunScalar(*prog, regs);
    out = regs[prog->souts[0]];
  }
  ++stats_.rule_applications;
  const uint64_t slot = n_active_ - 1;
  adj_.Grow(slot + 1);
  adj_[slot] = out;
  return true;
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

  OpenCalls open;
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
    Trim();
    const internal::NodeRec* nodes = cv->nodes;
    const uint32_t* refs = cv->refs;
    const ClassInfo* classes = cv->classes.data();
    const uint8_t* inert = cv->inert.data();  // one byte per class: most nodes are inert
    const internal::ClassFacts* facts = cv->facts;
    const uint64_t nclasses = cv->classes.size();
    const NodeId base = cv->base;
    const uint32_t count = cv->n;
    uint64_t* words = varied_.data();
    uint64_t active = n_active_;
    // Whether a node is the root's child, and their count, in registers:
    // only StructuralNode opens and closes calls.
    bool at_root = open.size() == 1;
    uint64_t children = root_children;
    if (ci == 0 && count > 0 &&
        (nodes[0].cls >= nclasses || classes[nodes[0].cls].f->kind != NodeKind::kCall)) {
      return Fail(0, "the first node must open the root call");
    }
    for (uint32_t local = 0; local < count; ++local) {
      const NodeId id = base + local;
      if ((id & 63) == 0) varied_.Advance(id);
      // View() verified the chunk: every node's class, references and value
      // indices are in range (internal::CheckNodes).
      const internal::NodeRec& nd = nodes[local];
      if (inert[nd.cls]) {
        children += at_root;
        continue;
      }
      const ClassInfo& k = classes[nd.cls];
      Trim();  // no Loc is held from node to node
      const uint32_t* r = refs + nd.first_ref;
      bool v = false;
      switch (k.cat) {
        case Cat::kInert:
          continue;
        case Cat::kPrim: {
          children += at_root;
          if (ruled_depth > 0) continue;
          const internal::ClassFacts& fc = facts[nd.cls];
          for (uint32_t j = 0; j < fc.n_refs; ++j) {
            NodeId t = id - r[j];
            if ((words[t >> 6] >> (t & 63)) & 1) {
              v = true;
              break;
            }
          }
          if (fc.vkind == VKind::kTensor) v = v && IsFloatValue(*cv, fc.vkind, nd.value);
          if (v && forward_mode) {
            words[id >> 6] |= uint64_t{1} << (id & 63);
            n_active_ = ++active;
            if (!k.fast || !FastForward(Loc{cv, local}, id, k)) {
              IRT_RETURN_IF_ERROR(ForwardTangent(Loc{cv, local}, id, k, kNoNode, k.rule));
            }
            cur_ = cv;
            continue;
          }
          break;
        }
        case Cat::kBlockArg: {
          children += at_root;
          if (ruled_depth > 0) continue;
          if (k.f->n_operands != 1 || k.ref_index[0] < 0) {
            return Fail(id, "a block argument must reference the jump that set it");
          }
          const NodeId jid = id - r[0];
          Loc j = jid >= base ? Loc{cv, static_cast<uint32_t>(jid - base)} : Locate(jid);
          const internal::NodeRec& jn = j.cv->nodes[j.local];
          const ClassInfo& jk = j.cv->classes[jn.cls];
          if (jk.f->kind != NodeKind::kJump ||
              static_cast<int64_t>(k.f->aux) >
                  int64_t{jk.f->n_operands} - ((jk.f->flags & 1) ? 1 : 0)) {
            return Fail(id, "block argument " + std::to_string(k.f->aux) +
                                " does not name an operand of a jump");
          }
          const int32_t ri = jk.ref_index[k.f->aux - 1];
          if (ri < 0) continue;
          const NodeId t = jid - j.cv->refs[jn.first_ref + static_cast<uint32_t>(ri)];
          v = (words[t >> 6] >> (t & 63)) & 1;
          if (v && k.f->vkind == VKind::kTensor) v = IsFloatValue(*cv, k.f->vkind, nd.value);
          if (v && forward_mode) {
            words[id >> 6] |= uint64_t{1} << (id & 63);
            n_active_ = ++active;
            // A scalar passed on: its tangent is its source's (ForwardTangent
            // passes on a poisoned one and tensors).
            const uint64_t ts = varied_.Rank(t);
            if (k.f->vkind != VKind::kTensor && k.f->vkind != VKind::kTuple && !poisoned_.Get(ts)) {
              adj_.Grow(active);
              adj_[active - 1] = adj_.Get(ts);
            } else {
              IRT_RETURN_IF_ERROR(ForwardTangent(Loc{cv, local}, id, k, kNoNode, nullptr));
            }
            cur_ = cv;
            continue;
          }
          break;
        }
        default: {
          // Calls, returns, function arguments: the rare, structural cases.
          n_active_ = active;
          root_children = children;
          IRT_RETURN_IF_ERROR(StructuralNode(cv, local, id, k, forward_mode, choose_all, open,
                                             ruled_depth, root_children));
          children = root_children;
          at_root = open.size() == 1;
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
    root_children = children;
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

// Whether t can be the tangent of a tuple argument's item `arg`: nothing
// (zero), a number for a float, a tensor of the same shape for a float
// tensor, a tuple of as many fitting items for a tuple.
bool TangentFits(const Value& t, const Value& arg, int depth) {
  if (t.kind() == VKind::kNothing) return true;
  if (arg.kind() == VKind::kTuple) {
    if (t.kind() != VKind::kTuple || t.tuple().size() != arg.tuple().size() ||
        depth > 2 * internal::kMaxTupleDepth) {
      return false;
    }
    for (size_t i = 0; i < t.tuple().size(); ++i) {
      if (!TangentFits(t.tuple()[i], arg.tuple()[i], depth + 1)) return false;
    }
    return true;
  }
  if (arg.kind() == VKind::kF64 || arg.kind() == VKind::kF32) {
    return t.is_scalar() && t.kind() != VKind::kNone;
  }
  return arg.kind() == VKind::kTensor && t.kind() == VKind::kTensor &&
         t.tensor().shape == arg.tensor().shape && t.tensor().dtype == arg.tensor().dtype;
}

Result<bool> GradEngine::TupleForward(const Loc& l, NodeId id, uint64_t slot, const ClassInfo& k) {
  // The tangent of an operand as a value; Nothing for zero.
  auto tangent = [&](const OperandVal& o) -> Value {
    if (!o.varied) return Value::Nothing();
    const uint64_t ts = varied_.Rank(o.target);
    if (o.vkind == VKind::kTensor || o.vkind == VKind::kTuple) {
      auto it = tensor_tan_.find(ts);
      return it != tensor_tan_.end() ? it->second : Value::Nothing();
    }
    return ScalarValue(adj_.Get(ts), o.vkind == VKind::kF32);
  };
  if (k.tuple_op == ClassInfo::kTupleMake) {
    std::vector<Value> items;
    items.reserve(ops_.size());
    for (const OperandVal& o : ops_) items.push_back(tangent(o));
    tensor_tan_[slot] = Value::MakeTuple(std::move(items));
    return true;
  }
  if (k.tuple_op == ClassInfo::kTupleCat) {
    // cat(1, t1, t2, ...) of tuples: the operands' tangents joined.
    if (Cls(l).f->vkind != VKind::kTuple) return false;  // tensors': the rule
    std::vector<Value> items;
    for (size_t j = 1; j < ops_.size(); ++j) {
      const OperandVal& o = ops_[j];
      if (o.vkind != VKind::kTuple) {
        return InvalidArgument(NodeName(id) + ": joins a tuple with what is not one");
      }
      Value t = tangent(o);
      if (t.kind() == VKind::kTuple) {
        items.insert(items.end(), t.tuple().begin(), t.tuple().end());
      } else {
        items.resize(items.size() + static_cast<size_t>(o.chunk->tuple_size(o.bits)),
                     Value::Nothing());
      }
    }
    tensor_tan_[slot] = Value::MakeTuple(std::move(items));
    return true;
  }
  if (k.tuple_op == ClassInfo::kTupleCollect) {
    // collect(t): the vector of the items' tangents (0 where none).
    if (ops_.size() != 1 || ops_[0].vkind != VKind::kTuple) return true;
    const uint64_t bits = BitsOf(l);
    const DType dt = l.cv->c->tensor_dtype(bits);
    if (dt != DType::kF64 && dt != DType::kF32) return true;  // no float: no tangent
    Value t = tangent(ops_[0]);
    Tensor out = Tensor::Zeros(dt, l.cv->c->tensor_shape(bits));
    if (t.kind() == VKind::kTuple) {
      const std::vector<Value>& items = t.tuple();
      for (int64_t q = 0; q < out.numel() && static_cast<size_t>(q) < items.size(); ++q) {
        const Value& v = items[static_cast<size_t>(q)];
        if (!v.is_scalar() || v.kind() == VKind::kNothing) continue;
        if (dt == DType::kF64) {
          out.f64()[q] = v.to_double();
        } else {
          out.f32()[q] = static_cast<float>(v.to_double());
        }
      }
    }
    tensor_tan_[slot] = Value::MakeTensor(std::move(out));
    return true;
  }
  if (ops_.empty() || ops_[0].vkind != VKind::kTuple) return false;  // a tensor's: the rule
  if (k.tuple_op == ClassInfo::kTupleSlice) {
    Value t = tangent(ops_[0]);
    if (t.kind() != VKind::kTuple) return true;  // zero
    int64_t first = 0, step = 1, count = 0;
    IRT_RETURN_IF_ERROR(
        TupleSliceOf(id, ops_, static_cast<int64_t>(t.tuple().size()), &first, &step, &count));
    std::vector<Value> items;
    for (int64_t q = 0; q < count; ++q) items.push_back(t.tuple()[first + q * step]);
    tensor_tan_[slot] = Value::MakeTuple(std::move(items));
    return true;
  }
  if (ops_.size() != 2) return false;
  const OperandVal& o = ops_[1];
  if (o.vkind != VKind::kI64 && o.vkind != VKind::kBool) {
    return InvalidArgument(NodeName(id) + ": a tuple's index must be an integer");
  }
  Value t = tangent(ops_[0]);
  if (t.kind() != VKind::kTuple) return true;  // zero
  const int64_t n = static_cast<int64_t>(t.tuple().size());
  const int64_t i = TupleItemAt(k, o.bits, n);
  if (i < 0) return InvalidArgument(NodeName(id) + ": index out of bounds");
  const Value& item = t.tuple()[static_cast<size_t>(i)];
  const VKind yk = Cls(l).f->vkind;
  if (item.kind() == VKind::kNothing) return true;  // zero
  if (yk == VKind::kTensor || yk == VKind::kTuple) {
    tensor_tan_[slot] = item;
  } else if (item.is_scalar()) {
    adj_[slot] = item.to_double();
  } else {
    return InvalidArgument(NodeName(id) + ": a " + TypeName(item) + " tangent for a number");
  }
  return true;
}

Status GradEngine::ForwardTangent(const Loc& l, NodeId id, const ClassInfo& k, NodeId marker,
                                  const Rule* rule) {
  const internal::ClassFacts& kf = *k.f;
  uint64_t slot = n_active_ - 1;
  adj_.Grow(slot + 1);
  adj_[slot] = 0.0;
  auto poison = [&](NodeId origin) {
    poisoned_.Set(slot);
    poison_origin_[slot] = origin;
    adj_[slot] = std::nan("");
  };
  bool is_tensor = kf.vkind == VKind::kTensor;
  if (kf.kind == NodeKind::kArgument && marker == kNoNode && PassTarget(l, id) == kNoNode) {
    // A root argument: its tangent was given.
    for (const auto& [p, t] : opts_.tangents) {
      if (p != args_.back().pos) continue;
      const Value& arg = args_.back().value;
      if (arg.kind() == VKind::kTuple) {
        if (!TangentFits(t, arg, 0)) {
          return UsageError("the tangent of @" + std::to_string(p) + " must be a tuple like " +
                            TypeName(arg) + " (a number for a float item, a tensor of its " +
                            "shape for a tensor, nothing for none)");
        }
        tensor_tan_[slot] = t;
        continue;
      }
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
      (kf.kind == NodeKind::kArgument || kf.kind == NodeKind::kReturn)) {
    NodeId t = PassTarget(l, id);
    uint64_t ts = varied_.Rank(t);
    if (poisoned_.Get(ts)) {
      poison(poison_origin_[ts]);
      return Status::Ok();
    }
    if (is_tensor || kf.vkind == VKind::kTuple) {
      auto it = tensor_tan_.find(ts);
      if (it != tensor_tan_.end()) tensor_tan_[slot] = it->second;
    } else {
      adj_[slot] = adj_.Get(ts);
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
  if (marker == kNoNode && sk.tuple_op != ClassInfo::kNoTupleOp) {
    IRT_ASSIGN_OR_RETURN(bool done, TupleForward(l, id, slot, sk));
    if (done) return Status::Ok();
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
  if (scalar && prog->reads[arity]) scalar = ScalarDouble(kf.vkind, ybits, &yv);
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
      if ((mask >> j) & 1) scratch_[arity + 1 + j] = adj_.Get(varied_.Rank(ops_[j].target));
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
        vscratch_[arity + 1 + j] = ScalarValue(adj_.Get(ts), ops_[j].vkind == VKind::kF32);
      }
    }
  }
  if (prog->reads[arity]) vscratch_[arity] = DecodeAt(*l.cv->c, ybits, kf.vkind);
  bool f32 = kf.vkind == VKind::kF32 || (is_tensor && l.cv->c->tensor_dtype(ybits) == DType::kF32);
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

}  // namespace irt::internal::grad
