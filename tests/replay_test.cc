// irt-replay's library (eval_test.cc and ir_eval_test.cc cover the
// primitive table it evaluates with): replays against fresh traces of the same programs at the new
// values (random programs included), divergences, prefixes, in-place updates, chunk rebuilding and
// deep traces.
#include "irt/replay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "ir_test_util.h"
#include "irt/diff.h"
#include "irt/eval.h"
#include "irt/grad.h"
#include "irt/graph.h"
#include "irt/ir/interpreter.h"
#include "irt/npy.h"
#include "irt/print.h"
#include "irt/rules.h"
#include "irt/writer.h"

namespace irt {
namespace {

using testing::TraceInChunks;

namespace fs = std::filesystem;

#define ASSERT_OK(expr)                     \
  do {                                      \
    ::irt::Status st_ = (expr);             \
    ASSERT_TRUE(st_.ok()) << st_.message(); \
  } while (0)

// A scratch directory removed at the end of the test.
class Scratch {
 public:
  Scratch() {
    std::string t = (fs::temp_directory_path() / "irt-replay-test-XXXXXX").string();
    dir_ = mkdtemp(t.data());
  }
  ~Scratch() { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }

 private:
  std::string dir_;
};

std::string Root() { return IRT_SOURCE_DIR; }

// Traces function(args) of `module` to `out`; rand_values "" uses the seed.
Status TraceTo(const std::string& module, const std::string& function,
               const std::vector<std::string>& args, const std::string& out,
               const std::string& rand_values = "", uint64_t seed = 1) {
  ir::TraceRequest r;
  r.module_path = module;
  r.function = function;
  r.args = args;
  r.seed = seed;
  if (!rand_values.empty()) r.rand_values = rand_values;
  IRT_ASSIGN_OR_RETURN(ir::TraceJob job, ir::TraceJob::Prepare(r));
  IRT_ASSIGN_OR_RETURN(auto o, Output::Open(out));
  Status s = job.Run(*o);
  if (!s.ok() && s.code() != Code::kRuntimeError) return s;
  return o->Commit();
}

// Node-for-node equality: kinds, locations, operations, values (bit for
// bit), references and metadata. Returns "" or the first difference.
std::string SameNodes(const Trace& a, const Trace& b, uint64_t limit = ~0ull) {
  uint64_t n = std::min<uint64_t>({a.size(), b.size(), limit});
  if (limit == ~0ull && a.size() != b.size()) {
    return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  }
  for (NodeId i = 0; i < n; ++i) {
    auto x = a.node(i), y = b.node(i);
    if (!x.ok() || !y.ok()) return "unreadable node " + std::to_string(i);
    Location lx = x->location(), ly = y->location();
    if (x->kind() != y->kind() || lx.block != ly.block || lx.pos != ly.pos || x->op() != y->op()) {
      return "node " + std::to_string(i) + " is another statement";
    }
    if (!BitEqual(x->value(), y->value())) {
      return "node " + std::to_string(i) + ": " + FormatValue(x->value()) + " vs " +
             FormatValue(y->value());
    }
    if (x->refs() != y->refs()) return "node " + std::to_string(i) + ": references differ";
    if (x->num_operands() != y->num_operands()) return "node " + std::to_string(i) + ": operands";
    for (size_t k = 0; k < x->num_operands(); ++k) {
      Operand p = x->operand(k), q = y->operand(k);
      if (p.is_ref != q.is_ref || (!p.is_ref && !BitEqual(p.literal, q.literal))) {
        return "node " + std::to_string(i) + ": operand " + std::to_string(k);
      }
    }
    auto ma = x->meta(), mb = y->meta();
    if (ma.size() != mb.size()) return "node " + std::to_string(i) + ": metadata";
    for (size_t k = 0; k < ma.size(); ++k) {
      if (ma[k].key != mb[k].key || !BitEqual(ma[k].value, mb[k].value)) {
        return "node " + std::to_string(i) + ": metadata " + std::string(ma[k].key) + " " +
               FormatValue(ma[k].value) + " vs " + FormatValue(mb[k].value);
      }
    }
  }
  return "";
}

// ------------------------------------------------------------ replays

// Replays `changes` on the trace at `in`, writes the result to `out`.
Result<ReplayResult> ReplayFile(const std::string& in, const std::vector<std::string>& sets,
                                const std::string& out, bool prefix = false) {
  std::vector<ReplayChange> changes;
  for (const auto& s : sets) {
    IRT_ASSIGN_OR_RETURN(ReplayChange c, ParseReplayChange(s));
    changes.push_back(c);
  }
  IRT_ASSIGN_OR_RETURN(Trace t, Trace::Open(in));
  ReplayOptions o;
  o.prefix = prefix;
  IRT_ASSIGN_OR_RETURN(Replay r, Replay::Run(t, changes, o));
  if (r.has_output()) {
    IRT_ASSIGN_OR_RETURN(auto f, Output::Open(out));
    IRT_RETURN_IF_ERROR(r.Write(*f));
    IRT_RETURN_IF_ERROR(f->Commit());
  }
  return r.result();
}

TEST(ReplayTest, RootArgumentMatchesAFreshTrace) {
  Scratch s;
  std::string h = Root() + "/testdata/ir/h.ir";
  ASSERT_OK(TraceTo(h, "h", {"2.0", "3"}, s.Path("a.fb")));
  auto r = ReplayFile(s.Path("a.fb"), {"@2=1.5"}, s.Path("r.fb"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->divergence);
  ASSERT_OK(TraceTo(h, "h", {"1.5", "3"}, s.Path("fresh.fb")));
  Trace got = testing::OpenTrace(s.Path("r.fb")), want = testing::OpenTrace(s.Path("fresh.fb"));
  EXPECT_EQ(SameNodes(got, want), "");
  // Only the nodes that depend on x were evaluated: the ^ and + of each
  // iteration and the values they flow into; the loop counter was not.
  EXPECT_LT(r->evaluated, got.size());
  for (NodeId id : r->changed) {
    auto v = got.node(id);
    ASSERT_TRUE(v.ok());
    EXPECT_NE(v->value().kind(), VKind::kI64) << "the counter changed at node " << id;
  }
  // The root call's literal arguments follow the argument node.
  auto root = got.node(0);
  EXPECT_EQ(FormatValue(root->operand(0).literal), "1.5");
}

TEST(ReplayTest, RandomDrawsKeepTheirValuesUnlessSet) {
  Scratch s;
  std::string g = Root() + "/testdata/ir/geom.ir";
  ASSERT_OK(TraceTo(g, "geom", {"1", "0.5"}, s.Path("a.fb"), "0.9,0.3"));
  // The inner draw 0.3 -> 0.2 keeps the path: same as a fresh run with 0.9,0.2.
  auto r = ReplayFile(s.Path("a.fb"), {"@8/@4=0.2"}, s.Path("r.fb"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->divergence);
  ASSERT_OK(TraceTo(g, "geom", {"1", "0.5"}, s.Path("fresh.fb"), "0.9,0.2"));
  EXPECT_EQ(SameNodes(testing::OpenTrace(s.Path("r.fb")), testing::OpenTrace(s.Path("fresh.fb"))),
            "");
  // Changing β re-evaluates both comparisons but not the draws.
  r = ReplayFile(s.Path("a.fb"), {"@3=0.35"}, s.Path("r2.fb"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->divergence);
  ASSERT_OK(TraceTo(g, "geom", {"1", "0.35"}, s.Path("fresh2.fb"), "0.9,0.3"));
  EXPECT_EQ(SameNodes(testing::OpenTrace(s.Path("r2.fb")), testing::OpenTrace(s.Path("fresh2.fb"))),
            "");
}

TEST(ReplayTest, Divergences) {
  Scratch s;
  std::string g = Root() + "/testdata/ir/geom.ir";
  ASSERT_OK(TraceTo(g, "geom", {"1", "0.5"}, s.Path("a.fb"), "0.9,0.3"));
  // A recorded jump whose condition flips.
  auto r = ReplayFile(s.Path("a.fb"), {"@4=0.1"}, s.Path("x.fb"));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->divergence);
  EXPECT_EQ(r->divergence->kind, ReplayDivergence::Kind::kBranch);
  EXPECT_EQ(r->divergence->path, "@6");
  EXPECT_EQ(r->divergence->condition_path, "@5");
  EXPECT_EQ(FormatValue(r->divergence->old_value), "false");
  EXPECT_EQ(FormatValue(r->divergence->new_value), "true");
  EXPECT_TRUE(r->changed.empty());
  EXPECT_FALSE(fs::exists(s.Path("x.fb")));
  // A branch that was not taken (br 2 unless %5, then return) would be.
  r = ReplayFile(s.Path("a.fb"), {"@8/@4=0.8"}, s.Path("x.fb"));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->divergence);
  EXPECT_EQ(r->divergence->kind, ReplayDivergence::Kind::kNotTaken);
  EXPECT_EQ(r->divergence->path, "@8/@6");
  EXPECT_EQ(r->divergence->condition_path, "@8/@5");
  EXPECT_NE(r->divergence->message.find("br 2 unless %5"), std::string::npos);
}

TEST(ReplayTest, PrefixIsTheFreshTraceUpToTheDivergence) {
  Scratch s;
  std::string g = Root() + "/testdata/ir/geom.ir";
  ASSERT_OK(TraceTo(g, "geom", {"1", "0.5"}, s.Path("a.fb"), "0.9,0.3"));
  auto r = ReplayFile(s.Path("a.fb"), {"@8/@4=0.8"}, s.Path("p.fb"), /*prefix=*/true);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->divergence);
  NodeId cut = r->divergence->node;
  Trace p = testing::OpenTrace(s.Path("p.fb"), /*partial=*/true);
  EXPECT_FALSE(p.complete());
  EXPECT_EQ(p.size(), cut);
  ASSERT_OK(TraceTo(g, "geom", {"1", "0.5"}, s.Path("fresh.fb"), "0.9,0.8,0.1"));
  Trace fresh = testing::OpenTrace(s.Path("fresh.fb"));
  EXPECT_EQ(SameNodes(p, fresh, cut), "");
  // The fresh run takes another branch at the cut.
  Trace orig = testing::OpenTrace(s.Path("a.fb"));
  auto x = orig.node(cut), y = fresh.node(cut);
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_NE(x->location().pos, y->location().pos);
}

TEST(ReplayTest, FailureIsADivergence) {
  Scratch s;
  std::string m = s.Write("m.ir",
                          "function f\n1: (%1, %2)\n  %3 = %2 - 1\n  %4 = Main.div(1, %3)\n"
                          "  return %4\nend\n");
  ASSERT_OK(TraceTo(m, "f", {"5"}, s.Path("a.fb")));
  auto r = ReplayFile(s.Path("a.fb"), {"@2=1"}, s.Path("x.fb"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->divergence);
  EXPECT_EQ(r->divergence->kind, ReplayDivergence::Kind::kFailure);
  EXPECT_EQ(r->divergence->path, "@4");
  EXPECT_NE(r->divergence->message.find("DivideError"), std::string::npos);
  r = ReplayFile(s.Path("a.fb"), {"@2=2"}, s.Path("y.fb"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->divergence);
  EXPECT_EQ(FormatValue(testing::OpenTrace(s.Path("y.fb")).node(5)->value()), "1");
}

TEST(ReplayTest, BadChanges) {
  Scratch s;
  std::string g = Root() + "/testdata/ir/geom.ir";
  ASSERT_OK(TraceTo(g, "geom", {"1", "0.5"}, s.Path("a.fb"), "0.9,0.3"));
  auto code = [&](std::vector<std::string> sets) {
    auto r = ReplayFile(s.Path("a.fb"), sets, s.Path("x.fb"));
    return r.ok() ? Code::kOk : r.status().code();
  };
  EXPECT_EQ(code({"@30=1"}), Code::kNotFound);          // no such node
  EXPECT_EQ(code({"@6=1"}), Code::kUsage);              // a jump
  EXPECT_EQ(code({"@8=1"}), Code::kUsage);              // a nested call
  EXPECT_EQ(code({"@9=1"}), Code::kUsage);              // a return
  EXPECT_EQ(code({"@3=1"}), Code::kUsage);              // Int64 for a Float64
  EXPECT_EQ(code({"@3=0.1", "@3=0.2"}), Code::kUsage);  // twice
  EXPECT_EQ(code({"@3"}), Code::kUsage);                // no value
  EXPECT_EQ(code({"@3=zzz"}), Code::kUsage);            // not a literal
  EXPECT_EQ(code({"@2=2"}), Code::kOk);
}

TEST(ReplayTest, CallsRecordedWithoutBodiesCannotBeReevaluated) {
  Scratch s;
  ir::TraceRequest req;
  req.module_path = Root() + "/testdata/ir/geom.ir";
  req.function = "geom";
  req.args = {"1", "0.5"};
  req.rand_values = "0.9,0.3";
  req.context.max_depth = 2;
  auto job = ir::TraceJob::Prepare(req);
  ASSERT_TRUE(job.ok());
  auto o = Output::Open(s.Path("a.fb"));
  ASSERT_TRUE(job->Run(**o).ok());
  ASSERT_TRUE((*o)->Commit().ok());
  auto r = ReplayFile(s.Path("a.fb"), {"@2=5"}, s.Path("x.fb"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnsupported);
  EXPECT_NE(r.status().message().find("⟨geom⟩"), std::string::npos) << r.status().message();
}

// Changes spread over many small chunks: only the chunks holding changed
// nodes are rebuilt, and the result reads back as the fresh trace. In the
// longer trace the path is found by a forward scan over tens of chunks,
// which it gives back as it leaves them: the replay still reads them where
// it needs to.
TEST(ReplayTest, RebuildsOnlyTheChunksThatChanged) {
  struct Shape {
    const char* x;
    const char* n;
    uint32_t chunk_nodes;
    size_t min_chunks;
    const char* new_x;
  };
  for (const Shape& k : {Shape{"2.0", "40", 5, 50, "0.5"}, Shape{"0.5", "4000", 64, 400, "0.25"}}) {
    SCOPED_TRACE(k.n);
    Scratch s;
    std::string h = Root() + "/testdata/ir/h.ir";
    ASSERT_OK(TraceInChunks(h, "h", {Value::F64(std::stod(k.x)), Value::I64(std::stoll(k.n))},
                            k.chunk_nodes, s.Path("a.fb")));
    Trace a = testing::OpenTrace(s.Path("a.fb"));
    ASSERT_GT(a.chunks().size(), k.min_chunks);
    // The accumulator's last value: only the tail changes.
    NodeId ret = a.size() - 1;
    NodeId acc = a.node(ret)->refs()[0];
    auto path = ResolvePath(a, "@" + std::to_string(acc));
    ASSERT_TRUE(path.ok()) << path.status().message();
    auto r = ReplayFile(s.Path("a.fb"), {"@" + std::to_string(acc) + "=1.0"}, s.Path("r.fb"));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_LE(r->chunks_rebuilt, 2u);
    EXPECT_EQ(r->changed.size(), 2u);  // the block argument and the return
    Trace b = testing::OpenTrace(s.Path("r.fb"));
    EXPECT_EQ(b.size(), a.size());
    EXPECT_EQ(FormatValue(b.node(ret)->value()), "1.0");
    EXPECT_EQ(SameNodes(a, b, acc), "");
    // x changes everything after the first ^: every chunk but the first few.
    r = ReplayFile(s.Path("a.fb"), {std::string("@2=") + k.new_x}, s.Path("r2.fb"));
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_OK(TraceTo(h, "h", {k.new_x, k.n}, s.Path("fresh.fb")));
    EXPECT_EQ(
        SameNodes(testing::OpenTrace(s.Path("r2.fb")), testing::OpenTrace(s.Path("fresh.fb"))), "");
  }
}

// The root's arguments span two chunks of 3 nodes: a change to the one in
// the second chunk edits the root marker's operands in the first after the
// walk has left it (a late edit), and the first, rebuilt for the other
// change and never read again, keeps only its bytes by then.
TEST(ReplayTest, LateEditOfARebuiltChunkTheWalkLeftBehind) {
  Scratch s;
  std::string text = "function p\n1: (%1, %2, %3)\n  %4 = %3 + 1\n";
  for (int k = 5; k < 40; ++k) {
    text += "  %" + std::to_string(k) + " = %" + std::to_string(k - 1) + " * 2\n";
  }
  text += "  return %39\nend\n";
  std::string module = s.Write("p.ir", text);
  ASSERT_OK(TraceInChunks(module, "p", {Value::F64(1.5), Value::F64(2.0)}, 3, s.Path("a.fb")));
  ASSERT_GT(testing::OpenTrace(s.Path("a.fb")).chunks().size(), 10u);
  auto r = ReplayFile(s.Path("a.fb"), {"@2=5.5", "@3=7.0"}, s.Path("r.fb"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_OK(TraceTo(module, "p", {"5.5", "7.0"}, s.Path("fresh.fb")));
  EXPECT_EQ(SameNodes(testing::OpenTrace(s.Path("r.fb")), testing::OpenTrace(s.Path("fresh.fb"))),
            "");
  Trace replayed = testing::OpenTrace(s.Path("r.fb"));
  auto root = replayed.node(0);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(FormatValue(root->operand(1).literal), "7.0");
}

TEST(ReplayTest, MutableTraceUpdatesInPlace) {
  Scratch s;
  std::string g = Root() + "/testdata/ir/geom.ir";
  ASSERT_OK(TraceTo(g, "geom", {"1", "0.5"}, s.Path("a.fb"), "0.9,0.3"));
  auto mt = MutableTrace::Open(s.Path("a.fb"));
  ASSERT_TRUE(mt.ok()) << mt.status().message();
  // A Metropolis-like sequence of moves on the inner draw.
  for (double u : {0.1, 0.2, 0.45, 0.05}) {
    std::vector<ReplayChange> c = {{"@8/@4", Value::F64(u)}};
    auto r = mt->Update(c);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->divergence);
    auto node = ResolvePath(mt->trace(), "@8/@4");
    EXPECT_EQ(mt->trace().node(node->id)->value().as_f64(), u);
  }
  // A move that would change the path leaves the trace as it was.
  std::vector<ReplayChange> c = {{"@8/@4", Value::F64(0.7)}};
  auto r = mt->Update(c);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->divergence);
  auto node = ResolvePath(mt->trace(), "@8/@4");
  EXPECT_EQ(mt->trace().node(node->id)->value().as_f64(), 0.05);
  EXPECT_TRUE(mt->trace().complete());
}

// Replays deep in a trace 10^5 calls deep: the walk keeps its own stack.
TEST(ReplayTest, DeepRecursion) {
  Scratch s;
  std::string m = s.Write("d.ir",
                          "function deep\n1: (%1, %2)\n  %3 = Main.down(%2, 100000)\n  return %3\n"
                          "end\n"
                          "function down\n1: (%1, %2, %3)\n  %4 = %3 == 0\n  br 2 unless %4\n"
                          "  return %2\n2:\n  %5 = %3 - 1\n  %6 = Main.down(%2, %5)\n"
                          "  %7 = %6 * 1.0\n  return %7\nend\n");
  ASSERT_OK(TraceTo(m, "deep", {"2.0"}, s.Path("a.fb")));
  auto r = ReplayFile(s.Path("a.fb"), {"@2=3.0"}, s.Path("r.fb"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->divergence);
  ASSERT_OK(TraceTo(m, "deep", {"3.0"}, s.Path("fresh.fb")));
  EXPECT_EQ(SameNodes(testing::OpenTrace(s.Path("r.fb")), testing::OpenTrace(s.Path("fresh.fb"))),
            "");
}

TEST(ReplayTest, TensorValuesAreRebuilt) {
  Scratch s;
  std::string m = s.Write("t.ir",
                          "function f\n1: (%1, %2, %3)\n  %4 = Main.zero(%2)\n  %5 = %3 * 2.0\n"
                          "  return %2\nend\n");
  ASSERT_OK(TraceTo(m, "f", {"[1.0, 2.0]", "1.0"}, s.Path("a.fb")));
  auto r = ReplayFile(s.Path("a.fb"), {"@2=[5.0, 6.0, 7.0]"}, s.Path("r.fb"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_OK(TraceTo(m, "f", {"[5.0, 6.0, 7.0]", "1.0"}, s.Path("fresh.fb")));
  EXPECT_EQ(SameNodes(testing::OpenTrace(s.Path("r.fb")), testing::OpenTrace(s.Path("fresh.fb"))),
            "");
}

// A loop that reads a tensor argument element by element, and a tensor it
// makes anew in every iteration (nodes whose ids meet in the walk's cache
// of recently read tensors): the replay at a new argument is the fresh
// trace.
TEST(ReplayTest, TensorsReadElementByElement) {
  Scratch s;
  std::string m =
      s.Write("t.ir",
              "function f\n1: (%1, %2, %3)\n  br 2 (1, 0.0)\n2: (%4, %5)\n  %6 = %4 <= %3\n"
              "  br 4 unless %6\n  br 3\n3:\n  %7 = %2 * %5\n  %8 = Main.getindex(%7, %4)\n"
              "  %9 = Main.getindex(%2, %4)\n  %10 = %8 + %9\n  %11 = %5 + %10\n  %12 = %4 + 1\n"
              "  br 2 (%12, %11)\n4:\n  return %5\nend\n");
  auto vec = [](double scale) {
    std::string v = "[";
    for (int k = 0; k < 40; ++k) v += (k ? ", " : "") + std::to_string(scale * (k % 7 + 1) / 8);
    return v + "]";
  };
  ASSERT_OK(TraceTo(m, "f", {vec(1.0), "40"}, s.Path("a.fb")));
  auto r = ReplayFile(s.Path("a.fb"), {"@2=" + vec(0.5)}, s.Path("r.fb"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_OK(TraceTo(m, "f", {vec(0.5), "40"}, s.Path("fresh.fb")));
  EXPECT_EQ(SameNodes(testing::OpenTrace(s.Path("r.fb")), testing::OpenTrace(s.Path("fresh.fb"))),
            "");
  EXPECT_GT(r->changed.size(), 200u);
}

// A tensor passed to a call per iteration: each call's argument node is
// compared with its new value where the trace holds it, bit for bit (a
// -0.0 for a 0.0 is a change), and set only when it differs.
TEST(ReplayTest, TensorsPassedToCalls) {
  Scratch s;
  std::string m =
      s.Write("c.ir",
              "function sq\n1: (%1, %2, %3)\n  %4 = Main.getindex(%2, %3)\n  %5 = %4 * %4\n"
              "  return %5\nend\n\nfunction f\n1: (%1, %2, %3)\n  br 2 (1, 0.0)\n2: (%4, %5)\n"
              "  %6 = %4 <= %3\n  br 4 unless %6\n  br 3\n3:\n  %7 = sq(%2, %4)\n  %8 = %5 + %7\n"
              "  %9 = %4 + 1\n  br 2 (%9, %8)\n4:\n  return %5\nend\n");
  ASSERT_OK(TraceTo(m, "f", {"[0.5, 0.0, 1.5, 2.0]", "4"}, s.Path("a.fb")));
  auto same = ReplayFile(s.Path("a.fb"), {"@2=[0.5, 0.0, 1.5, 2.0]"}, s.Path("same.fb"));
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_TRUE(same->changed.empty()) << same->changed.size();
  auto r = ReplayFile(s.Path("a.fb"), {"@2=[0.5, -0.0, 1.5, 2.0]"}, s.Path("r.fb"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  // The root's argument, each of the 4 calls', and the element the second
  // call reads (its square does not change: (-0.0)^2 = 0.0).
  EXPECT_EQ(r->changed.size(), 6u);
  ASSERT_OK(TraceTo(m, "f", {"[0.5, -0.0, 1.5, 2.0]", "4"}, s.Path("fresh.fb")));
  EXPECT_EQ(SameNodes(testing::OpenTrace(s.Path("r.fb")), testing::OpenTrace(s.Path("fresh.fb"))),
            "");
}

// --set takes a tensor from a .npy file as irt-trace takes arguments.
TEST(ReplayTest, ChangeFromNpyFile) {
  Scratch s;
  Tensor x = Tensor::Zeros(DType::kF64, {3});
  for (int k = 0; k < 3; ++k) x.f64()[k] = 5.0 + k;
  ASSERT_OK(WriteNpy(Value::MakeTensor(std::move(x)), s.Path("x.npy")));
  auto c = ParseReplayChange("@2=@" + s.Path("x.npy"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->path, "@2");
  EXPECT_EQ(FormatValue(c->value), "[5.0, 6.0, 7.0]");
  auto missing = ParseReplayChange("@2=@" + s.Path("missing.npy"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kIoError);
  EXPECT_TRUE(missing.status().message().starts_with("--set @2: ")) << missing.status().message();
  auto bad = ParseReplayChange("@2=[1.0, ");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kUsage);
}

// ------------------------------------------------------------ random programs

// A random program: a loop whose body mixes arithmetic on the argument, the
// accumulator and random draws, branches on a comparison, and calls a helper
// that branches again. Some programs fail (sqrt of a negative number).
class ProgramGen {
 public:
  explicit ProgramGen(uint32_t seed) : rng_(seed) {}

  std::string Generate() {
    std::string text;
    // helper(a, b)
    next_ = 4;
    text += "function helper\n1: (%1, %2, %3)\n";
    std::vector<uint32_t> vals = {2, 3};
    uint32_t a = Ops(text, vals, 2);
    uint32_t c = next_++;
    text += "  %" + std::to_string(c) + " = %" + std::to_string(a) + " < " + Threshold() + "\n";
    text += "  br 3 unless %" + std::to_string(c) + "\n  br 2\n2:\n";
    std::vector<uint32_t> v2 = vals;
    uint32_t r1 = Ops(text, v2, 1);
    text += "  return %" + std::to_string(r1) + "\n3:\n";
    std::vector<uint32_t> v3 = vals;
    uint32_t r2 = Ops(text, v3, 2);
    text += "  return %" + std::to_string(r2) + "\nend\n";
    // main(x, n)
    next_ = 4;
    text += "function main\n1: (%1, %2, %3)\n  %4 = Main.zero(%2)\n  br 2 (0, %4)\n";
    text += "2: (%5, %6)\n  %7 = %5 < %3\n  br 4 unless %7\n  br 3\n3:\n";
    next_ = 8;
    std::vector<uint32_t> body = {2, 6};
    if (Coin()) {
      uint32_t u = next_++;
      text += "  %" + std::to_string(u) + " = Main.rand()\n";
      body.push_back(u);
    }
    uint32_t t = Ops(text, body, 3);
    uint32_t cond = next_++;
    text += "  %" + std::to_string(cond) + " = %" + std::to_string(t) + " > " + Threshold() + "\n";
    text += "  br 5 unless %" + std::to_string(cond) + "\n  br 6\n4:\n  return %6\n5:\n";
    std::vector<uint32_t> b5 = body;
    uint32_t w = Ops(text, b5, 2);
    uint32_t i5 = next_++;
    text += "  %" + std::to_string(i5) + " = %5 + 1\n  br 2 (%" + std::to_string(i5) + ", %" +
            std::to_string(w) + ")\n6:\n";
    std::vector<uint32_t> b6 = body;
    uint32_t q = Ops(text, b6, 1);
    uint32_t call = next_++;
    text += "  %" + std::to_string(call) + " = Main.helper(%" + std::to_string(q) + ", %2)\n";
    uint32_t i6 = next_++;
    text += "  %" + std::to_string(i6) + " = %5 + 1\n  br 2 (%" + std::to_string(i6) + ", %" +
            std::to_string(call) + ")\nend\n";
    return text;
  }

 private:
  bool Coin() { return std::uniform_int_distribution<int>(0, 1)(rng_) == 1; }
  std::string Threshold() {
    return FormatDouble(std::round(std::uniform_real_distribution<double>(-1, 1)(rng_) * 8) / 8);
  }
  // Appends `count` random statements over `vals` (growing it); returns the last.
  uint32_t Ops(std::string& text, std::vector<uint32_t>& vals, int count) {
    static const char* unary[] = {"Main.sin", "Main.cos", "Main.tanh", "Main.abs", "-"};
    static const char* binary[] = {"+", "-", "*", "Main.max", "Main.min"};
    uint32_t last = vals.back();
    for (int i = 0; i < count; ++i) {
      auto pick = [&] {
        return vals[std::uniform_int_distribution<size_t>(0, vals.size() - 1)(rng_)];
      };
      uint32_t id = next_++;
      int kind = std::uniform_int_distribution<int>(0, 9)(rng_);
      std::string e;
      if (kind < 4) {
        std::string f = unary[std::uniform_int_distribution<int>(0, 4)(rng_)];
        e = f == "-" ? "-%" + std::to_string(pick()) : f + "(%" + std::to_string(pick()) + ")";
      } else if (kind < 9) {
        std::string f = binary[std::uniform_int_distribution<int>(0, 4)(rng_)];
        std::string x = "%" + std::to_string(pick()), y = "%" + std::to_string(pick());
        e = f.rfind("Main.", 0) == 0 ? f + "(" + x + ", " + y + ")" : x + " " + f + " " + y;
      } else {
        e = "Main.sqrt(%" + std::to_string(pick()) + ")";  // fails below zero
      }
      text += "  %" + std::to_string(id) + " = " + e + "\n";
      vals.push_back(id);
      last = id;
    }
    return last;
  }
  std::mt19937 rng_;
  uint32_t next_ = 4;
};

// All rand() draws of a trace, in order.
std::vector<double> Draws(const Trace& t) {
  std::vector<double> out;
  for (NodeId i = 0; i < t.size(); ++i) {
    auto v = t.node(i);
    if (v->kind() == NodeKind::kPrimitive && v->op() == "rand") out.push_back(v->value().as_f64());
  }
  return out;
}

std::string Join(const std::vector<double>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + FormatDouble(v[i]);
  return s;
}

// "@8/@4" for a node: its position and its ancestors', counted by walking
// back over siblings (hopping over finished calls).
std::string PathOfNode(const Trace& t, NodeId id) {
  std::vector<uint64_t> parts;
  NodeId cur = id;
  while (cur != 0) {
    uint64_t count = 0;
    NodeId i = cur;
    for (;;) {
      auto v = t.node(i - 1);
      if (v->kind() == NodeKind::kReturn || v->kind() == NodeKind::kError) {
        i = v->closes();
      } else if (v->kind() == NodeKind::kCall) {
        break;
      } else {
        --i;
      }
      ++count;
    }
    parts.push_back(count + 1);
    cur = i - 1;
  }
  std::string out;
  for (size_t i = parts.size(); i-- > 0;) {
    out += (i + 1 == parts.size() ? "@" : "/@") + std::to_string(parts[i]);
  }
  return out;
}

// The essential property: replaying a change equals tracing the program
// afresh at the new values, and so do the gradients irt-grad computes from
// the two traces; when the replay reports a divergence, the fresh trace
// agrees with the prefix and goes elsewhere at the cut.
TEST(ReplayPropertyTest, RandomProgramsAgreeWithFreshTraces) {
  Scratch s;
  std::mt19937 rng(20240601);
  int same = 0, diverged = 0, failed_programs = 0, gradients = 0;
  auto rules_or = RuleSet::Load(Root() + "/rules/default.rules");
  ASSERT_TRUE(rules_or.ok()) << rules_or.status().message();
  const RuleSet& rules = *rules_or;
  for (uint32_t trial = 0; trial < 150; ++trial) {
    ProgramGen gen(trial * 7919 + 1);
    std::string mod = s.Write("p" + std::to_string(trial) + ".ir", gen.Generate());
    double x = std::round(std::uniform_real_distribution<double>(-2, 2)(rng) * 64) / 64;
    int n = std::uniform_int_distribution<int>(0, 6)(rng);
    std::string a = s.Path("a.fb");
    ASSERT_OK(TraceTo(mod, "main", {FormatDouble(x), std::to_string(n)}, a, "", trial));
    Trace orig = testing::OpenTrace(a);
    std::vector<double> draws = Draws(orig);
    // One change: x, n, or one draw.
    std::vector<std::string> sets;
    std::string x2 = FormatDouble(x), n2 = std::to_string(n);
    std::vector<double> draws2 = draws;
    int what = std::uniform_int_distribution<int>(0, draws.empty() ? 1 : 2)(rng);
    if (what == 0) {
      x2 = FormatDouble(std::round(std::uniform_real_distribution<double>(-2, 2)(rng) * 64) / 64);
      sets.push_back("@2=" + x2);
    } else if (what == 1) {
      n2 = std::to_string(std::uniform_int_distribution<int>(0, 6)(rng));
      sets.push_back("@3=" + n2);
    } else {
      size_t k = std::uniform_int_distribution<size_t>(0, draws.size() - 1)(rng);
      draws2[k] = std::round(std::uniform_real_distribution<double>(0, 1)(rng) * 64) / 64;
      NodeId id = 0;
      size_t seen = 0;
      for (NodeId i = 0; i < orig.size(); ++i) {
        auto v = orig.node(i);
        if (v->kind() == NodeKind::kPrimitive && v->op() == "rand" && seen++ == k) id = i;
      }
      std::string path = PathOfNode(orig, id);
      sets.push_back(path + "=" + FormatDouble(draws2[k]));
    }
    bool orig_failed = false;
    for (const auto& m : orig.trace_meta()) {
      if (m.key == "status" && m.value.str() == "failed") orig_failed = true;
    }
    failed_programs += orig_failed;
    auto r = ReplayFile(a, sets, s.Path("r.fb"), /*prefix=*/true);
    ASSERT_TRUE(r.ok()) << "trial " << trial << ": " << r.status().message();
    std::string fresh = s.Path("fresh.fb");
    ASSERT_OK(TraceTo(mod, "main", {x2, n2}, fresh, Join(draws2), trial));
    Trace f = testing::OpenTrace(fresh);
    if (!r->divergence) {
      Trace got = testing::OpenTrace(s.Path("r.fb"));
      EXPECT_EQ(SameNodes(got, f), "") << "trial " << trial << " " << sets[0];
      // Trace-level facts of the run agree too (not the adapter's record of
      // its command line).
      for (const MetaEntry& m : f.trace_meta()) {
        if (m.key != "status" && m.key != "error" && m.key != "function") continue;
        bool found = false;
        for (const MetaEntry& g : got.trace_meta()) {
          if (g.key == m.key) {
            found = true;
            EXPECT_TRUE(BitEqual(g.value, m.value))
                << "trial " << trial << " " << m.key << ": " << FormatValue(g.value) << " vs "
                << FormatValue(m.value);
          }
        }
        EXPECT_TRUE(found) << m.key;
      }
      // irt-grad on the trace updated in place agrees with irt-grad on the
      // fresh trace, bit for bit (or fails the same way, for a failed run).
      auto mt = MutableTrace::Open(a);
      ASSERT_TRUE(mt.ok());
      std::vector<ReplayChange> changes;
      for (const auto& spec : sets) changes.push_back(*ParseReplayChange(spec));
      auto upd = mt->Update(changes);
      ASSERT_TRUE(upd.ok() && !upd->divergence) << "trial " << trial;
      EXPECT_EQ(upd->changed, r->changed);
      auto g1 = Differentiate(mt->trace(), rules, GradOptions{});
      auto g2 = Differentiate(f, rules, GradOptions{});
      ASSERT_EQ(g1.ok(), g2.ok()) << "trial " << trial << ": "
                                  << (g1.ok() ? g2 : g1).status().message();
      if (g1.ok()) {
        ASSERT_EQ(g1->arguments.size(), g2->arguments.size());
        for (size_t k = 0; k < g1->arguments.size(); ++k) {
          EXPECT_TRUE(BitEqual(g1->arguments[k].derivative, g2->arguments[k].derivative))
              << "trial " << trial << ": d/d@" << g1->arguments[k].pos << " "
              << FormatValue(g1->arguments[k].derivative) << " vs "
              << FormatValue(g2->arguments[k].derivative);
        }
        EXPECT_TRUE(BitEqual(g1->result, g2->result));
        ++gradients;
      } else {
        EXPECT_EQ(g1.status().code(), g2.status().code());
      }
      ++same;
    } else {
      Trace got = testing::OpenTrace(s.Path("r.fb"), /*partial=*/true);
      NodeId cut = r->divergence->node;
      EXPECT_EQ(got.size(), cut);
      EXPECT_EQ(SameNodes(got, f, cut), "") << "trial " << trial << " " << sets[0];
      ASSERT_LT(cut, f.size()) << "trial " << trial;
      auto x1 = orig.node(cut), y1 = f.node(cut);
      bool elsewhere = x1->kind() != y1->kind() || x1->location().pos != y1->location().pos ||
                       x1->location().block != y1->location().block;
      EXPECT_TRUE(elsewhere) << "trial " << trial << ": " << r->divergence->message;
      ++diverged;
    }
  }
  // Both outcomes must actually be exercised.
  EXPECT_GT(same, 20);
  EXPECT_GT(diverged, 20);
  EXPECT_GT(gradients, 20);
  RecordProperty("replays_equal", same);
  RecordProperty("replays_diverged", diverged);
  RecordProperty("failed_programs", failed_programs);
  RecordProperty("gradients_equal", gradients);
}

}  // namespace
}  // namespace irt
