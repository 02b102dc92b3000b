// irt-dot's graphs read back with libcgraph: one graph node per drawn trace
// node, one data or condition edge per reference, one control edge per jump,
// one dotted edge per condition of a branch that was not taken, one cluster
// per expanded call; deterministic bytes; levels, subtrees and the node limit.
#include "irt/dot.h"

#include <cgraph.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>

#include "ir_test_util.h"
#include "irt/graph.h"
#include "irt/ir/interpreter.h"
#include "irt/output.h"
#include "irt/trace.h"

namespace irt {
namespace {

std::string DotTestTrace(const std::string& file, const std::string& fn,
                         std::vector<std::string> args,
                         std::optional<std::string> rand = std::nullopt) {
  return irt::testing::TraceTestdata("dot", file, fn, std::move(args), std::move(rand));
}

Result<std::string> Dot(const Trace& t, const DotOptions& opts) {
  std::string path = irt::testing::TempPath("dot-out.dot");
  IRT_ASSIGN_OR_RETURN(auto out, Output::Open(path));
  IRT_RETURN_IF_ERROR(WriteDot(t, opts, *out));
  IRT_RETURN_IF_ERROR(out->Commit());
  return irt::testing::ReadFile(path);
}

struct Shape {
  int nodes = 0, clusters = 0;
  std::map<std::string, int> edges;  // by style
};

Shape Read(const std::string& dot) {
  Shape s;
  Agraph_t* g = agmemread(dot.c_str());
  EXPECT_NE(g, nullptr);
  if (g == nullptr) return s;
  s.nodes = agnnodes(g);
  std::vector<Agraph_t*> todo{g};
  while (!todo.empty()) {
    Agraph_t* x = todo.back();
    todo.pop_back();
    for (Agraph_t* sub = agfstsubg(x); sub; sub = agnxtsubg(sub)) {
      ++s.clusters;
      todo.push_back(sub);
    }
  }
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
    for (Agedge_t* e = agfstout(g, n); e; e = agnxtout(g, e)) {
      char* style = agget(e, const_cast<char*>("style"));
      ++s.edges[style ? style : ""];
    }
  }
  agclose(g);
  return s;
}

// What a full drawing of the subtree of `call` must hold.
Shape Expected(const Trace& t, const Child& call) {
  Shape s;
  std::vector<Child> todo{call};
  while (!todo.empty()) {
    Child c = todo.back();
    todo.pop_back();
    auto kids = Children(t, c);
    EXPECT_TRUE(kids.ok());
    for (const Child& k : *kids) {
      if (k.is_call()) {
        ++s.clusters;
        todo.push_back(k);
        continue;
      }
      auto v = t.node(k.id);
      EXPECT_TRUE(v.ok());
      ++s.nodes;
      size_t refs = v->refs().size();
      if (v->kind() == NodeKind::kJump) {
        ++s.edges["bold,dashed"];
        if (v->has_condition() && v->operand(v->num_operands() - 1).is_ref) {
          ++s.edges["dashed"];
          --refs;
        }
      }
      s.edges[""] += static_cast<int>(refs);
    }
  }
  return s;
}

void ExpectShape(const Shape& got, const Shape& want, int not_taken) {
  EXPECT_EQ(got.nodes, want.nodes);
  EXPECT_EQ(got.clusters, want.clusters);
  EXPECT_EQ(got.edges.count("") ? got.edges.at("") : 0,
            want.edges.count("") ? want.edges.at("") : 0);
  for (const char* style : {"dashed", "bold,dashed"}) {
    EXPECT_EQ(got.edges.count(style) ? got.edges.at(style) : 0,
              want.edges.count(style) ? want.edges.at(style) : 0)
        << style;
  }
  EXPECT_EQ(got.edges.count("dotted") ? got.edges.at("dotted") : 0, not_taken);
}

TEST(DotTest, WholeTraces) {
  struct Case {
    std::string file, fn;
    std::vector<std::string> args;
    std::optional<std::string> rand;
    int not_taken;  // branches at &2 after a conditional &1 in the same block
  };
  for (const Case& c : std::vector<Case>{{"h.ir", "h", {"2.0", "2"}, {}, 2},
                                         {"f.ir", "f", {"1.0"}, {}, 0},
                                         {"geom.ir", "geom", {"1", "0.5"}, "0.9,0.7,0.1", 1},
                                         {"looprec.ir", "looprec", {"2.0", "2"}, {}, 4}}) {
    auto t = Trace::Open(DotTestTrace(c.file, c.fn, c.args, c.rand));
    ASSERT_TRUE(t.ok());
    auto dot = Dot(*t, {});
    ASSERT_TRUE(dot.ok()) << dot.status().message();
    auto root = RootCall(*t);
    ASSERT_TRUE(root.ok());
    SCOPED_TRACE(c.file);
    ExpectShape(Read(*dot), Expected(*t, *root), c.not_taken);
    auto again = Dot(*t, {});
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*dot, *again);
  }
}

TEST(DotTest, LevelsSubtreesAndLimit) {
  auto t = Trace::Open(DotTestTrace("geom.ir", "geom", {"1", "0.5"}, "0.9,0.7,0.1"));
  ASSERT_TRUE(t.ok());
  DotOptions o;
  o.levels = 2;
  auto two = Dot(*t, o);
  ASSERT_TRUE(two.ok());
  Shape s = Read(*two);
  EXPECT_EQ(s.nodes, 9);  // the root's children, the nested call as one node
  EXPECT_EQ(s.clusters, 0);
  o.levels = 1;
  auto one = Dot(*t, o);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Read(*one).nodes, 1);
  o.levels = 0;
  o.node_path = "@8/@8";
  auto sub = Dot(*t, o);
  ASSERT_TRUE(sub.ok());
  Shape ss = Read(*sub);
  EXPECT_EQ(ss.nodes, 6 + 2);  // its children, and stand-ins for its arguments @8/@7 and @8/@3
  o.node_path.clear();
  o.max_nodes = 10;
  auto big = Dot(*t, o);
  EXPECT_EQ(big.status().code(), Code::kUsage);
  EXPECT_NE(big.status().message().find("--levels"), std::string::npos);
  o.max_nodes = 0;
  EXPECT_TRUE(Dot(*t, o).ok());
  o.node_path = "@99";
  EXPECT_EQ(Dot(*t, o).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace irt
