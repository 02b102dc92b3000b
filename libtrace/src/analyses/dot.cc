// DOT output through libcgraph. The call tree is walked top-down with an
// explicit stack of loaded bodies; before a body is loaded its children are
// counted by walking back from its closing node (hopping nested calls) with
// the remaining node budget, so an over-large graph is refused before the
// part of the trace it would need is read. Graph objects are created in
// execution order and written once, at the end, through an I/O discipline
// that writes to the Output.
#include "irt/dot.h"

#include <cgraph.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "io/column_reader.h"
#include "irt/graph.h"
#include "irt/print.h"
#include "irt/slice.h"
#include "print/notation.h"

namespace irt {

namespace {

// cgraph takes char* everywhere and copies what it keeps.
char* C(const std::string& s) { return const_cast<char*>(s.c_str()); }
char* C(const char* s) { return const_cast<char*>(s); }

int PutStr(void* chan, const char* str) {
  static_cast<Output*>(chan)->Write(std::string_view(str));
  return 0;
}
int Flush(void*) { return 0; }
int Read(void*, char*, int) { return 0; }
Agiodisc_t kOutputIo = {Read, PutStr, Flush};

// Label text for DOT: backslashes doubled (DOT would read \l, \N... as
// escapes), lines joined with "\n".
std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

// The label of child `pos` of `body`: its line in irt-print's notation,
// without metadata; with `split`, one piece a line: "@4: [§1:%4]",
// "⟨sin⟩(@2)", "→ 0.84::Float64".
Result<std::string> NodeLabel(const Trace& trace, const CallBody& body, size_t pos,
                              const internal::NotationOptions& no, bool split) {
  Child c = body[pos];
  IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(c.id));
  internal::NameInBody name{body};
  std::string out;
  if (!split) {
    IRT_RETURN_IF_ERROR(internal::AppendNodeLine(out, trace, v, pos, c.end, name, no));
    return out;
  }
  internal::AppendNodeHead(out, v, pos);
  out += '\n';
  size_t body_at = out.size();
  IRT_RETURN_IF_ERROR(internal::AppendNodeBody(out, v, name, no.format));
  if (internal::HasResult(v)) {
    if (out.size() != body_at) out += '\n';
    IRT_RETURN_IF_ERROR(internal::AppendNodeResult(out, trace, v, c.end, no.format));
  }
  return out;
}

// The number of children of a closed call, counting at most `limit + 1`.
Result<uint64_t> CountChildren(const Trace& trace, const Child& call, uint64_t limit) {
  if (!call.is_call() || call.end == kNoNode) return uint64_t{0};
  uint64_t n = 1;  // the closing node
  NodeId i = call.end;
  while (i > call.id + 1 && n <= limit) {
    --i;
    IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(i));
    if (internal::IsCloser(v.kind())) {
      NodeId m = v.closes();
      if (m <= call.id || m >= i) {
        return DataError(trace.name() + ": node " + std::to_string(i) + " closes node " +
                         std::to_string(m) + ", which is not a call marker of this body");
      }
      i = m;
    }
    ++n;
  }
  return n;
}

enum class EdgeStyle { kData, kCondition, kControl };

class DotBuilder {
 public:
  DotBuilder(const Trace& trace, const DotOptions& opts)
      : trace_(trace), opts_(opts), conditions_(trace) {
    fo_.max_elements = opts.max_elements;
    notation_.format = fo_;
    notation_.show_meta = false;
    disc_.mem = &AgMemDisc;
    disc_.id = &AgIdDisc;
    disc_.io = &kOutputIo;
  }
  ~DotBuilder() {
    if (g_ != nullptr) agclose(g_);
  }

  Status Build() {
    g_ = agopen(C("trace"), Agdirected, &disc_);
    if (g_ == nullptr) return Internal("cgraph: cannot create a graph");
    agattr(g_, AGRAPH, C("compound"), C("true"));
    agattr(g_, AGRAPH, C("fontname"), C("monospace"));
    agattr(g_, AGRAPH, C("fontsize"), C("11"));
    agattr(g_, AGRAPH, C("labelloc"), C("t"));
    agattr(g_, AGRAPH, C("label"), C(""));
    agattr(g_, AGRAPH, C("style"), C(""));
    agattr(g_, AGRAPH, C("color"), C(""));
    agattr(g_, AGNODE, C("shape"), C("box"));
    agattr(g_, AGNODE, C("style"), C("rounded"));
    agattr(g_, AGNODE, C("fontname"), C("monospace"));
    agattr(g_, AGNODE, C("fontsize"), C("10"));
    agattr(g_, AGNODE, C("label"), C("\\N"));
    agattr(g_, AGNODE, C("fillcolor"), C(""));
    agattr(g_, AGNODE, C("color"), C(""));
    agattr(g_, AGNODE, C("penwidth"), C(""));
    agattr(g_, AGEDGE, C("style"), C(""));
    agattr(g_, AGEDGE, C("color"), C(""));
    agattr(g_, AGEDGE, C("penwidth"), C(""));
    agattr(g_, AGEDGE, C("arrowhead"), C(""));
    agattr(g_, AGEDGE, C("lhead"), C(""));

    IRT_ASSIGN_OR_RETURN(Child root, RootCall(trace_));
    if (root.end == kNoNode) return DataError(trace_.name() + ": the root call never returns");
    // The head: the root, or the node at the path with the body holding it.
    Child head = root;
    std::optional<CallBody>& parent = parent_;
    size_t head_pos = 0;
    if (!opts_.node_path.empty() && opts_.node_path != "@") {
      // Validates the path with ResolvePath's messages, then finds the body
      // holding the node (for its line and its references' numbering).
      IRT_ASSIGN_OR_RETURN(head, ResolvePath(trace_, opts_.node_path));
      std::string_view up = opts_.node_path;
      size_t slash = up.rfind('/');
      Child holder = root;
      if (slash != std::string_view::npos) {
        IRT_ASSIGN_OR_RETURN(holder, ResolvePath(trace_, up.substr(0, slash)));
      }
      holder_path_ = slash == std::string_view::npos ? "" : std::string(up.substr(0, slash));
      IRT_ASSIGN_OR_RETURN(CallBody pb, CallBody::Load(trace_, holder));
      int64_t pos = pb.PositionOf(head.id);
      if (pos < 0) return Internal("dot: the node at the path is not in its parent");
      head_pos = static_cast<size_t>(pos);
      parent = std::move(pb);
      holder_ = &*parent;
      if (head.is_call() && head.end == kNoNode) {
        return DataError(trace_.name() + ": the call at " + opts_.node_path + " never returns");
      }
    }
    std::string head_line;
    if (parent) {
      IRT_ASSIGN_OR_RETURN(head_line, NodeLabel(trace_, *parent, head_pos, notation_, false));
    } else {
      IRT_ASSIGN_OR_RETURN(NodeView rv, trace_.node(root.id));
      IRT_RETURN_IF_ERROR(internal::AppendRootCallLine(head_line, trace_, rv, root.end, notation_));
    }
    agsafeset(g_, C("label"), C(Escape(head_line)), C(""));
    if (!head.is_call()) {
      // A single node.
      IRT_RETURN_IF_ERROR(AddNode(g_, *parent, head_pos));
      return Status::Ok();
    }
    if (opts_.levels == 1) {
      if (parent) return AddNode(g_, *parent, head_pos);
      IRT_RETURN_IF_ERROR(Count(1));
      Agnode_t* n = agnode(g_, C("n" + std::to_string(root.id)), 1);
      agsafeset(n, C("label"), C(Escape(head_line)), C(""));
      agsafeset(n, C("shape"), C("box3d"), C(""));
      Highlight(n, root.end, root.id);
      nodes_[root.end] = n;
      return Status::Ok();
    }
    return Walk(head);
  }

  Status Write(Output& out) {
    if (agwrite(g_, &out) != 0) return Internal("cgraph: cannot write the graph");
    return Status::Ok();
  }

 private:
  struct Frame {
    CallBody body;
    size_t next = 0;
    uint32_t level = 1;  // the level of the call whose body this is
    Agraph_t* graph = nullptr;
  };

  Status Count(uint64_t n) {
    count_ += n;
    if (opts_.max_nodes != 0 && count_ > opts_.max_nodes) return TooBig();
    return Status::Ok();
  }
  Status TooBig() const {
    return UsageError(
        "the graph would have more than " + std::to_string(opts_.max_nodes) +
        " nodes (the trace has " + std::to_string(trace_.size()) +
        "), more than Graphviz lays out in reasonable time; draw less with --levels N or "
        "--node PATH, or raise the limit with --max-nodes N");
  }

  bool Selected(NodeId id) const { return opts_.highlight && opts_.highlight->Contains(id); }

  void Highlight(Agnode_t* n, NodeId value_id, NodeId marker) {
    if (!opts_.highlight) return;
    bool sel = Selected(value_id);
    bool ctx = marker != kNoNode && opts_.highlight->IsContext(marker);
    if (sel || ctx) {
      agsafeset(n, C("style"), C(sel ? "rounded,filled" : "rounded,dashed"), C(""));
      if (sel) agsafeset(n, C("fillcolor"), C("#ffd27f"), C(""));
      agsafeset(n, C("color"), C("#d62728"), C(""));
      agsafeset(n, C("penwidth"), C("2"), C(""));
    }
  }

  std::string MetaLines(const NodeView& v) {
    std::string out;
    if (opts_.show_meta.empty()) return out;
    bool all =
        std::find(opts_.show_meta.begin(), opts_.show_meta.end(), "*") != opts_.show_meta.end();
    for (const MetaEntry& m : v.meta()) {
      if (all || std::find(opts_.show_meta.begin(), opts_.show_meta.end(), m.key) !=
                     opts_.show_meta.end()) {
        out += "\n" + DisplayString(m.key) + " = " + FormatValue(m.value, fo_);
      }
    }
    return out;
  }

  Agnode_t* Source(NodeId t) {
    auto it = nodes_.find(t);
    if (it != nodes_.end()) return it->second;
    // A reference leaving what is drawn (the enclosing call's arguments
    // when drawing a subtree): a dashed stand-in showing the value.
    auto x = externals_.find(t);
    if (x != externals_.end()) return x->second;
    if (!Count(1).ok()) {
      too_big_ = true;
      return nullptr;
    }
    Agnode_t* n = agnode(g_, C("x" + std::to_string(t)), 1);
    // Named by its path when it is in the body holding the drawn subtree.
    std::string label = "#" + std::to_string(t);
    if (holder_ != nullptr) {
      int64_t p = holder_->PositionOf(t);
      if (p >= 0) {
        label = holder_path_ + (holder_path_.empty() ? "@" : "/@") + std::to_string(p + 1);
      }
    }
    label += " (outside)";
    if (auto v = trace_.node(t); v.ok() && v->vkind() != VKind::kNone) {
      Value val = v->value();
      label += "\n→ " + FormatValue(val, fo_) + "::" + TypeName(val);
    }
    agsafeset(n, C("label"), C(Escape(label)), C(""));
    agsafeset(n, C("shape"), C("ellipse"), C(""));
    agsafeset(n, C("style"), C("dashed"), C(""));
    externals_[t] = n;
    return n;
  }

  Agedge_t* Edge(Agnode_t* from, Agnode_t* to, EdgeStyle style, bool hot) {
    Agedge_t* e = agedge(g_, from, to, nullptr, 1);
    if (e == nullptr) return nullptr;
    switch (style) {
      case EdgeStyle::kData:
        break;
      case EdgeStyle::kCondition:
        agsafeset(e, C("style"), C("dashed"), C(""));
        agsafeset(e, C("color"), C("#1f77b4"), C(""));
        break;
      case EdgeStyle::kControl:
        agsafeset(e, C("style"), C("bold,dashed"), C(""));
        agsafeset(e, C("color"), C("#1f77b4"), C(""));
        agsafeset(e, C("arrowhead"), C("empty"), C(""));
        break;
    }
    if (hot) {
      agsafeset(e, C("color"), C("#d62728"), C(""));
      agsafeset(e, C("penwidth"), C("2"), C(""));
    }
    return e;
  }

  // The edges into a drawn node from what it references.
  Status RefEdges(const NodeView& v, Agnode_t* to, NodeId value_id) {
    std::vector<NodeId> refs = v.refs();
    int cond = -1;
    if (v.kind() == NodeKind::kJump && v.has_condition() &&
        v.operand(v.num_operands() - 1).is_ref) {
      cond = static_cast<int>(refs.size()) - 1;
    }
    for (size_t r = 0; r < refs.size(); ++r) {
      Agnode_t* from = Source(refs[r]);
      if (too_big_) return TooBig();
      if (from == nullptr) continue;
      bool hot = Selected(refs[r]) && Selected(value_id);
      Edge(from, to, static_cast<int>(r) == cond ? EdgeStyle::kCondition : EdgeStyle::kData, hot);
    }
    return Status::Ok();
  }

  // A node for child `pos` of `body` (a nested call drawn as one node).
  Status AddNode(Agraph_t* g, const CallBody& body, size_t pos) {
    IRT_RETURN_IF_ERROR(Count(1));
    Child c = body[pos];
    IRT_ASSIGN_OR_RETURN(NodeView v, trace_.node(c.id));
    IRT_ASSIGN_OR_RETURN(std::string label, NodeLabel(trace_, body, pos, notation_, true));
    label += MetaLines(v);
    Agnode_t* n = agnode(g, C("n" + std::to_string(c.id)), 1);
    NodeId value_id = c.id;
    if (c.is_call()) {
      value_id = c.end;
      agsafeset(n, C("shape"), C("box3d"), C(""));
      agsafeset(n, C("style"), C(""), C(""));
    } else if (v.kind() == NodeKind::kJump) {
      agsafeset(n, C("shape"), C("cds"), C(""));
      agsafeset(n, C("style"), C(""), C(""));
    } else if (internal::IsCloser(v.kind())) {
      agsafeset(n, C("peripheries"), C("2"), C("1"));
    } else if (v.kind() == NodeKind::kArgument) {
      agsafeset(n, C("shape"), C("invhouse"), C(""));
      agsafeset(n, C("style"), C(""), C(""));
    }
    agsafeset(n, C("label"), C(Escape(label)), C(""));
    Highlight(n, value_id, c.is_call() ? c.id : kNoNode);
    nodes_[value_id] = n;
    IRT_RETURN_IF_ERROR(RefEdges(v, n, value_id));
    if ((v.kind() == NodeKind::kJump || v.kind() == NodeKind::kReturn) && v.location().pos > 1) {
      NotTakenEdges(body, pos, v, n, value_id);
    }
    Arrived(n, value_id);
    if (v.kind() == NodeKind::kJump) {
      pending_jump_ = n;
      pending_jump_id_ = value_id;
    }
    return Status::Ok();
  }

  // A branch at position &k > 1 ran because the conditions of branches
  // &1..&k-1 held (they were not taken): dotted control edges from the
  // latest value of each condition in the same body.
  void NotTakenEdges(const CallBody& body, size_t pos, const NodeView& v, Agnode_t* to,
                     NodeId value_id) {
    Location l = v.location();
    for (uint32_t ssa : conditions_.NotTaken(body.call().id, l.block, l.pos)) {
      for (size_t q = pos; q-- > 0;) {
        Child c = body[q];
        auto w = trace_.node(c.id);
        if (!w.ok()) break;
        NodeKind k = w->kind();
        if (k == NodeKind::kJump || internal::IsCloser(k) || w->location().pos != ssa) continue;
        NodeId id = c.is_call() ? c.end : c.id;
        Agnode_t* from = Source(id);
        if (from == nullptr) break;
        Agedge_t* e = agedge(g_, from, to, nullptr, 1);
        if (e != nullptr) {
          agsafeset(e, C("style"), C("dotted"), C(""));
          agsafeset(e, C("color"), C("#1f77b4"), C(""));
          if (Selected(id) && Selected(value_id)) {
            agsafeset(e, C("color"), C("#d62728"), C(""));
            agsafeset(e, C("penwidth"), C("2"), C(""));
          }
        }
        break;
      }
    }
  }

  // The first node drawn after a jump is where it led: a control edge.
  // Highlighted when the jump and the node it led to are both in the slice.
  void Arrived(Agnode_t* n, NodeId id) {
    if (pending_jump_ == nullptr) return;
    Agnode_t* j = pending_jump_;
    pending_jump_ = nullptr;
    Agedge_t* e = Edge(j, n, EdgeStyle::kControl, Selected(pending_jump_id_) && Selected(id));
    if (e == nullptr) return;
    if (!pending_cluster_.empty()) agsafeset(e, C("lhead"), C(pending_cluster_), C(""));
    pending_cluster_.clear();
  }

  Status Expand(Agraph_t* g, const Child& call, uint32_t level, std::vector<Frame>& stack) {
    uint64_t limit =
        opts_.max_nodes == 0 ? ~0ull : opts_.max_nodes - std::min(count_, opts_.max_nodes);
    IRT_ASSIGN_OR_RETURN(uint64_t n, CountChildren(trace_, call, limit));
    if (opts_.max_nodes != 0 && n > limit) return TooBig();
    IRT_ASSIGN_OR_RETURN(CallBody body, CallBody::Load(trace_, call));
    stack.push_back({std::move(body), 0, level, g});
    return Status::Ok();
  }

  Status Walk(const Child& head) {
    std::vector<Frame> stack;
    IRT_RETURN_IF_ERROR(Expand(g_, head, 1, stack));
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next >= f.body.size()) {
        stack.pop_back();
        pending_jump_ = nullptr;
        pending_cluster_.clear();
        continue;
      }
      size_t pos = f.next++;
      Child c = f.body[pos];
      uint32_t child_level = f.level + 1;
      bool expand = c.is_call() && (opts_.levels == 0 || child_level < opts_.levels);
      if (!expand) {
        IRT_RETURN_IF_ERROR(AddNode(f.graph, f.body, pos));
        continue;
      }
      // A cluster: labelled with the call's line; its arguments' references
      // bring the data in, its return's users take the result out.
      IRT_ASSIGN_OR_RETURN(std::string line, NodeLabel(trace_, f.body, pos, notation_, false));
      IRT_ASSIGN_OR_RETURN(NodeView mv, trace_.node(c.id));
      std::string name = "cluster_" + std::to_string(c.id);
      Agraph_t* sub = agsubg(f.graph, C(name), 1);
      agsafeset(sub, C("label"), C(Escape(line + MetaLines(mv))), C(""));
      agsafeset(sub, C("style"), C("rounded"), C(""));
      if (opts_.highlight && opts_.highlight->IsContext(c.id)) {
        agsafeset(sub, C("color"), C("#d62728"), C(""));
      }
      if (pending_jump_ != nullptr && pending_cluster_.empty()) pending_cluster_ = name;
      IRT_RETURN_IF_ERROR(Expand(sub, c, child_level, stack));
    }
    return Status::Ok();
  }

  const Trace& trace_;
  const DotOptions& opts_;
  BranchConditions conditions_;
  FormatOptions fo_;
  internal::NotationOptions notation_;
  Agdisc_t disc_{};
  Agraph_t* g_ = nullptr;
  uint64_t count_ = 0;
  bool too_big_ = false;
  std::unordered_map<NodeId, Agnode_t*> nodes_;
  std::unordered_map<NodeId, Agnode_t*> externals_;
  Agnode_t* pending_jump_ = nullptr;
  NodeId pending_jump_id_ = kNoNode;
  std::string pending_cluster_;
  std::optional<CallBody> parent_;    // the body holding the drawn subtree
  const CallBody* holder_ = nullptr;  // &*parent_ when drawing a subtree
  std::string holder_path_;
};

}  // namespace

Status WriteDot(const Trace& trace, const DotOptions& opts, Output& out) {
  DotBuilder b(trace, opts);
  IRT_RETURN_IF_ERROR(b.Build());
  return b.Write(out);
}

}  // namespace irt
