// DOT output through libcgraph. The call tree is walked top-down with an
// explicit stack of loaded bodies; before a body is loaded its children are
// counted by walking back from its closing node (hopping nested calls) with
// the remaining node budget, so an over-large graph is refused before the
// part of the trace it would need is read. Graph objects are created in
// execution order and written once, at the end, through an I/O discipline
// that writes to the Output.
//
// Nested clusters cost cgraph time and memory in proportion to their depth
// for every node they hold (a node of a subgraph belongs to each enclosing
// one, and agwrite visits each subgraph's nodes, its descendants' included)
// and for each cluster (a subgraph's attribute dictionaries are views
// chained through its ancestors'): a 1000-deep recursion drawn whole was
// quadratic in its depth. So the main graph has no subgraphs: each cluster
// is the one subgraph of a small graph of its own (the main graph's node
// attributes and defaults), which agwrite writes when the cluster is
// complete; the main graph's output takes the clusters, nested in execution
// order and indented to their depth, where agwrite puts a graph's
// subgraphs. For the edges the main graph holds a bare stand-in of each
// node drawn in a cluster, of the same name and made at the same point (so
// cgraph orders nodes and edges as one graph would); a stand-in that no edge
// uses is removed before writing. The bytes are those of one graph holding
// everything, but for the order of sibling clusters, which cgraph keeps by
// the address of their names.

#include "irt/dot.h"

#include <cgraph.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

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

int Flush(void*) { return 0; }
int Read(void*, char*, int) { return 0; }

// agwrite hands over its output a piece at a time: an indentation "\t", a
// keyword, a name, a quoted string (which may hold line breaks of its own),
// a separator; a piece that ends a line ends with "\n". The writers below
// follow the structure of the output through these pieces.
bool IsDefaults(std::string_view s) { return s == "graph" || s == "node" || s == "edge"; }

// Lines of output, indented one level less than a cluster at depth 1;
// `lines` are the offsets where lines start, to be indented further to the
// cluster's depth.
struct Text {
  std::string text;
  std::vector<size_t> lines;
};

// A cluster as agwrite writes it in a graph of its own: its header and
// attributes ("subgraph cluster_N {", "graph [label=...];"), its nodes and
// its closing brace, between which its nested clusters go.
struct ClusterText {
  Text head;
  Text nodes;
  Text tail;
  std::vector<uint32_t> children;  // nested clusters, in execution order
};

// Takes the cluster subgraph's part of agwrite's output of a cluster's own
// graph, leaving out that graph's header, attribute defaults and closing
// brace.
struct RenderChan {
  ClusterText* out;
  int phase = 0;  // 0: header, 1: defaults, 2: cluster header, 3: nodes, 4: tail, 5: done
  bool line_start = false;
  bool in_defaults = false;  // in a "graph/node/edge [...];" statement
  size_t tabs = 0;           // indentation not yet taken

  Text* Current() {
    switch (phase) {
      case 2:
        return &out->head;
      case 3:
        return &out->nodes;
      case 4:
        return &out->tail;
      default:
        return nullptr;
    }
  }
};

int RenderPut(void* chan, const char* str) {
  RenderChan& c = *static_cast<RenderChan*>(chan);
  std::string_view s(str);
  if (s.empty()) return 0;
  if (s == "\t") {
    ++c.tabs;
    return 0;
  }
  if (c.phase == 0) {
    if (s == "{\n") {
      c.phase = 1;
      c.line_start = true;
    }
    c.tabs = 0;
    return 0;
  }
  bool start = c.line_start;
  if (start && !c.in_defaults) {
    if (IsDefaults(s)) {
      c.in_defaults = true;
    } else if (c.phase == 1) {
      c.phase = 2;  // "subgraph cluster_N {"
    } else if (c.phase == 2 || c.phase == 3) {
      c.phase = s == "}\n" ? 4 : 3;
    }
  }
  if (Text* t = c.Current()) {
    if (start) t->lines.push_back(t->text.size());
    t->text.append(c.tabs, '\t');
    t->text += s;
  }
  c.tabs = 0;
  c.line_start = s.back() == '\n';
  if (c.in_defaults && s == "];\n") c.in_defaults = false;
  if (c.phase == 4 && c.line_start) c.phase = 5;
  return 0;
}
Agiodisc_t kRenderIo = {Read, RenderPut, Flush};

// The main graph's output, with the clusters put in after its attribute
// defaults, where agwrite writes a graph's subgraphs.
struct SpliceChan {
  Output* out;
  const std::vector<ClusterText>* clusters;
  const std::vector<uint32_t>* top;  // the clusters of the main graph's body
  int phase = 0;                     // 0: header, 1: defaults, 2: body
  bool line_start = false;
  bool in_defaults = false;
  size_t tabs = 0;
  std::string indent;

  // Clusters nest as deep as the calls drawn: their indentation stops
  // growing at kMaxIndent, so that the text stays linear in the graph.
  void Indent(size_t n) {
    n = std::min<size_t>(n, kMaxIndent);
    if (n == 0) return;
    if (indent.size() < n) indent.assign(n, '\t');
    out->Write(std::string_view(indent.data(), n));
  }
  void Put(const Text& t, size_t depth) {
    for (size_t i = 0; i < t.lines.size(); ++i) {
      size_t end = i + 1 < t.lines.size() ? t.lines[i + 1] : t.text.size();
      Indent(depth);
      out->Write(std::string_view(t.text).substr(t.lines[i], end - t.lines[i]));
    }
  }
  // The clusters, nested: each one's header, its nested clusters, its
  // nodes, its closing brace (an explicit stack: they nest as deep as the
  // calls drawn).
  void PutClusters() {
    struct Open {
      uint32_t cluster;
      size_t next;
    };
    std::vector<Open> stack;
    for (uint32_t top_cluster : *top) {
      stack.push_back({top_cluster, 0});
      Put((*clusters)[top_cluster].head, 0);
      while (!stack.empty()) {
        Open& o = stack.back();
        const ClusterText& c = (*clusters)[o.cluster];
        size_t depth = stack.size() - 1;
        if (o.next < c.children.size()) {
          uint32_t child = c.children[o.next++];
          Put((*clusters)[child].head, depth + 1);
          stack.push_back({child, 0});
          continue;
        }
        Put(c.nodes, depth);
        Put(c.tail, depth);
        stack.pop_back();
      }
    }
  }
};

int SplicePut(void* chan, const char* str) {
  SpliceChan& c = *static_cast<SpliceChan*>(chan);
  std::string_view s(str);
  if (s.empty()) return 0;
  if (s == "\t") {
    ++c.tabs;
    return 0;
  }
  if (c.phase == 0 && s == "{\n") {
    c.phase = 1;
  } else if (c.phase == 1 && c.line_start && !c.in_defaults) {
    if (IsDefaults(s)) {
      c.in_defaults = true;
    } else {
      c.PutClusters();  // the first line of the body (or its closing brace)
      c.phase = 2;
    }
  }
  c.Indent(c.tabs);
  c.tabs = 0;
  c.out->Write(s);
  c.line_start = s.back() == '\n';
  if (c.in_defaults && s == "];\n") c.in_defaults = false;
  return 0;
}
Agiodisc_t kSpliceIo = {Read, SplicePut, Flush};

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
    disc_.io = &kSpliceIo;
    render_disc_ = disc_;
    render_disc_.io = &kRenderIo;
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
    DeclareNodeAttributes(g_);
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
    // Stand-ins that no edge uses would be written as bare nodes.
    for (Agnode_t* n : stand_ins_) {
      if (agfstedge(g_, n) == nullptr) agdelnode(g_, n);
    }
    stand_ins_.clear();
    SpliceChan chan{&out, &clusters_, &top_clusters_};
    if (agwrite(g_, &chan) != 0) return Internal("cgraph: cannot write the graph");
    return Status::Ok();
  }

 private:
  struct CloseGraph {
    void operator()(Agraph_t* g) const { agclose(g); }
  };
  using GraphPtr = std::unique_ptr<Agraph_t, CloseGraph>;

  struct Frame {
    CallBody body;
    size_t next = 0;
    uint32_t level = 1;         // the level of the call whose body this is
    Agraph_t* graph = nullptr;  // the main graph or the cluster's subgraph
    GraphPtr own;               // a cluster's own graph, holding the subgraph
    uint32_t cluster = kNoCluster;
  };
  static constexpr uint32_t kNoCluster = ~uint32_t{0};

  // A cluster's own graph: the main graph's node attributes, and its
  // attributes that a cluster sets.
  GraphPtr ClusterGraph() {
    GraphPtr g(agopen(C("cluster"), Agdirected, &render_disc_));
    if (!g) return g;
    agattr(g.get(), AGRAPH, C("label"), C(""));
    agattr(g.get(), AGRAPH, C("style"), C(""));
    agattr(g.get(), AGRAPH, C("color"), C(""));
    DeclareNodeAttributes(g.get());
    return g;
  }

  static void DeclareNodeAttributes(Agraph_t* g) {
    agattr(g, AGNODE, C("shape"), C("box"));
    agattr(g, AGNODE, C("style"), C("rounded"));
    agattr(g, AGNODE, C("fontname"), C("monospace"));
    agattr(g, AGNODE, C("fontsize"), C("10"));
    agattr(g, AGNODE, C("label"), C("\\N"));
    agattr(g, AGNODE, C("fillcolor"), C(""));
    agattr(g, AGNODE, C("color"), C(""));
    agattr(g, AGNODE, C("penwidth"), C(""));
  }

  // Sets a node attribute, declared with `def` where it is new: in the
  // node's graph and, for a node in a cluster's own graph, in the main graph
  // (whose header lists the node attributes' defaults).
  void Set(Agnode_t* n, const char* name, const char* value, const char* def) {
    agsafeset(n, C(name), C(value), C(def));
    if (agroot(n) != g_ && agattr(g_, AGNODE, C(name), nullptr) == nullptr) {
      agattr(g_, AGNODE, C(name), C(def));
    }
  }

  // A complete cluster's text, kept for the main graph's output; its own
  // graph is closed.
  Status Render(Frame& f) {
    if (!f.own) return Status::Ok();
    RenderChan chan{&clusters_[f.cluster]};
    int rc = agwrite(f.own.get(), &chan);
    f.own.reset();
    if (rc != 0 || chan.phase != 5) return Internal("cgraph: cannot write a cluster");
    return Status::Ok();
  }

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
      Set(n, "style", sel ? "rounded,filled" : "rounded,dashed", "");
      if (sel) Set(n, "fillcolor", "#ffd27f", "");
      Set(n, "color", "#d62728", "");
      Set(n, "penwidth", "2", "");
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

  // A node for child `pos` of `body` (a nested call drawn as one node), in
  // `g`: the main graph, or a cluster's subgraph in its own graph (then the
  // edges go to a stand-in of the same name in the main graph).
  Status AddNode(Agraph_t* g, const CallBody& body, size_t pos) {
    IRT_RETURN_IF_ERROR(Count(1));
    Child c = body[pos];
    IRT_ASSIGN_OR_RETURN(NodeView v, trace_.node(c.id));
    IRT_ASSIGN_OR_RETURN(std::string label, NodeLabel(trace_, body, pos, notation_, true));
    label += MetaLines(v);
    std::string name = "n" + std::to_string(c.id);
    Agnode_t* e = agnode(g_, C(name), 1);  // where the edges go
    Agnode_t* n = e;
    if (g != g_) {
      stand_ins_.push_back(e);
      n = agnode(g, C(name), 1);
    }
    NodeId value_id = c.id;
    if (c.is_call()) {
      value_id = c.end;
      Set(n, "shape", "box3d", "");
      Set(n, "style", "", "");
    } else if (v.kind() == NodeKind::kJump) {
      Set(n, "shape", "cds", "");
      Set(n, "style", "", "");
    } else if (internal::IsCloser(v.kind())) {
      Set(n, "peripheries", "2", "1");
    } else if (v.kind() == NodeKind::kArgument) {
      Set(n, "shape", "invhouse", "");
      Set(n, "style", "", "");
    }
    Set(n, "label", Escape(label).c_str(), "");
    Highlight(n, value_id, c.is_call() ? c.id : kNoNode);
    nodes_[value_id] = e;
    IRT_RETURN_IF_ERROR(RefEdges(v, e, value_id));
    if ((v.kind() == NodeKind::kJump || v.kind() == NodeKind::kReturn) && v.location().pos > 1) {
      NotTakenEdges(body, pos, v, e, value_id);
    }
    Arrived(e, value_id);
    if (v.kind() == NodeKind::kJump) {
      pending_jump_ = e;
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

  // Pushes the body of `call`, drawn in `g`: the main graph, or the subgraph
  // of `cluster` in its own graph `own`.
  Status Expand(Agraph_t* g, const Child& call, uint32_t level, std::vector<Frame>& stack,
                GraphPtr own = nullptr, uint32_t cluster = kNoCluster) {
    uint64_t limit =
        opts_.max_nodes == 0 ? ~0ull : opts_.max_nodes - std::min(count_, opts_.max_nodes);
    IRT_ASSIGN_OR_RETURN(uint64_t n, CountChildren(trace_, call, limit));
    if (opts_.max_nodes != 0 && n > limit) return TooBig();
    IRT_ASSIGN_OR_RETURN(CallBody body, CallBody::Load(trace_, call));
    stack.push_back({std::move(body), 0, level, g, std::move(own), cluster});
    return Status::Ok();
  }

  Status Walk(const Child& head) {
    std::vector<Frame> stack;
    IRT_RETURN_IF_ERROR(Expand(g_, head, 1, stack));
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next >= f.body.size()) {
        IRT_RETURN_IF_ERROR(Render(f));
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
      GraphPtr own = ClusterGraph();
      Agraph_t* sub = own ? agsubg(own.get(), C(name), 1) : nullptr;
      if (sub == nullptr) return Internal("cgraph: cannot create a cluster");
      uint32_t cluster = static_cast<uint32_t>(clusters_.size());
      (f.cluster == kNoCluster ? top_clusters_ : clusters_[f.cluster].children).push_back(cluster);
      clusters_.emplace_back();
      agsafeset(sub, C("label"), C(Escape(line + MetaLines(mv))), C(""));
      agsafeset(sub, C("style"), C("rounded"), C(""));
      if (opts_.highlight && opts_.highlight->IsContext(c.id)) {
        agsafeset(sub, C("color"), C("#d62728"), C(""));
      }
      if (pending_jump_ != nullptr && pending_cluster_.empty()) pending_cluster_ = name;
      IRT_RETURN_IF_ERROR(Expand(sub, c, child_level, stack, std::move(own), cluster));
    }
    return Status::Ok();
  }

  const Trace& trace_;
  const DotOptions& opts_;
  BranchConditions conditions_;
  FormatOptions fo_;
  internal::NotationOptions notation_;
  Agdisc_t disc_{};
  Agdisc_t render_disc_{};
  Agraph_t* g_ = nullptr;
  std::vector<Agnode_t*> stand_ins_;    // in the main graph
  std::vector<ClusterText> clusters_;   // in the order they are made
  std::vector<uint32_t> top_clusters_;  // the clusters in the main graph's body
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
