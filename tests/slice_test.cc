// Slices checked against independent definitions on every node of small
// traces (h, geom, looprec, f): without --through-calls against the seed's
// backward/forward queries (CallBody), with it against plain reachability
// over the references, and with --control against a fixpoint written
// directly from the definition (with branch conditions learned from the
// trace, not from the IR text). Every slice is also written out and must
// pass the checker. Plus a recursion 10^5 calls deep and the error cases.
#include "irt/slice.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "ir_test_util.h"
#include "irt/check.h"
#include "irt/graph.h"
#include "irt/ir/interpreter.h"
#include "irt/output.h"
#include "irt/trace.h"

namespace irt {
namespace {

std::string SliceTestTrace(const std::string& file, const std::string& fn,
                           std::vector<std::string> args,
                           std::optional<std::string> rand = std::nullopt) {
  return irt::testing::TraceTestdata("slice", file, fn, std::move(args), std::move(rand));
}

// The trace as plain vectors, with each node's call.
struct Model {
  std::vector<NodeKind> kind;
  std::vector<std::vector<NodeId>> refs;
  std::vector<int> cond;  // index of a jump's condition reference, or -1
  std::vector<uint32_t> pos, block, aux;
  std::vector<NodeId> level;   // the marker of the call whose body holds the node
  std::vector<NodeId> closes;  // closers: their marker
  std::vector<NodeId> end;     // markers: their closer
  std::vector<std::string> op;
  // (function, block, branch position) -> SSA id of the branch's condition
  std::map<std::tuple<std::string, uint32_t, uint32_t>, uint32_t> branch_cond;
  size_t size() const { return kind.size(); }
};

Model LoadModel(const Trace& t) {
  Model m;
  std::vector<NodeId> stack;
  for (NodeId i = 0; i < t.size(); ++i) {
    auto v = t.node(i);
    EXPECT_TRUE(v.ok());
    m.kind.push_back(v->kind());
    m.refs.push_back(v->refs());
    int c = -1;
    if (v->kind() == NodeKind::kJump && v->has_condition() &&
        v->operand(v->num_operands() - 1).is_ref) {
      c = static_cast<int>(m.refs.back().size()) - 1;
    }
    m.cond.push_back(c);
    m.pos.push_back(v->location().pos);
    m.block.push_back(v->location().block);
    m.aux.push_back(v->block_arg_index());
    m.op.emplace_back(v->op());
    m.closes.push_back(v->closes());
    m.end.push_back(kNoNode);
    if (v->kind() == NodeKind::kCall) {
      m.level.push_back(stack.empty() ? kNoNode : stack.back());
      stack.push_back(i);
    } else {
      m.level.push_back(stack.back());
      if (v->kind() == NodeKind::kReturn || v->kind() == NodeKind::kError) {
        m.end[stack.back()] = i;
        stack.pop_back();
      }
    }
  }
  for (NodeId i = 0; i < m.size(); ++i) {
    if (m.cond[i] >= 0) {
      NodeId c = m.refs[i][m.cond[i]];
      m.branch_cond[{m.op[m.level[i]], m.block[i], m.pos[i]}] = m.pos[c];
    }
  }
  return m;
}

bool IsBranch(NodeKind k) { return k == NodeKind::kJump || k == NodeKind::kReturn; }
bool IsCloserKind(NodeKind k) { return k == NodeKind::kReturn || k == NodeKind::kError; }

// The expected slice, straight from the definitions in slice.h.
// `scope`: the marker of the body a local slice stays in (kNoNode: across calls).
std::set<NodeId> Expected(const Model& m, NodeId start, SliceDirection dir, NodeId scope,
                          bool control) {
  const bool local = scope != kNoNode;
  // A local slice sees the body's nodes, and nested calls as their closers.
  auto unit = [&](NodeId y) {
    return local && IsCloserKind(m.kind[y]) && m.level[m.closes[y]] == scope;
  };
  auto in_scope = [&](NodeId y) {
    if (m.kind[y] == NodeKind::kCall) return false;
    return !local || unit(y) || m.level[y] == scope;
  };
  auto refs_of = [&](NodeId y) -> const std::vector<NodeId>& {
    return unit(y) ? m.refs[m.closes[y]] : m.refs[y];
  };
  auto level_of = [&](NodeId y) { return unit(y) ? scope : m.level[y]; };
  auto pos_of = [&](NodeId y) { return unit(y) ? m.pos[m.closes[y]] : m.pos[y]; };
  // The most recent value of SSA id `ssa` at level L before node x.
  auto latest = [&](NodeId L, NodeId x, uint32_t ssa) -> NodeId {
    for (NodeId y = x; y-- > L;) {
      if (!in_scope(y) || level_of(y) != L) continue;
      if (!unit(y) && (IsBranch(m.kind[y]) || IsCloserKind(m.kind[y]))) continue;
      if (pos_of(y) == ssa) return y;
    }
    return kNoNode;
  };
  auto not_taken = [&](NodeId x, const std::function<void(uint32_t)>& f) {
    if (unit(x) || !IsBranch(m.kind[x])) return;
    for (uint32_t j = 1; j < m.pos[x]; ++j) {
      auto it = m.branch_cond.find({m.op[m.level[x]], m.block[x], j});
      if (it != m.branch_cond.end()) f(it->second);
    }
  };
  std::set<NodeId> data, ctl;
  bool start_jump = m.kind[start] == NodeKind::kJump;
  if (dir == SliceDirection::kBackward) {
    (start_jump ? ctl : data).insert(start);
    bool changed = true;
    while (changed) {
      changed = false;
      auto add = [&](std::set<NodeId>& s, NodeId y) {
        if (!in_scope(y) || data.count(y) || (&s == &ctl && ctl.count(y))) return;
        if (&s == &data) ctl.erase(y);
        s.insert(y);
        changed = true;
      };
      for (NodeId x : std::set<NodeId>(data)) {
        for (NodeId r : refs_of(x)) add(data, r);
      }
      for (NodeId x : std::set<NodeId>(ctl)) {
        if (m.cond[x] >= 0) add(data, m.refs[x][m.cond[x]]);
      }
      if (!control) continue;
      std::set<NodeId> all = data;
      all.insert(ctl.begin(), ctl.end());
      for (NodeId x : all) {
        NodeId L = level_of(x);
        for (NodeId y = L + 1; y < x; ++y) {
          if (m.kind[y] == NodeKind::kJump && m.level[y] == L && in_scope(y)) add(ctl, y);
        }
        not_taken(x, [&](uint32_t ssa) {
          NodeId y = latest(L, x, ssa);
          if (y != kNoNode) add(data, y);
        });
        if (!local) {
          // The calls holding x ran from call sites decided in their callers.
          for (NodeId c = L; c != 0 && m.level[c] != kNoNode; c = m.level[c]) {
            NodeId P = m.level[c];
            for (NodeId y = P + 1; y < c; ++y) {
              if (m.kind[y] == NodeKind::kJump && m.level[y] == P) add(ctl, y);
            }
          }
        }
      }
    }
    data.insert(ctl.begin(), ctl.end());
    return data;
  }
  // Forward.
  std::set<NodeId> sel{start};
  std::vector<std::pair<NodeId, NodeId>> decided_after;  // (level, jump): the rest depends on it
  if (control && start_jump) decided_after.emplace_back(m.level[start], start);
  bool changed = true;
  while (changed) {
    changed = false;
    for (NodeId y = start + 1; y < m.size(); ++y) {
      if (!in_scope(y) || sel.count(y)) continue;
      bool s = false;
      for (NodeId r : refs_of(y)) s = s || sel.count(r) > 0;
      bool decided = false;
      if (control) {
        for (auto [L, j] : decided_after) {
          if (y > j && y <= m.end[L] && (local ? level_of(y) == L : true)) s = true;
        }
        if (m.cond[y] >= 0 && sel.count(m.refs[y][m.cond[y]])) decided = true;
        not_taken(y, [&](uint32_t ssa) {
          NodeId v = latest(level_of(y), y, ssa);
          if (v != kNoNode && sel.count(v)) decided = true;
        });
        if (decided) {
          s = true;
          if (m.kind[y] == NodeKind::kJump) decided_after.emplace_back(m.level[y], y);
        }
      }
      if (s) {
        sel.insert(y);
        changed = true;
      }
    }
  }
  return sel;
}

// Every node's path, and the id a slice from it starts at.
struct Start {
  std::string path;
  Child node;
  NodeId parent;  // marker of the call holding it (kNoNode for the root)
};

std::vector<Start> AllStarts(const Trace& t) {
  std::vector<Start> out;
  auto root = RootCall(t);
  EXPECT_TRUE(root.ok());
  out.push_back({"@", *root, kNoNode});
  std::vector<std::pair<Child, std::string>> stack{{*root, ""}};
  while (!stack.empty()) {
    auto [call, prefix] = stack.back();
    stack.pop_back();
    auto kids = Children(t, call);
    EXPECT_TRUE(kids.ok());
    for (size_t i = 0; i < kids->size(); ++i) {
      std::string path = prefix + (prefix.empty() ? "@" : "/@") + std::to_string(i + 1);
      out.push_back({path, (*kids)[i], call.id});
      if ((*kids)[i].is_call()) stack.push_back({(*kids)[i], path});
    }
  }
  return out;
}

void CheckAllSlices(const std::string& path) {
  auto t = Trace::Open(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Model m = LoadModel(*t);
  int checked = 0;
  for (const Start& st : AllStarts(*t)) {
    for (auto dir : {SliceDirection::kBackward, SliceDirection::kForward}) {
      for (bool through : {false, true}) {
        for (bool control : {false, true}) {
          SliceOptions o{dir, through, control};
          std::string what = path + " " + DescribeSlice(st.path, o);
          auto s = ComputeSlice(*t, st.path, o);
          bool root = st.parent == kNoNode;
          NodeId start = st.node.is_call() ? st.node.end : st.node.id;
          if (m.kind[start] == NodeKind::kJump && !control) {
            ASSERT_FALSE(s.ok()) << what;
            EXPECT_EQ(s.status().code(), Code::kUsage) << what;
            continue;
          }
          ASSERT_TRUE(s.ok()) << what << ": " << s.status().message();
          NodeId scope = through ? kNoNode : (root ? st.node.id : st.parent);
          std::set<NodeId> want = Expected(m, start, dir, scope, control);
          std::set<NodeId> got;
          for (NodeId i = s->NextSelected(0); i != kNoNode; i = s->NextSelected(i + 1)) {
            got.insert(i);
          }
          EXPECT_EQ(got, want) << what;
          EXPECT_EQ(s->size(), got.size()) << what;
          if (!through && !control && !root) {
            // The seed's queries, in positions of the body holding the node.
            auto body = CallBody::Load(*t, Child{st.parent, m.end[st.parent]});
            ASSERT_TRUE(body.ok());
            size_t p = static_cast<size_t>(body->PositionOf(st.node.id));
            auto q = dir == SliceDirection::kBackward ? body->Backward(p) : body->Forward(p);
            ASSERT_TRUE(q.ok());
            std::set<NodeId> seed{start};
            for (size_t r : *q) {
              Child c = (*body)[r];
              seed.insert(c.is_call() ? c.end : c.id);
            }
            EXPECT_EQ(got, seed) << what << " (seed query)";
          }
          // The slice as a trace passes the checker and keeps the root's value.
          std::string out_path = irt::testing::TempPath("slice-out.fb");
          auto out = Output::Open(out_path);
          ASSERT_TRUE(out.ok());
          Status ws = WriteSliceTrace(*t, *s, **out);
          ASSERT_TRUE(ws.ok()) << what << ": " << ws.message();
          ASSERT_TRUE((*out)->Commit().ok());
          auto sum = CheckTrace(out_path);
          ASSERT_TRUE(sum.ok()) << what << ": " << sum.status().message();
          auto sliced = Trace::Open(out_path);
          ASSERT_TRUE(sliced.ok());
          auto a = sliced->node(sliced->size() - 1);
          auto b = t->node(t->size() - 1);
          ASSERT_TRUE(a.ok() && b.ok());
          EXPECT_TRUE(BitEqual(a->value(), b->value())) << what;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(SliceTest, EverySliceOfH) { CheckAllSlices(SliceTestTrace("h.ir", "h", {"2.0", "3"})); }
TEST(SliceTest, EverySliceOfF) { CheckAllSlices(SliceTestTrace("f.ir", "f", {"1.0"})); }
TEST(SliceTest, EverySliceOfGeom) {
  CheckAllSlices(SliceTestTrace("geom.ir", "geom", {"1", "0.5"}, "0.9,0.7,0.1"));
}
TEST(SliceTest, EverySliceOfLooprec) {
  CheckAllSlices(SliceTestTrace("looprec.ir", "looprec", {"2.0", "2"}));
}

// h's return (@26 with n = 2): the slice is exactly the seed's backward(@26)
// plus @26 itself, listed in the seed's numbering.
TEST(SliceTest, BackwardOfHReturnIsSeedBackward) {
  auto t = Trace::Open(SliceTestTrace("h.ir", "h", {"2.0", "2"}));
  ASSERT_TRUE(t.ok());
  auto s = ComputeSlice(*t, "@26", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::set<NodeId> got;
  for (NodeId i = s->NextSelected(0); i != kNoNode; i = s->NextSelected(i + 1)) got.insert(i);
  // Root marker is node 0, so position @k is node k.
  std::set<NodeId> want{26, 23, 21, 20, 19, 18, 15, 14, 13, 12, 11, 10, 7, 6, 5, 4, 2};
  EXPECT_EQ(got, want);
}

// A recursion 10^5 calls deep: every slice mode runs without recursion and
// reaches the bottom.
TEST(SliceTest, DeepRecursion) {
  std::string path = irt::testing::TempPath("slice-deep.ir");
  {
    auto out = Output::Open(path);
    ASSERT_TRUE(out.ok());
    (*out)->Write(
        "function deep\n1: (%1)\n  %2 = Main.down(100000)\n  return %2\nend\n"
        "function down\n1: (%1, %2)\n  %3 = %2 == 0\n  br 2 unless %3\n  return 0\n"
        "2:\n  %4 = %2 - 1\n  %5 = Main.down(%4)\n  %6 = %5 + 1\n  return %6\nend\n");
    ASSERT_TRUE((*out)->Commit().ok());
  }
  ir::TraceRequest req;
  req.module_path = path;
  req.function = "deep";
  auto job = ir::TraceJob::Prepare(req);
  ASSERT_TRUE(job.ok()) << job.status().message();
  std::string fb = irt::testing::TempPath("slice-deep.fb");
  auto out = Output::Open(fb);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(job->Run(**out).ok());
  ASSERT_TRUE((*out)->Commit().ok());
  auto t = Trace::Open(fb);
  ASSERT_TRUE(t.ok());
  for (bool control : {false, true}) {
    auto s = ComputeSlice(*t, "@3", {SliceDirection::kBackward, true, control});
    ASSERT_TRUE(s.ok()) << s.status().message();
    // Each level: the result chain (return, +, the callee's result) and,
    // with control, the comparison, its jump and the argument chain.
    EXPECT_GT(s->size(), 100000u * (control ? 6 : 2));
    std::string o = irt::testing::TempPath("slice-deep-out.fb");
    auto w = Output::Open(o);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(WriteSliceTrace(*t, *s, **w).ok());
    ASSERT_TRUE((*w)->Commit().ok());
    auto sum = CheckTrace(o);
    ASSERT_TRUE(sum.ok()) << sum.status().message();
    EXPECT_EQ(sum->max_depth, 100002u);
  }
  // Forward from the root's argument 100000 reaches the bottom and comes back.
  auto f = ComputeSlice(*t, "@2/@2", {SliceDirection::kForward, true, true});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->Contains(t->size() - 1));
}

TEST(SliceTest, Errors) {
  auto t = Trace::Open(SliceTestTrace("h.ir", "h", {"2.0", "2"}));
  ASSERT_TRUE(t.ok());
  auto jump = ComputeSlice(*t, "@25", {});
  EXPECT_EQ(jump.status().code(), Code::kUsage);
  EXPECT_NE(jump.status().message().find("is a jump"), std::string::npos);
  EXPECT_TRUE(ComputeSlice(*t, "@25", {SliceDirection::kBackward, false, true}).ok());
  EXPECT_EQ(ComputeSlice(*t, "@27", {}).status().code(), Code::kNotFound);
  EXPECT_EQ(ComputeSlice(*t, "@x", {}).status().code(), Code::kUsage);
  EXPECT_EQ(ComputeSlice(*t, "@4/@1", {}).status().code(), Code::kUsage);
}

}  // namespace
}  // namespace irt
