// Writing and listing a slice. Writing is a second, ascending pass over the
// kept nodes only; references are renumbered by rank queries over the
// kept-node bit sets.
#include <algorithm>
#include <bit>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analyses/slice_impl.h"
#include "graph/bits.h"
#include "io/column_reader.h"
#include "io/control_flow.h"
#include "io/leave_behind.h"
#include "irt/slice.h"
#include "irt/writer.h"

namespace irt {

namespace {

using internal::ColumnReader;
using internal::IsCloser;
using internal::PopCount;
using internal::RawNode;

}  // namespace

// ---------------------------------------------------------------- writing

namespace {

// Renumbering: the output holds the nodes of E = selected | context |
// referenced, in order, so a kept node's new id is its rank in E. Ranks of
// 512-node blocks are recorded as the ascending pass reaches them, and
// every reference points back to a block already passed.
class Renumber {
 public:
  explicit Renumber(const Slice::Impl& s) : s_(s) {}
  uint64_t Word(uint64_t w) const {
    return s_.selected.Word(w) | s_.context.Word(w) | s_.refd.Word(w);
  }
  // Advances the block table up to the block holding `id`.
  void Reach(NodeId id) {
    uint64_t block = id >> 9;
    while (blocks_.size() <= block) {
      uint64_t b = blocks_.size();
      uint64_t base = b == 0 ? 0 : blocks_.back() + BlockCount(b - 1);
      blocks_.push_back(base);
    }
  }
  bool Kept(NodeId id) const { return (Word(id >> 6) >> (id & 63)) & 1; }
  // Rank of `id` in E (valid once Reach(id) was called).
  uint64_t Rank(NodeId id) const {
    uint64_t block = id >> 9;
    uint64_t r = blocks_[block];
    for (uint64_t w = block * 8; w < (id >> 6); ++w) r += PopCount(Word(w));
    uint64_t mask = (id & 63) == 0 ? 0 : (~0ull >> (64 - (id & 63)));
    return r + PopCount(Word(id >> 6) & mask);
  }

 private:
  uint64_t BlockCount(uint64_t b) const {
    uint64_t n = 0;
    for (uint64_t w = b * 8; w < b * 8 + 8; ++w) n += PopCount(Word(w));
    return n;
  }
  const Slice::Impl& s_;
  std::vector<uint64_t> blocks_;
};

// Output classes: looked up by (input chunk, input class, role) first, and
// by content only on a miss, so equal classes of different chunks are
// defined once.
class ClassCache {
 public:
  explicit ClassCache(TraceWriter& w) : w_(w) {}
  // `chunk`, `cls` and `role` (0..3) name an input class and how it is written.
  template <typename F>
  ClassId Get(uint32_t chunk, uint32_t cls, uint32_t role, F&& make) {
    if (fast_.size() <= chunk) fast_.resize(chunk + 1);
    std::vector<ClassId>& v = fast_[chunk];
    size_t slot = static_cast<size_t>(cls) * 4 + role;
    if (v.size() <= slot) v.resize(slot + 1, kNoClass);
    if (v[slot] == kNoClass) v[slot] = Get(make());
    return v[slot];
  }
  ClassId Get(const ClassSpec& spec) {
    std::string key = std::to_string(static_cast<int>(spec.kind)) + "|" + spec.op + "|" +
                      std::to_string(spec.block) + "|" + std::to_string(spec.pos) + "|" +
                      std::to_string(spec.aux) + "|" + std::to_string(spec.line) + "|" +
                      std::to_string(spec.col) + "|" + (spec.has_condition ? "c" : "") +
                      (spec.condition_taken_when ? "t" : "");
    for (const OperandSpec& o : spec.operands) key += o.is_ref ? "|R" : "|L" + ValueKey(o.literal);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    ClassId id = w_.DefineClass(spec);
    ids_.emplace(std::move(key), id);
    return id;
  }

 private:
  TraceWriter& w_;
  std::unordered_map<std::string, ClassId> ids_;
  static constexpr ClassId kNoClass = ~0u;
  std::vector<std::vector<ClassId>> fast_;
};

// The spec of an original class; `keep_operands` false drops its operands.
ClassSpec SpecOf(const RawNode& n, bool keep_operands) {
  ClassSpec s;
  s.kind = n.kind();
  s.op = std::string(n.op());
  s.block = n.cls().block;
  s.pos = n.cls().pos;
  s.aux = n.cls().aux;
  s.line = n.cls().line;
  s.col = n.cls().col;
  s.has_condition = (n.cls().flags & 1) != 0;
  s.condition_taken_when = (n.cls().flags & 2) != 0;
  if (keep_operands) {
    for (uint32_t j = 0; j < n.cls().n_operands; ++j) {
      uint32_t o = n.operand_code(j);
      if (o == 0) {
        s.operands.push_back(OperandSpec::Ref());
      } else {
        s.operands.push_back(OperandSpec::Literal(n.chunk().literal(o)));
      }
    }
  }
  return s;
}

}  // namespace

Status WriteSliceTrace(const Trace& trace, const Slice& slice, Output& out) {
  const Slice::Impl& s = *slice.impl_;
  WriterOptions wo;
  wo.producer_name = "irt-slice";
  wo.producer_version = IRT_VERSION;
  TraceWriter writer(&out, wo);
  ClassCache classes(writer);
  ColumnReader reader(trace);
  Renumber ranks(s);
  std::unordered_map<std::string, bool> registered;
  std::unordered_set<uint64_t> registered_classes;
  std::vector<NodeId> refs;
  internal::ControlFlowIndex flows(trace);  // copied with each function kept
  // How a kept node is written, and which node its class comes from.
  enum Role : uint64_t { kAsIs = 0, kNoOperands = 1, kUnit = 2, kInput = 3 };
  auto class_for = [&](const RawNode& from, Role role) -> ClassId {
    return classes.Get(from.chunk_index(), from.class_index(), static_cast<uint32_t>(role), [&] {
      ClassSpec spec = SpecOf(from, role == kAsIs || role == kUnit);
      if (role == kNoOperands && spec.kind != NodeKind::kError) spec.aux = 0;
      if (role == kUnit) spec.kind = NodeKind::kPrimitive;
      if (role == kInput && !(spec.kind == NodeKind::kArgument && spec.aux == 0)) {
        // Kept as a Constant at its place; a function argument stays one.
        spec.kind = NodeKind::kConstant;
        spec.op.clear();
        spec.aux = 0;
        spec.has_condition = spec.condition_taken_when = false;
      }
      return spec;
    });
  };
  auto map_refs = [&](const RawNode& user) -> Status {
    for (uint32_t r = 0; r < user.num_refs(); ++r) {
      NodeId t = user.ref(r);
      if (!ranks.Kept(t)) {
        return Internal("slice: node " + std::to_string(user.id()) + " references node " +
                        std::to_string(t) + ", which is left out");
      }
      refs.push_back(ranks.Rank(t));
    }
    return Status::Ok();
  };
  auto copy_meta = [&](const RawNode& n) {
    if (!n.chunk().has_meta) return;
    for (const auto& [k, v] : n.meta()) writer.AddMeta(k, v);
  };
  uint64_t lo = std::min({s.selected.lo_word(), s.context.lo_word(), s.refd.lo_word()});
  uint64_t hi = std::max({s.selected.hi_word(), s.context.hi_word(), s.refd.hi_word()});
  internal::LeaveBehind behind(trace, internal::LeaveBehind::kForward,
                               std::min<NodeId>(lo * 64, trace.size() - 1));
  for (uint64_t w = lo; w < hi && writer.status().ok() && !out.failed(); ++w) {
    uint64_t bits = ranks.Word(w);
    while (bits != 0) {
      NodeId x = w * 64 + static_cast<uint64_t>(std::countr_zero(bits));
      bits &= bits - 1;
      ranks.Reach(x);
      behind.Step(x);
      RawNode n;
      IRT_RETURN_IF_ERROR(reader.Read(x, &n));
      NodeKind k = n.kind();
      bool sel = s.selected.Test(x);
      bool ctx = s.context.Test(x);
      refs.clear();
      if (ctx || (sel && !IsCloser(k))) {
        // The node as it is: a context marker or closer, or a selected node.
        if (k == NodeKind::kCall && !ctx) return reader.Bad(x, "a call marker is referenced");
        if (k == NodeKind::kArgument && n.cls().aux != 0 && n.num_refs() == 1 &&
            !s.selected.Test(n.ref(0))) {
          // A block argument whose jump is left out.
          writer.Append(class_for(n, kNoOperands), n.value(), refs);
        } else {
          IRT_RETURN_IF_ERROR(map_refs(n));
          if (k == NodeKind::kCall) {
            uint64_t key = (static_cast<uint64_t>(n.chunk_index()) << 32) | n.class_index();
            if (registered_classes.insert(key).second) {
              std::string op(n.op());
              if (!registered[op]) {
                registered[op] = true;
                if (auto ir = trace.FunctionIR(op, x)) {
                  writer.RegisterFunction(op, std::string(*ir));
                }
                std::string missing;
                if (const internal::FunctionFlow* f = flows.Find(op, x, &missing)) {
                  writer.RegisterControlFlow(op, f->facts());
                }
              }
            }
          }
          writer.Append(class_for(n, kAsIs), k == NodeKind::kCall ? Value() : n.value(), refs);
        }
        copy_meta(n);
      } else if (sel) {
        // A nested call selected as one node: a Primitive of the callee.
        IRT_ASSIGN_OR_RETURN(NodeId m, reader.MarkerOf(n));
        IRT_ASSIGN_OR_RETURN(RawNode mv, reader.Get(m));
        IRT_RETURN_IF_ERROR(map_refs(mv));
        writer.Append(class_for(mv, kUnit), n.value(), refs);
        copy_meta(mv);
      } else {
        // An input: its recorded value, as a Constant (or an Argument); the
        // result of a call left out takes the call's place and location.
        if (IsCloser(k)) {
          IRT_ASSIGN_OR_RETURN(NodeId m, reader.MarkerOf(n));
          IRT_ASSIGN_OR_RETURN(RawNode mv, reader.Get(m));
          writer.Append(class_for(mv, kInput), n.value(), refs);
        } else {
          writer.Append(class_for(n, kInput), n.value(), refs);
        }
        copy_meta(n);
      }
    }
  }
  for (const MetaEntry& m : trace.trace_meta()) writer.AddTraceMeta(m.key, m.value);
  writer.AddTraceMeta("slice", Value::String(slice.description()));
  if (out.failed()) return Status::Ok();  // Commit reports the write error
  return writer.Finish();
}

// ---------------------------------------------------------------- listing

namespace {

void AppendRootLine(std::string& out, const NodeView& v, const Trace& trace, NodeId end,
                    const PrintOptions& opts) {
  FormatOptions fo;
  fo.max_elements = opts.max_elements;
  out += "⟨";
  out += DisplayString(v.op());
  out += "⟩(";
  size_t n = v.num_operands();
  for (size_t i = 0; i < n; ++i) {
    Operand o = v.operand(i);
    if (o.is_ref) {
      out += "#" + std::to_string(o.ref);
    } else {
      out += "⟨" + FormatValue(o.literal, fo) + "⟩";
    }
    out += ", ";
  }
  out += "()...)";
  auto e = trace.node(end);
  if (e.ok() && e->kind() == NodeKind::kReturn) {
    Value r = e->value();
    out += " → " + FormatValue(r, fo) + "::" + TypeName(r);
  } else {
    out += " → error";
  }
  if (opts.show_meta) {
    bool first = true;
    for (const MetaEntry& m : v.meta()) {
      out += first ? "  # " : ", ";
      first = false;
      out += std::string(m.key) + " = " + FormatValue(m.value, fo);
    }
  }
}

}  // namespace

Status PrintSliceList(const Trace& trace, const Slice& slice, const PrintOptions& opts,
                      Output& out) {
  const Slice::Impl& s = *slice.impl_;
  IRT_ASSIGN_OR_RETURN(Child root, RootCall(trace));
  IRT_ASSIGN_OR_RETURN(NodeView rv, trace.node(root.id));
  std::string line;
  AppendRootLine(line, rv, trace, root.end, opts);
  line += '\n';
  out.Write(line);
  // Open context calls; bodies far from the top are dropped and reloaded
  // when the walk comes back to them, so memory stays bounded on deep
  // recursions.
  struct Frame {
    Child call;
    std::optional<CallBody> body;
  };
  constexpr size_t kKeepBodies = 64;
  std::vector<Frame> stack;
  auto body_of = [&](Frame& f) -> Result<const CallBody*> {
    if (!f.body) {
      IRT_ASSIGN_OR_RETURN(CallBody b, CallBody::Load(trace, f.call));
      f.body = std::move(b);
    }
    return &*f.body;
  };
  stack.push_back({root, std::nullopt});
  auto indent = [&](size_t level) {
    line.append(2 * std::min<size_t>(level, opts.max_indent), ' ');
  };
  NodeId x = root.id + 1;
  internal::LeaveBehind behind(trace, internal::LeaveBehind::kForward, root.id);
  // The next selected node and the next context node at or after x, each
  // searched for again only once x has passed it (a search runs to the next
  // set bit, and context nodes are few: searching at every node would scan
  // the rest of the trace each time).
  NodeId a = 0, b = 0;
  while (!stack.empty() && !out.failed()) {
    // Next node that is selected or a context marker/closer.
    if (a != kNoNode && a < x) a = s.selected.NextSet(x);
    if (b != kNoNode && b < x) b = s.context.NextSet(x);
    NodeId next = std::min(a, b);
    if (next == kNoNode) break;
    x = next + 1;
    behind.Step(next);
    Frame& top = stack.back();
    if (next > top.call.end) return Internal("slice listing: node outside its call");
    IRT_ASSIGN_OR_RETURN(const CallBody* body, body_of(top));
    bool ctx = s.context.Test(next);
    if (ctx && next == top.call.end) {
      if (s.selected.Test(next)) {
        int64_t p = body->PositionOf(next);
        line.clear();
        indent(stack.size());
        IRT_ASSIGN_OR_RETURN(std::string text,
                             FormatNode(trace, *body, static_cast<size_t>(p), opts));
        line += text;
        line += '\n';
        out.Write(line);
      }
      stack.pop_back();
      continue;
    }
    int64_t p = body->PositionOf(next);
    if (p < 0) return Internal("slice listing: node " + std::to_string(next) + " not in its call");
    line.clear();
    indent(stack.size());
    IRT_ASSIGN_OR_RETURN(std::string text, FormatNode(trace, *body, static_cast<size_t>(p), opts));
    line += text;
    line += '\n';
    out.Write(line);
    Child c = (*body)[static_cast<size_t>(p)];
    if (ctx && c.is_call() && next == c.id) {
      stack.push_back({c, std::nullopt});
      if (stack.size() > kKeepBodies) stack[stack.size() - kKeepBodies - 1].body.reset();
    } else if (c.is_call()) {
      x = c.end + 1;  // a call selected as one node
    }
  }
  return Status::Ok();
}

}  // namespace irt
