// Streaming structural diff: the driver and the comparison of matched
// nodes. Both traces are walked forward once with an explicit stack of
// frames, one per pair of matched open calls; diff_align.cc reads and
// matches each frame's children. Matched nested calls are descended into;
// unmatched ones are reported as whole subtrees. What is found goes to a
// DiffSink (diff_sink.cc), which alone knows the output format. Nothing
// recurses on trace data.
//
// Positions (@k) of printed nodes are resolved by walking back over the
// body from the printed node (hopping over nested bodies through their
// closers), helped by a checkpoint every kCheckpointEvery children, so a
// frame holds no per-child state.
#include "irt/diff.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <set>

#include "analyses/diff_walk.h"
#include "irt/graph.h"

namespace irt {

namespace internal::diff {

namespace {

std::string Producer(const Trace& t) {
  std::string p(t.producer_name());
  if (!t.producer_version().empty()) {
    p += ' ';
    p += t.producer_version();
  }
  return p;
}

// ------------------------------------------------------------ value comparison

bool DoublesClose(double a, double b, const Tolerance& tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b);
}

double AbsDiff(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (!std::isfinite(a) || !std::isfinite(b)) return a == b ? 0 : INFINITY;
  return std::fabs(a - b);
}

bool IsFloatDType(DType d) { return d == DType::kF64 || d == DType::kF32; }

ValueDiff CompareValues(const Value& a, const Value& b, const Tolerance& tol) {
  ValueDiff r;
  if (a.kind() != b.kind()) {
    r.equal = false;
    return r;
  }
  switch (a.kind()) {
    case VKind::kF64:
    case VKind::kF32: {
      double x = a.to_double(), y = b.to_double();
      r.numeric = true;
      r.equal = tol.exact() ? a.bits() == b.bits() : DoublesClose(x, y, tol);
      if (!r.equal) r.max_abs = AbsDiff(x, y);
      return r;
    }
    case VKind::kI64:
      r.numeric = true;
      r.equal = a.bits() == b.bits();
      if (!r.equal) r.max_abs = AbsDiff(a.to_double(), b.to_double());
      return r;
    case VKind::kTensor: {
      const Tensor& s = a.tensor();
      const Tensor& t = b.tensor();
      if (s.dtype != t.dtype || s.shape != t.shape) {
        r.equal = false;
        return r;
      }
      r.numeric = s.dtype != DType::kBool;
      r.tensor = true;
      r.numel = s.numel();
      int64_t arg = -1;
      size_t es = DTypeSize(s.dtype);
      for (int64_t i = 0; i < r.numel; ++i) {
        bool same;
        if (IsFloatDType(s.dtype) && !tol.exact()) {
          same = DoublesClose(s.at(i), t.at(i), tol);
        } else {
          same = std::memcmp(s.data.data() + i * es, t.data.data() + i * es, es) == 0;
        }
        if (same) continue;
        ++r.differing;
        double d = AbsDiff(s.at(i), t.at(i));
        if (arg < 0 || d > r.max_abs) {
          r.max_abs = d;
          arg = i;
        }
      }
      r.equal = r.differing == 0;
      if (arg >= 0) {
        r.where.assign(s.shape.size(), 0);
        int64_t rest = arg;
        for (size_t k = s.shape.size(); k-- > 0;) {
          int64_t dim = s.shape[k] > 0 ? s.shape[k] : 1;
          r.where[k] = rest % dim;
          rest /= dim;
        }
      }
      return r;
    }
    case VKind::kTuple: {
      // Iterative over nesting (bounded by the format, but kept flat anyway).
      // Items may share tuples (up to 2^24 leaves from a few tuples): a pair
      // of tuples met before is not compared again.
      std::vector<std::pair<const Value*, const Value*>> stack{{&a, &b}};
      std::set<std::pair<const void*, const void*>> seen;
      while (!stack.empty()) {
        auto [x, y] = stack.back();
        stack.pop_back();
        if (x->kind() != y->kind()) {
          r.equal = false;
          return r;
        }
        if (x->kind() == VKind::kTuple) {
          if (!seen.emplace(&x->tuple(), &y->tuple()).second) continue;
          if (x->tuple().size() != y->tuple().size()) {
            r.equal = false;
            return r;
          }
          for (size_t i = 0; i < x->tuple().size(); ++i) {
            stack.emplace_back(&x->tuple()[i], &y->tuple()[i]);
          }
        } else {
          ValueDiff d = CompareValues(*x, *y, tol);
          if (!d.equal) {
            r.equal = false;
            return r;
          }
        }
      }
      return r;
    }
    default:
      r.equal = BitEqual(a, b);
      return r;
  }
}

bool ScalarVKind(VKind k) { return static_cast<uint8_t>(k) <= static_cast<uint8_t>(VKind::kF32); }

}  // namespace

Key KeyOf(const NodeView& v) {
  Key k;
  k.kind = v.kind();
  Location l = v.location();
  k.block = l.block;
  k.pos = l.pos;
  if (k.kind == NodeKind::kJump) {
    k.aux = v.jump_target();
    k.flags = static_cast<uint8_t>((v.has_condition() ? 1 : 0) | (v.taken_when() ? 2 : 0));
  } else if (k.kind == NodeKind::kArgument) {
    k.aux = v.block_arg_index();
  }
  k.op = v.op();
  return k;
}

Differ::Differ(const Trace& a, const Trace& b, const DiffOptions& o) : o_(o) {
  t_[0] = &a;
  t_[1] = &b;
  for (int k = 0; k < 2; ++k) {
    raw_[k] = std::make_unique<RawNodes>(*t_[k]);
    raw_ref_[k] = std::make_unique<RawNodes>(*t_[k]);
    behind_[k].emplace(*t_[k], internal::LeaveBehind::kForward, 0);
  }
  tol_.rtol = o.rtol;
  tol_.atol = o.atol;
  fo_.max_elements = o.max_elements;
  ignore_.insert(o.ignore_meta.begin(), o.ignore_meta.end());
  notation_.format = fo_;
  notation_.ignore_meta = &ignore_;
  sink_ = MakeDiffSink(o_, a, b, *this);
}

// The first disagreement of the walk: the fronts of f's buffers. When one
// of them is a conditional jump, its condition and the node of the same
// statement on the other side (the latest one before the divergence).
Status Differ::RecordDivergence(Frame& f) {
  Extra& x = *f.x;
  Item fr[2] = {x.ahead[0].front(), x.ahead[1].front()};
  for (int s = 0; s < 2; ++s) {
    if (x.ahead[s].size() == 1) IRT_RETURN_IF_ERROR(Resolve(f, s, x.ahead[s].front()));
    fr[s] = x.ahead[s].front();
  }
  DiffDivergence d;
  d.path_a = NodePath(f, 0, fr[0].pos);
  d.path_b = NodePath(f, 1, fr[1].pos);
  IRT_RETURN_IF_ERROR(AppendLine(d.line_a, 0, f, fr[0]));
  IRT_RETURN_IF_ERROR(AppendLine(d.line_b, 1, f, fr[1]));
  for (int s = 0; s < 2 && !d.has_condition; ++s) {
    IRT_ASSIGN_OR_RETURN(NodeView j, Node(s, fr[s].id));
    if (j.kind() != NodeKind::kJump || !j.has_condition()) continue;
    Operand c = j.operand(j.num_operands() - 1);
    d.has_condition = true;
    Value* mine = s == 0 ? &d.cond_a : &d.cond_b;
    Value* theirs = s == 0 ? &d.cond_b : &d.cond_a;
    std::string* my_path = s == 0 ? &d.cond_path_a : &d.cond_path_b;
    std::string* their_path = s == 0 ? &d.cond_path_b : &d.cond_path_a;
    if (!c.is_ref) {
      *mine = c.literal;
      *my_path = "⟨" + FormatValue(c.literal, fo_) + "⟩";
      continue;
    }
    IRT_ASSIGN_OR_RETURN(NodeView cv, Node(s, c.ref));
    *mine = cv.value();
    IRT_ASSIGN_OR_RETURN(int64_t cp, PositionOf(s, f, c.ref, fr[s].id, fr[s].pos));
    *my_path = cp >= 0 ? NodePath(f, s, static_cast<uint64_t>(cp)) : "#" + std::to_string(c.ref);
    // The same statement on the other side: walk back from its front.
    int o = 1 - s;
    Key want = KeyOf(cv);
    IRT_ASSIGN_OR_RETURN(auto prev, PrevChildren(o, f, fr[o], kConditionSearch, false));
    for (const Item& it : prev) {
      if (it.key == want) {
        IRT_ASSIGN_OR_RETURN(NodeView ov, Node(o, it.id));
        *theirs = ov.value();
        *their_path = NodePath(f, o, it.pos);
        break;
      }
    }
  }
  sum_.divergence = std::move(d);
  return Status::Ok();
}

// ------------------------------------------------------------ comparing

Result<Key> Differ::RefKey(int s, NodeId ref) {
  IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, ref));
  if (IsCloser(v.kind())) {
    IRT_ASSIGN_OR_RETURN(NodeView m, Node(s, v.closes()));
    return KeyOf(m);
  }
  return KeyOf(v);
}

Status Differ::CompareOperands(NodeView& va, NodeView& vb, bool* differ) {
  *differ = false;
  size_t n = va.num_operands();
  if (n != vb.num_operands()) {
    *differ = true;
    return Status::Ok();
  }
  for (size_t i = 0; i < n; ++i) {
    Operand p = va.operand(i), q = vb.operand(i);
    if (p.is_ref != q.is_ref) {
      *differ = true;
      return Status::Ok();
    }
    if (!p.is_ref) {
      if (!CompareValues(p.literal, q.literal, tol_).equal) {
        *differ = true;
        return Status::Ok();
      }
      continue;
    }
    // References agree when they name nodes of the same statement (for a
    // call's result, the call's, not the return statement that ended it).
    IRT_ASSIGN_OR_RETURN(Key ka, RefKey(0, p.ref));
    IRT_ASSIGN_OR_RETURN(Key kb, RefKey(1, q.ref));
    if (!(ka == kb)) {
      *differ = true;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status Differ::CompareMeta(const NodeView& va, const NodeView& vb, bool* differ) {
  *differ = false;
  std::vector<MetaEntry> ma = va.meta(), mb = vb.meta();
  if (ma.empty() && mb.empty()) return Status::Ok();
  auto drop = [&](std::vector<MetaEntry>& m) {
    m.erase(std::remove_if(m.begin(), m.end(),
                           [&](const MetaEntry& e) { return ignore_.count(e.key) != 0; }),
            m.end());
  };
  drop(ma);
  drop(mb);
  if (ma.size() != mb.size()) {
    *differ = true;
    return Status::Ok();
  }
  for (size_t i = 0; i < ma.size(); ++i) {
    if (ma[i].key != mb[i].key || !CompareValues(ma[i].value, mb[i].value, tol_).equal) {
      *differ = true;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

bool Differ::RawRefKey(int s, NodeId ref, Key* out) {
  RawNodes& rn = *raw_ref_[s];
  if (!rn.At(ref)) return false;
  Key k = rn.KeyHere();
  if (IsCloser(k.kind)) {
    if (!rn.At(rn.node().closes())) return false;
    k = rn.KeyHere();
  }
  *out = k;
  return true;
}

bool Differ::FastEqual(NodeId a, NodeId b) {
  RawNodes& ra = *raw_[0];
  RawNodes& rb = *raw_[1];
  if (!ra.At(a) || !rb.At(b)) return false;
  const internal::RawNode& na = ra.node();
  const internal::RawNode& nb = rb.node();
  const internal::ClassFacts& ca = na.cls();
  const internal::ClassFacts& cb = nb.cls();
  if (ca.vkind != cb.vkind || !ScalarVKind(ca.vkind) || ca.n_operands != cb.n_operands) {
    return false;
  }
  if (na.bits() != nb.bits()) return false;
  if (ca.vkind == VKind::kBool && na.bits() > 1) return false;  // let the check say
  if (na.chunk().has_meta || nb.chunk().has_meta) return false;
  uint32_t ka = 0, kb = 0;
  for (uint32_t j = 0; j < ca.n_operands; ++j) {
    uint32_t oa = na.operand_code(j), ob = nb.operand_code(j);
    if ((oa == 0) != (ob == 0)) return false;
    if (oa != 0) {
      const internal::ValueRec& la = na.chunk().literal_rec(oa);
      const internal::ValueRec& lb = nb.chunk().literal_rec(ob);
      if (la.vkind != lb.vkind || !ScalarVKind(static_cast<VKind>(la.vkind)) ||
          la.bits != lb.bits) {
        return false;
      }
      continue;
    }
    NodeId ta = na.ref(ka++), tb = nb.ref(kb++);
    Key x, y;
    if (!RawRefKey(0, ta, &x) || !RawRefKey(1, tb, &y) || !(x == y)) return false;
  }
  return true;
}

Status Differ::CompareMatched(Frame& f, const Item& a, const Item& b) {
  ++sum_.matched;
  if (FastEqual(a.id, b.id)) return sink_->Equal(f, a);
  IRT_ASSIGN_OR_RETURN(NodeView va, Node(0, a.id));
  IRT_ASSIGN_OR_RETURN(NodeView vb, Node(1, b.id));
  ValueDiff vd;
  if (va.vkind() == VKind::kTensor && vb.vkind() == VKind::kTensor) {
    const TensorPair pair{t_[0]->chunk_of(a.id), va.bits(), t_[1]->chunk_of(b.id), vb.bits()};
    if (!(pair == last_pair_)) {
      last_pair_diff_ = CompareValues(va.value(), vb.value(), tol_);
      last_pair_ = pair;
    }
    vd = last_pair_diff_;
  } else if (va.vkind() != VKind::kNone || vb.vkind() != VKind::kNone) {
    vd = CompareValues(va.value(), vb.value(), tol_);
  }
  bool ops = false, meta = false;
  IRT_RETURN_IF_ERROR(CompareOperands(va, vb, &ops));
  IRT_RETURN_IF_ERROR(CompareMeta(va, vb, &meta));
  if (vd.equal && !ops && !meta) return sink_->Equal(f, a);
  std::string what;
  if (!vd.equal) {
    ++sum_.changed_values;
    if (vd.numeric) sum_.max_abs_diff = std::max(sum_.max_abs_diff, vd.max_abs);
    what = "value";
  }
  if (ops) {
    ++sum_.changed_operands;
    what += what.empty() ? "operands" : ",operands";
  }
  if (meta) {
    ++sum_.changed_meta;
    what += what.empty() ? "meta" : ",meta";
  }
  return sink_->Change(f, &a, &b, what.c_str(), vd.equal ? nullptr : &vd);
}

// A matched nested call has been walked: its line in the parent, with the
// result taken from its closer (whose own change was counted inside).
Status Differ::CallDone(Frame& parent, const Frame& child) {
  Item a, b;
  for (int s = 0; s < 2; ++s) {
    Side& side = parent.s[s];
    if (side.next == kNoNode) side.next = child.s[s].end + 1;
    side.last_end = child.s[s].end;
    Item& it = s == 0 ? a : b;
    it.id = child.s[s].call;
    it.end = child.s[s].end;
    it.pos = child.s[s].pos_in_parent;
    IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, it.id));
    it.key = KeyOf(v);
  }
  IRT_ASSIGN_OR_RETURN(NodeView va, Node(0, a.id));
  IRT_ASSIGN_OR_RETURN(NodeView vb, Node(1, b.id));
  bool ops = false, meta = false;
  IRT_RETURN_IF_ERROR(CompareOperands(va, vb, &ops));
  IRT_RETURN_IF_ERROR(CompareMeta(va, vb, &meta));
  IRT_ASSIGN_OR_RETURN(NodeView ea, Node(0, a.end));
  IRT_ASSIGN_OR_RETURN(NodeView eb, Node(1, b.end));
  bool result_differs =
      ea.kind() != eb.kind() || !CompareValues(ea.value(), eb.value(), tol_).equal;
  if (!ops && !meta && !result_differs) return sink_->Equal(parent, a);
  std::string what;
  if (ops) {
    ++sum_.changed_operands;
    what = "operands";
  }
  if (meta) {
    ++sum_.changed_meta;
    what += what.empty() ? "meta" : ",meta";
  }
  if (result_differs) what += what.empty() ? "result" : ",result";
  return sink_->Change(parent, &a, &b, what.c_str(), nullptr);
}

Status Differ::OnlyOne(Frame& f, int s, const Item& it) {
  uint64_t nodes = it.end - it.id + 1;
  if (s == 0) {
    ++sum_.only_a_children;
    sum_.only_a_nodes += nodes;
    if (it.is_call()) ++sum_.only_a_calls;
  } else {
    ++sum_.only_b_children;
    sum_.only_b_nodes += nodes;
    if (it.is_call()) ++sum_.only_b_calls;
  }
  return sink_->Change(f, s == 0 ? &it : nullptr, s == 1 ? &it : nullptr,
                       s == 0 ? "only_a" : "only_b", nullptr);
}

// ------------------------------------------------------------ printing

std::string Differ::FramePath(const Frame& f, int s) const {
  std::string p;
  for (size_t i = 1; i <= Index(f); ++i) {
    p += i == 1 ? "@" : "/@";
    AppendU(p, stack_[i].s[s].pos_in_parent + 1);
  }
  return p;
}

std::string Differ::NodePath(const Frame& f, int s, uint64_t pos) const {
  std::string p = FramePath(f, s);
  p += p.empty() ? "@" : "/@";
  AppendU(p, pos + 1);
  return p;
}

// The position of `ref` among f's children (-1 if it is not one of them),
// walking back from the child at (from, from_pos) or from a checkpoint.
Result<int64_t> Differ::PositionOf(int s, const Frame& f, NodeId ref, NodeId from,
                                   uint64_t from_pos) {
  NodeId call = f.s[s].call;
  if (ref <= call || ref > from) return int64_t{-1};
  NodeId i = from;
  uint64_t p = from_pos;
  Positions* known = f.checkpoints[s].get();
  if (known != nullptr) {
    const auto& found = known->found[ref % Positions::kFoundSlots];
    if (found.first == ref) return static_cast<int64_t>(found.second);
    const auto& cps = known->every;
    auto it = std::lower_bound(cps.begin(), cps.end(), std::make_pair(ref, uint64_t{0}));
    if (it != cps.end() && it->first < i) {
      i = it->first;
      p = it->second;
    }
  }
  const uint64_t start = p;
  bool closer_hit = false;  // ref is the closer or the marker of a nested call
  while (i > ref && !closer_hit) {
    NodeId prev = i - 1;
    if (prev == call || p == 0) return int64_t{-1};
    // The walk back reads many nodes: through the column reader.
    RawNodes& rn = *raw_ref_[s];
    NodeKind kind;
    NodeId m = kNoNode;
    if (rn.At(prev)) {
      kind = rn.node().kind();
      if (IsCloser(kind)) m = rn.node().closes();
    } else {
      IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, prev));
      kind = v.kind();
      if (IsCloser(kind)) m = v.closes();
    }
    --p;
    if (IsCloser(kind)) {
      closer_hit = ref == prev || ref == m;
      if (!closer_hit && ref > m) return int64_t{-1};  // inside a nested body
      i = m;
    } else {
      i = prev;
    }
  }
  if (!closer_hit && i != ref) return int64_t{-1};
  if (known != nullptr && start - p > Positions::kFarWalk) {
    known->found[ref % Positions::kFoundSlots] = {ref, p};
  }
  return static_cast<int64_t>(p);
}

// One node in irt-print's notation, relative to f's body.
Status Differ::AppendLine(std::string& out, int s, const Frame& f, const Item& it) {
  NodeId id = it.id;
  uint64_t pos = it.pos;
  IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, id));
  auto name = [&](std::string& o, NodeId ref) -> Status {
    IRT_ASSIGN_OR_RETURN(int64_t p, PositionOf(s, f, ref, id, pos));
    if (p < 0) return NameById(o, ref);
    o += '@';
    AppendU(o, static_cast<uint64_t>(p) + 1);
    return Status::Ok();
  };
  return AppendNodeLine(out, *t_[s], v, pos, it.end, name, notation_);
}

Result<std::vector<Item>> Differ::PrevChildren(int s, const Frame& f, const Item& from,
                                               uint64_t count, bool inclusive) {
  NodeId id = from.id, end = from.end;
  uint64_t pos = from.pos;
  std::vector<Item> out;
  NodeId call = f.s[s].call;
  if (inclusive && id != kNoNode) {
    IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, id));
    out.push_back({id, end, pos, KeyOf(v)});
  }
  NodeId i = id;
  uint64_t p = pos;
  while (out.size() < count && i != kNoNode && i > call + 1 && p > 0) {
    NodeId prev = i - 1;
    IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, prev));
    --p;
    Item it;
    if (IsCloser(v.kind()) && v.closes() != call) {
      NodeId m = v.closes();
      IRT_ASSIGN_OR_RETURN(NodeView mv, Node(s, m));
      it = {m, prev, p, KeyOf(mv)};
      i = m;
    } else {
      it = {prev, prev, p, KeyOf(v)};
      i = prev;
    }
    out.push_back(it);
  }
  return out;
}

// ------------------------------------------------------------ driver

// Trace-level metadata, by key.
Status Differ::CompareTraceMeta() {
  auto ma = t_[0]->trace_meta(), mb = t_[1]->trace_meta();
  std::set<std::string> keys;
  for (const auto& e : ma) keys.insert(std::string(e.key));
  for (const auto& e : mb) keys.insert(std::string(e.key));
  auto find = [](const std::vector<MetaEntry>& m, const std::string& k) -> const Value* {
    for (const auto& e : m) {
      if (e.key == k) return &e.value;
    }
    return nullptr;
  };
  for (const std::string& k : keys) {
    if (ignore_.count(k)) continue;
    const Value* x = find(ma, k);
    const Value* y = find(mb, k);
    if (x && y && CompareValues(*x, *y, tol_).equal) continue;
    ++sum_.changed_trace_meta;
    IRT_RETURN_IF_ERROR(sink_->TraceMeta(k, x, y));
  }
  return Status::Ok();
}

// The root call itself: its arguments, metadata and result.
Status Differ::CompareRoots(const NodeId ends[2]) {
  ++sum_.matched;
  IRT_ASSIGN_OR_RETURN(NodeView va, Node(0, 0));
  IRT_ASSIGN_OR_RETURN(NodeView vb, Node(1, 0));
  bool ops = false, meta = false;
  IRT_RETURN_IF_ERROR(CompareOperands(va, vb, &ops));
  IRT_RETURN_IF_ERROR(CompareMeta(va, vb, &meta));
  if (va.op() != vb.op()) ops = true;
  if (ops) ++sum_.changed_operands;
  if (meta) ++sum_.changed_meta;
  std::string la, lb;
  IRT_RETURN_IF_ERROR(AppendRootCallLine(la, *t_[0], va, ends[0], notation_));
  IRT_RETURN_IF_ERROR(AppendRootCallLine(lb, *t_[1], vb, ends[1], notation_));
  return sink_->RootCall(la, lb,
                         ops && meta ? "operands,meta"
                         : ops       ? "operands"
                         : meta      ? "meta"
                                     : "");
}

void Differ::ReleaseBehind(const Frame& f) {
  for (int s = 0; s < 2; ++s) {
    const NodeId next = f.s[s].next;
    if (next == kNoNode || next >= t_[s]->size()) continue;
    behind_[s]->In(t_[s]->chunk_of(next));
  }
}

Result<DiffSummary> Differ::Run(Output& out) {
  sum_.nodes_a = t_[0]->size();
  sum_.nodes_b = t_[1]->size();
  NodeId ends[2];
  for (int s = 0; s < 2; ++s) {
    IRT_ASSIGN_OR_RETURN(Child root, RootCall(*t_[s]));
    if (root.end == kNoNode) return DataError(t_[s]->name() + ": the root call is not closed");
    ends[s] = root.end;
  }
  IRT_RETURN_IF_ERROR(CompareTraceMeta());
  IRT_RETURN_IF_ERROR(CompareRoots(ends));
  Frame root;
  for (int s = 0; s < 2; ++s) {
    root.s[s].call = 0;
    root.s[s].next = 1;
  }
  root.serial = next_serial_++;
  stack_.push_back(std::move(root));
  while (!stack_.empty()) {
    Frame& f = stack_.back();
    ReleaseBehind(f);
    IRT_ASSIGN_OR_RETURN(Op op, NextOp(f));
    switch (op.type) {
      case OpType::kDone: {
        Frame done = std::move(stack_.back());
        stack_.pop_back();
        if (!stack_.empty()) IRT_RETURN_IF_ERROR(CallDone(stack_.back(), done));
        break;
      }
      case OpType::kMatch:
        if (op.a.is_call()) {
          ++sum_.matched;
          Frame child;
          for (int s = 0; s < 2; ++s) {
            const Item& it = s == 0 ? op.a : op.b;
            child.s[s].call = it.id;
            child.s[s].next = it.id + 1;
            child.s[s].pos_in_parent = it.pos;
          }
          child.serial = next_serial_++;
          stack_.push_back(std::move(child));  // f is invalid from here
        } else {
          IRT_RETURN_IF_ERROR(CompareMatched(f, op.a, op.b));
        }
        break;
      case OpType::kOnlyA:
        IRT_RETURN_IF_ERROR(OnlyOne(f, 0, op.a));
        break;
      case OpType::kOnlyB:
        IRT_RETURN_IF_ERROR(OnlyOne(f, 1, op.b));
        break;
    }
  }
  sum_.producer_a = Producer(*t_[0]);
  sum_.producer_b = Producer(*t_[1]);
  IRT_RETURN_IF_ERROR(sink_->Finish(sum_, out));
  return sum_;
}

}  // namespace internal::diff

Result<DiffSummary> DiffTraces(const Trace& a, const Trace& b, const DiffOptions& options,
                               Output& out) {
  if (!(options.rtol >= 0) || !(options.atol >= 0)) {
    return UsageError("--rtol and --atol must be non-negative numbers");
  }
  if (options.max_edits == 0 || options.max_lookahead < 2) {
    return UsageError("the alignment budget must be positive");
  }
  // The walk reads both traces whole, in order: check and decode their
  // chunks on other cores meanwhile, and give back the decoded columns of
  // the chunks it has left (Differ::Run).
  a.UseTransientColumns();
  b.UseTransientColumns();
  a.VerifyAhead();
  b.VerifyAhead();
  internal::diff::Differ d(a, b, options);
  return d.Run(out);
}

}  // namespace irt
