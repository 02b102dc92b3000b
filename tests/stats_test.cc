// irt-stats' streaming counts checked against counts computed directly from
// node views and the call tree, on the seed programs, a program of our own,
// a failed run and a recursion deep enough to use the depth buckets.
#include "irt/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "irt/graph.h"
#include "irt/ir/interpreter.h"
#include "irt/output.h"
#include "irt/trace.h"
#include "test_util.h"

namespace irt {
namespace {

std::string StatsTestTrace(const std::string& name, const std::string& ir, const std::string& fn,
                           std::vector<std::string> args,
                           std::optional<std::string> rand = std::nullopt) {
  std::string path = irt::testing::TempPath("stats-" + name);
  std::string module = ir;
  if (ir.find('\n') != std::string::npos) {
    module = path + ".ir";
    auto out = Output::Open(module);
    EXPECT_TRUE(out.ok());
    (*out)->Write(ir);
    EXPECT_TRUE((*out)->Commit().ok());
  } else {
    module = std::string(IRT_SOURCE_DIR) + "/testdata/ir/" + ir;
  }
  ir::TraceRequest req;
  req.module_path = module;
  req.function = fn;
  req.args = std::move(args);
  req.rand_values = std::move(rand);
  auto job = ir::TraceJob::Prepare(req);
  EXPECT_TRUE(job.ok()) << job.status().message();
  auto out = Output::Open(path + ".fb");
  EXPECT_TRUE(out.ok());
  (void)job->Run(**out);  // a failing program still leaves a complete trace
  EXPECT_TRUE((*out)->Commit().ok());
  return path + ".fb";
}

// The statistics, computed the slow way: a walk over the call tree.
TraceStats Expected(const Trace& t, uint32_t top) {
  TraceStats s;
  s.nodes = t.size();
  std::map<std::pair<NodeKind, std::string>, uint64_t> ops;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> depths;  // depth -> calls, nodes
  std::vector<CallStat> calls;
  auto root = RootCall(t);
  EXPECT_TRUE(root.ok());
  // (call, depth, path)
  std::vector<std::tuple<Child, uint32_t, std::string>> stack{{*root, 1, "@"}};
  while (!stack.empty()) {
    auto [call, depth, path] = stack.back();
    stack.pop_back();
    auto marker = t.node(call.id);
    EXPECT_TRUE(marker.ok());
    calls.push_back({call.id, std::string(marker->op()), call.end - call.id + 1, depth,
                     depth - 1 <= kStatsPathDepth ? path : ""});
    depths[depth].first += 1;
    depths[depth].second += 1;  // the marker
    auto kids = Children(t, call);
    EXPECT_TRUE(kids.ok());
    for (size_t i = 0; i < kids->size(); ++i) {
      const Child& c = (*kids)[i];
      std::string p = (path == "@" ? "@" : path + "/@") + std::to_string(i + 1);
      if (c.is_call()) {
        stack.push_back({c, depth + 1, p});
      } else {
        depths[depth].second += 1;
      }
    }
  }
  for (NodeId i = 0; i < t.size(); ++i) {
    auto v = t.node(i);
    EXPECT_TRUE(v.ok());
    ++s.kinds[static_cast<size_t>(v->kind())];
    if (!v->op().empty()) ++ops[{v->kind(), std::string(v->op())}];
  }
  for (const auto& [k, n] : ops) s.ops.push_back({k.second, k.first, n});
  std::sort(s.ops.begin(), s.ops.end(), [](const auto& a, const auto& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.op < b.op;
  });
  for (const auto& [d, cn] : depths) {
    uint32_t lo = d, hi = d;
    if (d > kStatsExactDepths) {
      lo = kStatsExactDepths + 1;
      hi = 2 * kStatsExactDepths;
      while (d > hi) {
        lo = hi + 1;
        hi *= 2;
      }
    }
    if (!s.depths.empty() && s.depths.back().lo == lo) {
      s.depths.back().calls += cn.first;
      s.depths.back().nodes += cn.second;
    } else {
      s.depths.push_back({lo, hi, cn.first, cn.second});
    }
  }
  s.calls = calls.size();
  for (const CallStat& c : calls) {
    if (c.depth > s.deepest.depth || (c.depth == s.deepest.depth && c.marker < s.deepest.marker)) {
      s.deepest = c;
    }
  }
  std::sort(calls.begin(), calls.end(), [](const CallStat& a, const CallStat& b) {
    if (a.nodes != b.nodes) return a.nodes > b.nodes;
    return a.marker < b.marker;
  });
  calls.resize(std::min<size_t>(calls.size(), top));
  s.heaviest = calls;
  return s;
}

void ExpectSameCall(const CallStat& a, const CallStat& b, const std::string& what) {
  EXPECT_EQ(a.marker, b.marker) << what;
  EXPECT_EQ(a.op, b.op) << what;
  EXPECT_EQ(a.nodes, b.nodes) << what;
  EXPECT_EQ(a.depth, b.depth) << what;
  EXPECT_EQ(a.path, b.path) << what;
}

void CheckStats(const std::string& path, uint32_t top = 5) {
  auto t = Trace::Open(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  uint64_t chunks_seen = 0;
  auto got = ComputeStats(path, {top, true}, [&](const ChunkRow& r) {
    EXPECT_EQ(r.index, chunks_seen);
    EXPECT_EQ(r.base, t->chunks()[r.index].base);
    EXPECT_EQ(r.bytes, t->chunks()[r.index].size + 4);
    ++chunks_seen;
  });
  ASSERT_TRUE(got.ok()) << got.status().message();
  TraceStats want = Expected(*t, top);
  EXPECT_EQ(chunks_seen, t->chunks().size());
  EXPECT_EQ(got->chunks, t->chunks().size());
  EXPECT_EQ(got->nodes, want.nodes);
  EXPECT_EQ(got->bytes, t->file_bytes());
  EXPECT_EQ(got->kinds, want.kinds);
  ASSERT_EQ(got->ops.size(), want.ops.size());
  for (size_t i = 0; i < want.ops.size(); ++i) {
    EXPECT_EQ(got->ops[i].op, want.ops[i].op);
    EXPECT_EQ(got->ops[i].kind, want.ops[i].kind);
    EXPECT_EQ(got->ops[i].count, want.ops[i].count);
  }
  ASSERT_EQ(got->depths.size(), want.depths.size());
  for (size_t i = 0; i < want.depths.size(); ++i) {
    EXPECT_EQ(got->depths[i].lo, want.depths[i].lo) << i;
    EXPECT_EQ(got->depths[i].hi, want.depths[i].hi) << i;
    EXPECT_EQ(got->depths[i].calls, want.depths[i].calls) << i;
    EXPECT_EQ(got->depths[i].nodes, want.depths[i].nodes) << i;
  }
  EXPECT_EQ(got->calls, want.calls);
  ExpectSameCall(got->deepest, want.deepest, "deepest");
  ASSERT_EQ(got->heaviest.size(), want.heaviest.size());
  for (size_t i = 0; i < want.heaviest.size(); ++i) {
    ExpectSameCall(got->heaviest[i], want.heaviest[i], "heaviest " + std::to_string(i));
  }
}

TEST(StatsTest, SeedPrograms) {
  CheckStats(StatsTestTrace("h", "h.ir", "h", {"2.0", "3"}));
  CheckStats(StatsTestTrace("f", "f.ir", "f", {"1.0"}));
  CheckStats(StatsTestTrace("geom", "geom.ir", "geom", {"1", "0.5"}, "0.9,0.7,0.6,0.1"), 2);
  CheckStats(StatsTestTrace("looprec", "looprec.ir", "looprec", {"2.0", "4"}), 3);
}

TEST(StatsTest, FailedRun) {
  CheckStats(StatsTestTrace("failed",
                            "function g\n1: (%1, %2)\n  %3 = Main.h(%2)\n  return %3\nend\n"
                            "function h\n1: (%1, %2)\n  %3 = div(%2, 0)\n  return %3\nend\n",
                            "g", {"1"}));
}

// 300 calls deep: depths past 64 are bucketed, paths stop after depth 33.
TEST(StatsTest, DeepRecursionBuckets) {
  std::string path =
      StatsTestTrace("deep",
                     "function down\n1: (%1, %2)\n  %3 = %2 == 0\n  br 2 unless %3\n  return 0\n"
                     "2:\n  %4 = %2 - 1\n  %5 = Main.down(%4)\n  %6 = %5 + 1\n  return %6\nend\n",
                     "down", {"300"});
  CheckStats(path, 40);
  auto s = ComputeStats(path, {});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->deepest.depth, 301u);
  EXPECT_EQ(s->deepest.path, "");
  EXPECT_EQ(s->depths.back().lo, 257u);
  EXPECT_EQ(s->depths.back().hi, 512u);
}

TEST(StatsTest, Errors) {
  EXPECT_EQ(ComputeStats(irt::testing::TempPath("stats-none.fb"), {}).status().code(),
            Code::kIoError);
}

}  // namespace
}  // namespace irt
