// Replay: one forward pass from the first changed node to the end of the
// trace (or to the first divergence), with a bitmap of the nodes whose
// values changed and a map of their new values. A node is evaluated again
// only when one of its references changed; propagation stops where a new
// value equals the recorded one. An explicit stack of open calls carries,
// per call, the latest node of each SSA value used as a branch condition,
// so that branches that were not taken can be checked against the callee's
// IR. Then every chunk holding a changed node is rebuilt with
// FlatBufferBuilder (all tables copied, new values appended), the others
// are copied as they are.
#include "irt/replay.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>
#include <unordered_map>

#include "irt/graph.h"
#include "irtrace_generated.h"

namespace irt {

namespace {

bool Closes(NodeKind k) { return k == NodeKind::kReturn || k == NodeKind::kError; }

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

// ------------------------------------------------------------ IR branches

// A conditional branch of a block, as IRTools prints it: `br 2 unless %5`.
struct CondBranch {
  uint32_t pos = 0;   // branch position in its block (1-based)
  uint32_t cond = 0;  // SSA id of the condition (0: a literal, which cannot change)
  std::string text;
};

struct FunctionBranches {
  std::map<uint32_t, std::vector<CondBranch>> by_block;
  std::vector<uint32_t> cond_ssa;  // SSA ids used as conditions, sorted
  bool Watches(uint32_t ssa) const {
    return std::binary_search(cond_ssa.begin(), cond_ssa.end(), ssa);
  }
};

// Strips a comment that starts outside a string literal.
std::string_view StripComment(std::string_view line) {
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '#') {
      return line.substr(0, i);
    }
  }
  return line;
}

// Reads the conditional branches of a function's IR text (the lines between
// `function NAME` and `end`). Lines it does not recognise are skipped: the
// only use of the result is to find more divergences.
FunctionBranches ParseBranches(std::string_view ir) {
  FunctionBranches out;
  uint32_t block = 0, position = 0;
  size_t start = 0;
  while (start < ir.size()) {
    size_t nl = ir.find('\n', start);
    if (nl == std::string_view::npos) nl = ir.size();
    std::string line = Trim(StripComment(ir.substr(start, nl - start)));
    start = nl + 1;
    if (line.empty()) continue;
    if (line[0] >= '0' && line[0] <= '9') {
      uint32_t b = 0;
      auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), b);
      if (ec == std::errc() && p < line.data() + line.size() && *p == ':') {
        block = b;
        position = 0;
      }
      continue;
    }
    bool is_br = line.rfind("br ", 0) == 0 || line == "br";
    bool is_return = line.rfind("return", 0) == 0;
    if (!is_br && !is_return) continue;
    ++position;
    if (!is_br) continue;
    size_t u = line.rfind(" unless ");
    if (u == std::string::npos) continue;
    std::string cond = Trim(std::string_view(line).substr(u + 8));
    CondBranch cb;
    cb.pos = position;
    cb.text = line;
    if (cond.size() > 1 && cond[0] == '%') {
      uint32_t ssa = 0;
      auto [p, ec] = std::from_chars(cond.data() + 1, cond.data() + cond.size(), ssa);
      if (ec == std::errc() && p == cond.data() + cond.size()) cb.cond = ssa;
    }
    if (cb.cond != 0) out.cond_ssa.push_back(cb.cond);
    out.by_block[block].push_back(std::move(cb));
  }
  std::sort(out.cond_ssa.begin(), out.cond_ssa.end());
  out.cond_ssa.erase(std::unique(out.cond_ssa.begin(), out.cond_ssa.end()), out.cond_ssa.end());
  return out;
}

// ------------------------------------------------------------ paths

// "@8/@6": the positions of a node and of the calls that contain it.
Result<std::string> PathOf(const Trace& t, NodeId id) {
  std::vector<uint64_t> parts;
  NodeId cur = id;
  while (cur != 0) {
    uint64_t count = 0;
    NodeId i = cur, parent = kNoNode;
    while (i > 0) {
      NodeId prev = i - 1;
      IRT_ASSIGN_OR_RETURN(NodeView v, t.node(prev));
      if (Closes(v.kind())) {
        i = v.closes();
        ++count;
      } else if (v.kind() == NodeKind::kCall) {
        parent = prev;
        break;
      } else {
        i = prev;
        ++count;
      }
    }
    if (parent == kNoNode) {
      return DataError(t.name() + ": node " + std::to_string(id) + " is outside every call");
    }
    parts.push_back(count + 1);
    cur = parent;
  }
  std::string out;
  for (size_t i = parts.size(); i-- > 0;) {
    out += i + 1 == parts.size() ? "@" : "/@";
    out += std::to_string(parts[i]);
  }
  return out.empty() ? std::string("@") : out;
}

std::string Where(const Trace& t, NodeId id) {
  auto p = PathOf(t, id);
  return p ? *p : "node " + std::to_string(id);
}

// ------------------------------------------------------------ chunk rebuild

// Copies a FlatBuffers vector of structs (whose iterators yield pointers).
template <typename T>
std::vector<T> CopyStructs(const flatbuffers::Vector<const T*>* v) {
  std::vector<T> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (const T* p : *v) out.push_back(*p);
  return out;
}

// Edits of one chunk: new node values, new literal operands of the root
// call marker (its arguments), and truncation for a prefix.
struct ChunkEdit {
  std::vector<std::pair<uint32_t, Value>> values;         // local node, sorted
  std::vector<std::pair<uint32_t, Value>> root_operands;  // operand index of node 0
  uint32_t keep = ~0u;                                    // nodes kept
  // New values of existing metadata: (local node, key) and trace-level keys.
  std::vector<std::tuple<uint32_t, std::string, Value>> meta;
  std::vector<std::pair<std::string, Value>> trace_meta;
  bool rebuild() const {
    return !values.empty() || !root_operands.empty() || keep != ~0u || !meta.empty() ||
           !trace_meta.empty();
  }
};

// Copies a verified chunk into a new FlatBuffer with the edits applied.
// Everything is copied index for index, so every index of the old chunk
// stays valid; new strings, tensors, tuples, literals, operands and classes
// are appended after the old ones.
class ChunkBuilder {
 public:
  explicit ChunkBuilder(const fb::Chunk* c) : c_(c), fbb_(1 << 16) {}

  Result<std::vector<uint8_t>> Build(const ChunkEdit& e) {
    const fb::Chunk* c = c_;
    // Strings, tensors, tuples, functions, producer: copied in order.
    if (c->strings()) {
      for (const flatbuffers::String* s : *c->strings()) {
        strings_.push_back(fbb_.CreateString(s->data(), s->size()));
        string_ids_.emplace(s->str(), static_cast<uint32_t>(strings_.size() - 1));
      }
    }
    if (c->tensors()) {
      for (const fb::Tensor* t : *c->tensors()) {
        Tensor copy;
        copy.dtype = static_cast<DType>(t->dtype());
        if (t->shape()) copy.shape.assign(t->shape()->begin(), t->shape()->end());
        if (t->data()) copy.data.assign(t->data()->begin(), t->data()->end());
        AddTensor(copy);
      }
    }
    if (c->tuples()) {
      for (const fb::Tuple* t : *c->tuples()) {
        std::vector<fb::Value> items = CopyStructs(t->items());
        tuples_.push_back(fb::CreateTuple(fbb_, fbb_.CreateVectorOfStructs(items)));
      }
    }
    std::vector<flatbuffers::Offset<fb::FunctionIR>> functions;
    if (c->functions()) {
      for (const fb::FunctionIR* f : *c->functions()) {
        auto ir = f->ir() ? fbb_.CreateString(f->ir()->data(), f->ir()->size())
                          : flatbuffers::Offset<flatbuffers::String>();
        functions.push_back(fb::CreateFunctionIR(fbb_, f->name(), ir));
      }
    }
    flatbuffers::Offset<fb::Producer> producer;
    if (c->producer()) {
      const fb::Producer* p = c->producer();
      auto name = p->name() ? fbb_.CreateString(p->name()->data(), p->name()->size())
                            : flatbuffers::Offset<flatbuffers::String>();
      auto version = p->version() ? fbb_.CreateString(p->version()->data(), p->version()->size())
                                  : flatbuffers::Offset<flatbuffers::String>();
      producer = fb::CreateProducer(fbb_, name, version);
    }
    // Columns.
    std::vector<fb::Node> nodes = CopyStructs(c->nodes());
    std::vector<fb::NodeClass> classes = CopyStructs(c->classes());
    std::vector<uint32_t> operands;
    if (c->operands()) operands.assign(c->operands()->begin(), c->operands()->end());
    std::vector<fb::Value> literals = CopyStructs(c->literals());
    std::vector<uint32_t> refs;
    if (c->refs()) refs.assign(c->refs()->begin(), c->refs()->end());
    std::vector<fb::Meta> meta = CopyStructs(c->meta());

    // The root marker's arguments: a copy of its class with new literals.
    if (!e.root_operands.empty() && !nodes.empty()) {
      fb::NodeClass k = classes[nodes[0].cls()];
      uint32_t first = static_cast<uint32_t>(operands.size());
      for (uint32_t j = 0; j < k.n_operands(); ++j) {
        uint32_t o = operands[k.first_operand() + j];
        for (const auto& [idx, v] : e.root_operands) {
          if (idx == j && o != 0) {
            literals.push_back(Encode(v));
            o = static_cast<uint32_t>(literals.size());
          }
        }
        operands.push_back(o);
      }
      classes.emplace_back(k.op(), k.block(), k.pos(), k.aux(), first, k.line(), k.col(),
                           k.n_operands(), k.kind(), k.vkind(), k.flags());
      nodes[0] = fb::Node(nodes[0].value(), static_cast<uint32_t>(classes.size() - 1),
                          nodes[0].first_ref());
    }
    // New node values; a value of another kind gets a copy of its class.
    std::map<std::pair<uint32_t, uint8_t>, uint32_t> reclassed;
    for (const auto& [local, v] : e.values) {
      if (local >= nodes.size()) return Internal("replay: edit of a node outside its chunk");
      fb::Node n = nodes[local];
      fb::Value enc = Encode(v);
      uint32_t cls = n.cls();
      if (classes[cls].vkind() != enc.vkind()) {
        auto key = std::make_pair(cls, static_cast<uint8_t>(enc.vkind()));
        auto it = reclassed.find(key);
        if (it == reclassed.end()) {
          const fb::NodeClass k = classes[cls];
          classes.emplace_back(k.op(), k.block(), k.pos(), k.aux(), k.first_operand(), k.line(),
                               k.col(), k.n_operands(), k.kind(), enc.vkind(), k.flags());
          it = reclassed.emplace(key, static_cast<uint32_t>(classes.size() - 1)).first;
        }
        cls = it->second;
      }
      nodes[local] = fb::Node(enc.bits(), cls, n.first_ref());
    }
    bool truncated = e.keep != ~0u && e.keep < nodes.size();
    if (truncated) {
      nodes.resize(e.keep);
      meta.erase(std::remove_if(meta.begin(), meta.end(),
                                [&](const fb::Meta& m) { return m.node() >= e.keep; }),
                 meta.end());
    }
    auto key_of = [&](uint32_t k) -> std::string_view {
      return k < c->strings()->size() ? c->strings()->Get(k)->string_view() : std::string_view();
    };
    for (fb::Meta& m : meta) {
      for (const auto& [node, key, v] : e.meta) {
        if (m.node() == node && key_of(m.key()) == key) m = fb::Meta(Encode(v), m.node(), m.key());
      }
    }
    std::vector<fb::Meta> tmeta;
    bool last = c->last() && !truncated && e.keep == ~0u;
    if (last) tmeta = CopyStructs(c->trace_meta());
    for (fb::Meta& m : tmeta) {
      for (const auto& [key, v] : e.trace_meta) {
        if (key_of(m.key()) == key) m = fb::Meta(Encode(v), m.node(), m.key());
      }
    }

    auto v_nodes = fbb_.CreateVectorOfStructs(nodes);
    auto v_refs = fbb_.CreateVector(refs);
    auto v_classes = fbb_.CreateVectorOfStructs(classes);
    auto v_operands = fbb_.CreateVector(operands);
    auto v_literals = fbb_.CreateVectorOfStructs(literals);
    auto v_strings = fbb_.CreateVector(strings_);
    auto v_tensors = fbb_.CreateVector(tensors_);
    auto v_tuples = fbb_.CreateVector(tuples_);
    auto v_meta = fbb_.CreateVectorOfStructs(meta);
    auto v_functions = fbb_.CreateVector(functions);
    flatbuffers::Offset<flatbuffers::Vector<const fb::Meta*>> v_tmeta;
    if (last) v_tmeta = fbb_.CreateVectorOfStructs(tmeta);
    fb::ChunkBuilder cb(fbb_);
    cb.add_format_major(c->format_major());
    cb.add_format_minor(c->format_minor());
    if (!producer.IsNull()) cb.add_producer(producer);
    cb.add_index(c->index());
    cb.add_base(c->base());
    cb.add_base_depth(c->base_depth());
    cb.add_nodes(v_nodes);
    cb.add_refs(v_refs);
    cb.add_classes(v_classes);
    cb.add_operands(v_operands);
    cb.add_literals(v_literals);
    cb.add_strings(v_strings);
    cb.add_tensors(v_tensors);
    cb.add_tuples(v_tuples);
    cb.add_meta(v_meta);
    cb.add_functions(v_functions);
    if (last) {
      cb.add_last(true);
      cb.add_total_nodes(c->total_nodes());
      cb.add_trace_meta(v_tmeta);
    }
    fbb_.FinishSizePrefixed(cb.Finish(), kFileIdentifier);
    if (fbb_.GetSize() > kMaxChunkBytes) {
      return Unsupported("chunk " + std::to_string(c->index()) +
                         " would be larger than a chunk may be after the replay");
    }
    return std::vector<uint8_t>(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
  }

 private:
  uint32_t Intern(const std::string& s) {
    auto it = string_ids_.find(s);
    if (it != string_ids_.end()) return it->second;
    strings_.push_back(fbb_.CreateString(s));
    uint32_t id = static_cast<uint32_t>(strings_.size() - 1);
    string_ids_.emplace(s, id);
    return id;
  }

  uint32_t AddTensor(const Tensor& t) {
    auto shape = fbb_.CreateVector(t.shape);
    fbb_.ForceVectorAlignment(t.data.size(), 1, 8);
    auto data = fbb_.CreateVector(t.data);
    fb::TensorBuilder tb(fbb_);
    tb.add_dtype(static_cast<fb::DType>(t.dtype));
    tb.add_shape(shape);
    tb.add_data(data);
    tensors_.push_back(tb.Finish());
    return static_cast<uint32_t>(tensors_.size() - 1);
  }

  // Tuples are encoded in post-order with an explicit stack, so an item
  // always refers to a lower tuple index.
  fb::Value Encode(const Value& v) {
    switch (v.kind()) {
      case VKind::kString:
      case VKind::kFunction:
        return fb::Value(Intern(v.str()), static_cast<fb::VKind>(v.kind()));
      case VKind::kTensor:
        return fb::Value(AddTensor(v.tensor()), fb::VKind::Tensor);
      case VKind::kTuple:
        break;
      default:
        return fb::Value(v.bits(), static_cast<fb::VKind>(v.kind()));
    }
    struct Frame {
      const Value* v;
      size_t next = 0;
      std::vector<fb::Value> items;
    };
    std::vector<Frame> stack;
    stack.push_back(Frame{&v, 0, {}});
    fb::Value result;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto& items = f.v->tuple();
      if (f.next < items.size()) {
        const Value& item = items[f.next++];
        if (item.kind() == VKind::kTuple) {
          stack.push_back(Frame{&item, 0, {}});
        } else {
          f.items.push_back(Encode(item));
        }
        continue;
      }
      tuples_.push_back(fb::CreateTuple(fbb_, fbb_.CreateVectorOfStructs(f.items)));
      fb::Value done(tuples_.size() - 1, fb::VKind::Tuple);
      stack.pop_back();
      if (stack.empty()) {
        result = done;
      } else {
        stack.back().items.push_back(done);
      }
    }
    return result;
  }

  const fb::Chunk* c_;
  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<flatbuffers::Offset<flatbuffers::String>> strings_;
  std::unordered_map<std::string, uint32_t> string_ids_;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors_;
  std::vector<flatbuffers::Offset<fb::Tuple>> tuples_;
};

// ------------------------------------------------------------ the walk

struct WalkFrame {
  NodeId marker = 0;
  const FunctionBranches* branches = nullptr;
  std::vector<std::pair<uint32_t, NodeId>> lastdef;  // condition SSA id -> latest node
  void Define(uint32_t ssa, NodeId id) {
    for (auto& [s, n] : lastdef) {
      if (s == ssa) {
        n = id;
        return;
      }
    }
    lastdef.emplace_back(ssa, id);
  }
  NodeId Latest(uint32_t ssa) const {
    for (const auto& [s, n] : lastdef) {
      if (s == ssa) return n;
    }
    return kNoNode;
  }
};

class Walker {
 public:
  Walker(const Trace& t, const PrimitiveTable& table, ReplayResult* r)
      : t_(t), table_(table), r_(r) {}

  // Re-evaluates from the first change; fills new_values_ and r_->changed.
  Status Run(const std::vector<std::pair<NodeId, Value>>& changes);

  const std::unordered_map<NodeId, Value>& new_values() const { return new_values_; }

  // A recorded failure that fails again with another message.
  struct Failure {
    NodeId id;
    std::string old_message, new_message;
  };
  const std::vector<Failure>& failures() const { return failures_; }

 private:
  bool Dirty(NodeId id) const {
    if (id < start_) return false;
    uint64_t i = id - start_;
    return (bits_[i >> 6] >> (i & 63)) & 1;
  }
  void MarkDirty(NodeId id) {
    uint64_t i = id - start_;
    bits_[i >> 6] |= uint64_t{1} << (i & 63);
  }
  Result<Value> Current(NodeId id) const {
    if (Dirty(id)) {
      auto it = new_values_.find(id);
      if (it != new_values_.end()) return it->second;
    }
    IRT_ASSIGN_OR_RETURN(NodeView v, t_.node(id));
    return v.value();
  }
  Result<Value> OperandValue(const Operand& o) const {
    if (!o.is_ref) return o.literal;
    return Current(o.ref);
  }
  Result<const FunctionBranches*> BranchesOf(std::string_view function, NodeId marker);
  Status PushFrame(NodeId marker, std::string_view function);
  void Diverge(ReplayDivergence d) { r_->divergence = std::move(d); }
  Status CheckUntaken(const NodeView& v);

  const Trace& t_;
  const PrimitiveTable& table_;
  ReplayResult* r_;
  NodeId start_ = 0;
  std::vector<uint64_t> bits_;
  std::unordered_map<NodeId, Value> new_values_;
  std::vector<WalkFrame> frames_;
  std::map<std::string, std::unique_ptr<FunctionBranches>, std::less<>> branches_;
  std::vector<Failure> failures_;
};

Result<const FunctionBranches*> Walker::BranchesOf(std::string_view function, NodeId marker) {
  auto it = branches_.find(function);
  if (it != branches_.end()) return it->second.get();
  std::optional<std::string_view> ir = t_.FunctionIR(function, marker);
  std::unique_ptr<FunctionBranches> fb;
  if (ir) {
    fb = std::make_unique<FunctionBranches>(ParseBranches(*ir));
  } else {
    r_->warnings.push_back("no IR text for '" + std::string(function) +
                           "': branches not taken in its blocks are not checked");
  }
  const FunctionBranches* p = fb.get();
  branches_.emplace(std::string(function), std::move(fb));
  return p;
}

Status Walker::PushFrame(NodeId marker, std::string_view function) {
  WalkFrame f;
  f.marker = marker;
  IRT_ASSIGN_OR_RETURN(f.branches, BranchesOf(function, marker));
  frames_.push_back(std::move(f));
  return Status::Ok();
}

// A Jump or Return at §b:&k: every conditional branch of block b before
// position k was not taken, so its condition was true. If the latest value
// of that condition in this call changed to false, the branch would be taken.
Status Walker::CheckUntaken(const NodeView& v) {
  if (frames_.empty() || frames_.back().branches == nullptr) return Status::Ok();
  const WalkFrame& f = frames_.back();
  Location l = v.location();
  auto it = f.branches->by_block.find(l.block);
  if (it == f.branches->by_block.end()) return Status::Ok();
  for (const CondBranch& b : it->second) {
    if (b.pos >= l.pos || b.cond == 0) continue;
    NodeId c = f.Latest(b.cond);
    if (c == kNoNode || !Dirty(c)) continue;
    IRT_ASSIGN_OR_RETURN(Value now, Current(c));
    IRT_ASSIGN_OR_RETURN(NodeView cv, t_.node(c));
    if (now.kind() == VKind::kBool && now.as_bool()) continue;
    ReplayDivergence d;
    d.node = v.id();
    d.path = Where(t_, v.id());
    d.branch = "§" + std::to_string(l.block) + ":&" + std::to_string(b.pos) + " (" + b.text + ")";
    d.condition = c;
    d.condition_path = Where(t_, c);
    d.old_value = cv.value();
    d.new_value = now;
    if (now.kind() != VKind::kBool) {
      d.kind = ReplayDivergence::Kind::kFailure;
      d.message = d.path + ": the condition of branch " + d.branch + ", " + d.condition_path +
                  ", is now " + FormatValue(now) + "::" + TypeName(now) +
                  " (TypeError: non-boolean used in boolean context)";
    } else {
      d.kind = ReplayDivergence::Kind::kNotTaken;
      d.message = d.path + ": branch " + d.branch +
                  ", not taken before, would be taken now: " + d.condition_path + " was " +
                  FormatValue(d.old_value) + ", is now " + FormatValue(now);
    }
    Diverge(std::move(d));
    return Status::Ok();
  }
  return Status::Ok();
}

Status Walker::Run(const std::vector<std::pair<NodeId, Value>>& changes) {
  start_ = changes.front().first;
  uint64_t n = t_.size();
  bits_.assign((n - start_ + 63) / 64, 0);
  // The calls open at the first change.
  {
    std::vector<NodeId> open;
    NodeId cur = start_;
    for (;;) {
      IRT_ASSIGN_OR_RETURN(NodeId p, Parent(t_, cur));
      if (p == kNoNode) break;
      open.push_back(p);
      cur = p;
    }
    for (size_t i = open.size(); i-- > 0;) {
      IRT_ASSIGN_OR_RETURN(NodeView m, t_.node(open[i]));
      IRT_RETURN_IF_ERROR(PushFrame(open[i], m.op()));
    }
  }
  size_t next_change = 0;
  std::vector<Value> args;
  for (NodeId id = start_; id < n; ++id) {
    IRT_ASSIGN_OR_RETURN(NodeView v, t_.node(id));
    ++r_->visited;
    NodeKind kind = v.kind();
    Value nv;
    bool has_new = false;
    if (next_change < changes.size() && changes[next_change].first == id) {
      nv = changes[next_change++].second;
      has_new = true;
    } else {
      bool any = false;
      for (NodeId ref : v.refs()) {
        if (Dirty(ref)) {
          any = true;
          break;
        }
      }
      if (any) {
        switch (kind) {
          case NodeKind::kArgument:
            if (v.num_operands() == 1) {
              Operand o = v.operand(0);
              if (v.block_arg_index() == 0) {
                IRT_ASSIGN_OR_RETURN(nv, OperandValue(o));
              } else {
                IRT_ASSIGN_OR_RETURN(NodeView j, t_.node(o.ref));
                uint32_t k = v.block_arg_index();
                if (k > j.num_operands()) {
                  return DataError(t_.name() + ": node " + std::to_string(id) +
                                   " is block argument " + std::to_string(k) + " of a jump with " +
                                   std::to_string(j.num_operands()) + " operands");
                }
                IRT_ASSIGN_OR_RETURN(nv, OperandValue(j.operand(k - 1)));
              }
              has_new = true;
              ++r_->evaluated;
            }
            break;
          case NodeKind::kPrimitive:
          case NodeKind::kSpecial: {
            std::string_view op = v.op();
            if (table_.IsRandom(op)) break;  // a draw keeps its recorded value
            args.clear();
            for (size_t i = 0; i < v.num_operands(); ++i) {
              IRT_ASSIGN_OR_RETURN(Value a, OperandValue(v.operand(i)));
              args.push_back(std::move(a));
            }
            ++r_->evaluated;
            Result<Value> res = table_.Apply(op, args);
            if (!res) {
              if (res.error().code() != Code::kRuntimeError) {
                return Status(res.error().code(),
                              Where(t_, id) + ": cannot re-evaluate ⟨" + std::string(op) +
                                  "⟩: " + res.error().message() +
                                  (table_.Find(op) == nullptr
                                       ? " (a call recorded without its body cannot be replayed)"
                                       : ""));
              }
              ReplayDivergence d;
              d.kind = ReplayDivergence::Kind::kFailure;
              d.node = id;
              d.path = Where(t_, id);
              d.message =
                  d.path + ": ⟨" + std::string(op) + "⟩ would fail now: " + res.error().message();
              Diverge(std::move(d));
              break;
            }
            nv = std::move(res).value();
            has_new = true;
            break;
          }
          case NodeKind::kJump: {
            MarkDirty(id);  // its block arguments read their values from it
            if (v.has_condition()) {
              Operand c = v.operand(v.num_operands() - 1);
              if (c.is_ref && Dirty(c.ref)) {
                IRT_ASSIGN_OR_RETURN(Value now, Current(c.ref));
                if (now.kind() != VKind::kBool || now.as_bool() != v.taken_when()) {
                  IRT_ASSIGN_OR_RETURN(NodeView cv, t_.node(c.ref));
                  ReplayDivergence d;
                  d.node = id;
                  d.path = Where(t_, id);
                  Location l = v.location();
                  d.branch = "§" + std::to_string(l.block) + ":&" + std::to_string(l.pos) +
                             " (goto §" + std::to_string(v.jump_target()) + ")";
                  d.condition = c.ref;
                  d.condition_path = Where(t_, c.ref);
                  d.old_value = cv.value();
                  d.new_value = now;
                  if (now.kind() != VKind::kBool) {
                    d.kind = ReplayDivergence::Kind::kFailure;
                    d.message = d.path + ": the condition of branch " + d.branch + ", " +
                                d.condition_path + ", is now " + FormatValue(now) +
                                "::" + TypeName(now) +
                                " (TypeError: non-boolean used in boolean context)";
                  } else {
                    d.kind = ReplayDivergence::Kind::kBranch;
                    d.message = d.path + ": branch " + d.branch +
                                " would not be taken now: " + d.condition_path + " was " +
                                FormatValue(d.old_value) + ", is now " + FormatValue(now);
                  }
                  Diverge(std::move(d));
                }
              }
            }
            break;
          }
          case NodeKind::kReturn:
            if (v.num_operands() > 0) {
              IRT_ASSIGN_OR_RETURN(nv, OperandValue(v.operand(0)));
              has_new = true;
              ++r_->evaluated;
            }
            break;
          case NodeKind::kError: {
            // A failed primitive fails again, perhaps with another message;
            // the Error nodes of the calls around it just pass it on.
            std::string_view op = v.op();
            const PrimitiveEntry* e = table_.Find(op);
            if (e == nullptr || e->random) break;
            args.clear();
            for (size_t i = 0; i < v.num_operands(); ++i) {
              IRT_ASSIGN_OR_RETURN(Value a, OperandValue(v.operand(i)));
              args.push_back(std::move(a));
            }
            ++r_->evaluated;
            Result<Value> res = table_.Apply(op, args);
            std::optional<Value> old = v.meta("error");
            std::string old_msg = old && old->kind() == VKind::kString ? old->str() : "";
            if (!res && res.error().code() == Code::kRuntimeError) {
              if (res.error().message() != old_msg) {
                failures_.push_back({id, old_msg, res.error().message()});
                r_->changed.push_back(id);
              }
              break;
            }
            ReplayDivergence d;
            d.kind = ReplayDivergence::Kind::kRecordedFailure;
            d.node = id;
            d.path = Where(t_, id);
            d.message = d.path + ": ⟨" + std::string(op) + "⟩ failed when recorded (" + old_msg +
                        ") and would not fail now";
            Diverge(std::move(d));
            break;
          }
          case NodeKind::kCall:
          case NodeKind::kConstant:
            break;
        }
      }
    }
    if (!r_->divergence && (kind == NodeKind::kJump || kind == NodeKind::kReturn)) {
      IRT_RETURN_IF_ERROR(CheckUntaken(v));
    }
    if (r_->divergence) break;
    if (has_new && !BitEqual(v.value(), nv)) {
      MarkDirty(id);
      new_values_[id] = std::move(nv);
      r_->changed.push_back(id);
    }
    // Keep the open calls and the latest definitions of watched conditions.
    if (kind == NodeKind::kCall) {
      IRT_RETURN_IF_ERROR(PushFrame(id, v.op()));
    } else if (Closes(kind)) {
      if (!frames_.empty()) {
        NodeId marker = frames_.back().marker;
        frames_.pop_back();
        if (!frames_.empty() && frames_.back().branches != nullptr) {
          IRT_ASSIGN_OR_RETURN(NodeView m, t_.node(marker));
          uint32_t ssa = m.location().pos;
          if (frames_.back().branches->Watches(ssa)) frames_.back().Define(ssa, id);
        }
      }
    } else if (kind != NodeKind::kJump && !frames_.empty() && frames_.back().branches != nullptr) {
      uint32_t ssa = v.location().pos;
      if (frames_.back().branches->Watches(ssa)) frames_.back().Define(ssa, id);
    }
  }
  return Status::Ok();
}

}  // namespace

// ------------------------------------------------------------ ParseReplayChange

Result<ReplayChange> ParseReplayChange(std::string_view spec) {
  size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return InvalidArgument("--set '" + std::string(spec) + "': expected @PATH=VALUE");
  }
  ReplayChange c;
  c.path = Trim(spec.substr(0, eq));
  std::string_view text = spec.substr(eq + 1);
  auto v = ParseLiteral(text);
  if (!v) {
    return InvalidArgument("--set " + c.path + ": '" + std::string(text) +
                           "' is not a value: " + v.error().message());
  }
  c.value = std::move(v).value();
  return c;
}

// ------------------------------------------------------------ Replay

struct Replay::Impl {
  const Trace* trace = nullptr;
  ReplayResult result;
  bool has_output = false;
  uint64_t out_chunks = 0;  // chunks of the new trace
  std::map<uint32_t, std::vector<uint8_t>> rebuilt;
};

Replay::Replay() : impl_(new Impl) {}
Replay::Replay(Replay&&) noexcept = default;
Replay& Replay::operator=(Replay&&) noexcept = default;
Replay::~Replay() = default;

const ReplayResult& Replay::result() const { return impl_->result; }
bool Replay::has_output() const { return impl_->has_output; }

Result<Replay> Replay::Run(const Trace& trace, std::span<const ReplayChange> changes,
                           const ReplayOptions& options) {
  std::vector<std::pair<NodeId, Value>> resolved;
  for (const ReplayChange& c : changes) {
    auto child = ResolvePath(trace, c.path);
    if (!child) return InvalidArgument("--set " + c.path + ": " + child.error().message());
    IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(child->id));
    std::string at = "--set " + c.path + ": ";
    if (child->is_call()) {
      return InvalidArgument(at + "the node is a nested call ⟨" + std::string(v.op()) +
                             "⟩; set one of its arguments (" + c.path +
                             "/@2) or a node of its body");
    }
    switch (v.kind()) {
      case NodeKind::kJump:
        return InvalidArgument(at + "the node is a jump (a branch taken), which has no value");
      case NodeKind::kReturn:
        return InvalidArgument(at + "the node is the return of its call; set the node it returns");
      case NodeKind::kError:
        return InvalidArgument(at + "the node is a recorded failure, which has no value");
      case NodeKind::kCall:
        return InvalidArgument(at + "the node is a call marker");
      default:
        break;
    }
    Value old = v.value();
    if (TypeName(old) != TypeName(c.value)) {
      return InvalidArgument(at + "the node holds a " + TypeName(old) + ", not a " +
                             TypeName(c.value) + " (recorded: " + FormatValue(old) + ")");
    }
    for (const auto& [id, val] : resolved) {
      if (id == child->id) return InvalidArgument(at + "the node is set twice");
    }
    resolved.emplace_back(child->id, c.value);
  }
  return RunOnNodes(trace, resolved, options);
}

Result<Replay> Replay::RunOnNodes(const Trace& trace,
                                  std::span<const std::pair<NodeId, Value>> changes_in,
                                  const ReplayOptions& options) {
  Replay rp;
  Impl& m = *rp.impl_;
  m.trace = &trace;
  ReplayResult& r = m.result;
  r.nodes = trace.size();
  r.chunks = trace.chunks().size();
  if (!trace.complete())
    return InvalidArgument(trace.name() + ": cannot replay an unfinished trace");
  std::vector<std::pair<NodeId, Value>> changes(changes_in.begin(), changes_in.end());
  std::sort(changes.begin(), changes.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < changes.size(); ++i) {
    if (changes[i].first >= trace.size()) {
      return InvalidArgument("node " + std::to_string(changes[i].first) + " is not in the trace");
    }
    if (i > 0 && changes[i].first == changes[i - 1].first) {
      return InvalidArgument("node " + std::to_string(changes[i].first) + " is set twice");
    }
  }
  m.out_chunks = r.chunks;
  if (changes.empty()) {
    m.has_output = true;
    return rp;
  }
  const PrimitiveTable& table =
      options.primitives ? *options.primitives : PrimitiveTable::Builtins();
  Walker w(trace, table, &r);
  IRT_RETURN_IF_ERROR(w.Run(changes));
  if (r.divergence && !options.prefix) {
    r.changed.clear();
    m.has_output = false;
    return rp;
  }
  m.has_output = true;

  // Edits per chunk.
  std::map<uint32_t, ChunkEdit> edits;
  for (NodeId id : r.changed) {
    auto nv = w.new_values().find(id);
    if (nv == w.new_values().end()) continue;  // a failure's message
    uint32_t ci = trace.chunk_of(id);
    edits[ci].values.emplace_back(static_cast<uint32_t>(id - trace.chunks()[ci].base), nv->second);
  }
  for (size_t i = 0; i < w.failures().size(); ++i) {
    const auto& f = w.failures()[i];
    uint32_t ci = trace.chunk_of(f.id);
    edits[ci].meta.emplace_back(static_cast<uint32_t>(f.id - trace.chunks()[ci].base), "error",
                                Value::String(f.new_message));
    // The trace's error names the first failure, after its source location.
    if (i == 0) {
      for (const MetaEntry& m : trace.trace_meta()) {
        if (m.key != "error" || m.value.kind() != VKind::kString) continue;
        const std::string& s = m.value.str();
        if (s.size() >= f.old_message.size() &&
            s.compare(s.size() - f.old_message.size(), std::string::npos, f.old_message) == 0) {
          edits[static_cast<uint32_t>(trace.chunks().size() - 1)].trace_meta.emplace_back(
              "error", Value::String(s.substr(0, s.size() - f.old_message.size()) + f.new_message));
        }
      }
    }
  }
  // The root call's arguments are also the literal operands of its marker:
  // keep them in step with the root's argument nodes.
  {
    IRT_ASSIGN_OR_RETURN(NodeView root, trace.node(0));
    size_t nops = root.num_operands();
    NodeId run_end = 1;  // the root's function arguments are nodes 1..run_end-1
    while (run_end < trace.size() && run_end <= nops + 1) {
      IRT_ASSIGN_OR_RETURN(NodeView a, trace.node(run_end));
      if (a.kind() != NodeKind::kArgument || a.block_arg_index() != 0) break;
      ++run_end;
    }
    uint64_t run = run_end - 1;
    uint64_t skip = run == nops + 1 ? 1 : run == nops ? 0 : ~0ull;  // %1 is the function itself
    if (skip != ~0ull) {
      for (NodeId id : r.changed) {
        if (id >= run_end) break;
        if (id < 1 + skip) continue;
        uint32_t opi = static_cast<uint32_t>(id - 1 - skip);
        auto nv = w.new_values().find(id);
        if (nv != w.new_values().end() && !root.operand(opi).is_ref) {
          edits[0].root_operands.emplace_back(opi, nv->second);
        }
      }
    }
  }
  if (r.divergence) {
    NodeId cut = r.divergence->node;
    uint32_t ci = trace.chunk_of(cut);
    uint32_t local = static_cast<uint32_t>(cut - trace.chunks()[ci].base);
    m.out_chunks = local == 0 ? ci : ci + 1;
    if (local > 0) edits[ci].keep = local;
    // Chunks after the cut are dropped, edits there too.
    for (auto it = edits.begin(); it != edits.end();) {
      it = it->first >= m.out_chunks ? edits.erase(it) : std::next(it);
    }
  }
  for (auto& [ci, e] : edits) {
    if (!e.rebuild()) continue;
    IRT_RETURN_IF_ERROR(trace.VerifyChunk(ci));
    ChunkBuilder b(trace.chunk_root(ci));
    IRT_ASSIGN_OR_RETURN(m.rebuilt[ci], b.Build(e));
  }
  r.chunks_rebuilt = m.rebuilt.size();
  return rp;
}

Status Replay::Write(Output& out) const {
  const Impl& m = *impl_;
  if (!m.has_output) {
    return InvalidArgument("the replay diverged; there is no new trace to write (use a prefix)");
  }
  for (uint32_t i = 0; i < m.out_chunks && !out.failed(); ++i) {
    auto it = m.rebuilt.find(i);
    if (it != m.rebuilt.end()) {
      out.Write(it->second.data(), it->second.size());
    } else {
      std::span<const uint8_t> b = m.trace->chunk_bytes(i);
      out.Write(b.data(), b.size());
    }
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> Replay::Bytes() const {
  const Impl& m = *impl_;
  if (!m.has_output) {
    return InvalidArgument("the replay diverged; there is no new trace (use a prefix)");
  }
  std::vector<uint8_t> out;
  for (uint32_t i = 0; i < m.out_chunks; ++i) {
    auto it = m.rebuilt.find(i);
    if (it != m.rebuilt.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
    } else {
      std::span<const uint8_t> b = m.trace->chunk_bytes(i);
      out.insert(out.end(), b.begin(), b.end());
    }
  }
  return out;
}

// ------------------------------------------------------------ MutableTrace

MutableTrace::MutableTrace() = default;
MutableTrace::MutableTrace(MutableTrace&&) noexcept = default;
MutableTrace& MutableTrace::operator=(MutableTrace&&) noexcept = default;
MutableTrace::~MutableTrace() = default;

const Trace& MutableTrace::trace() const { return *trace_; }
const std::vector<uint8_t>& MutableTrace::bytes() const { return *bytes_; }

Status MutableTrace::Adopt(std::vector<uint8_t> bytes, bool partial) {
  auto owned = std::make_unique<std::vector<uint8_t>>(std::move(bytes));
  OpenOptions oo;
  oo.allow_partial = partial;
  IRT_ASSIGN_OR_RETURN(Trace t, Trace::FromBytes(owned->data(), owned->size(), name_, oo));
  trace_ = std::make_unique<Trace>(std::move(t));
  bytes_ = std::move(owned);
  return Status::Ok();
}

Result<MutableTrace> MutableTrace::FromBytes(std::vector<uint8_t> bytes, std::string name) {
  MutableTrace m;
  m.name_ = std::move(name);
  IRT_RETURN_IF_ERROR(m.Adopt(std::move(bytes), false));
  return m;
}

Result<MutableTrace> MutableTrace::Open(const std::string& path) {
  IRT_ASSIGN_OR_RETURN(Trace t, Trace::Open(path));
  std::vector<uint8_t> bytes;
  bytes.reserve(t.file_bytes());
  for (uint32_t i = 0; i < t.chunks().size(); ++i) {
    std::span<const uint8_t> b = t.chunk_bytes(i);
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  return FromBytes(std::move(bytes), t.name());
}

Result<ReplayResult> MutableTrace::Update(std::span<const ReplayChange> changes,
                                          const ReplayOptions& options) {
  IRT_ASSIGN_OR_RETURN(Replay r, Replay::Run(*trace_, changes, options));
  ReplayResult result = r.result();
  if (!r.has_output()) return result;
  IRT_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, r.Bytes());
  IRT_RETURN_IF_ERROR(Adopt(std::move(bytes), result.divergence.has_value()));
  return result;
}

Result<ReplayResult> MutableTrace::UpdateNodes(std::span<const std::pair<NodeId, Value>> changes,
                                               const ReplayOptions& options) {
  IRT_ASSIGN_OR_RETURN(Replay r, Replay::RunOnNodes(*trace_, changes, options));
  ReplayResult result = r.result();
  if (!r.has_output()) return result;
  IRT_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, r.Bytes());
  IRT_RETURN_IF_ERROR(Adopt(std::move(bytes), result.divergence.has_value()));
  return result;
}

}  // namespace irt
