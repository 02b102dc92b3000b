// Traces read in many small chunks by the analyses that give back the
// decoded chunks they have left (transient columns, internal::LeaveBehind):
// listings and slices are the same as those of the trace in one chunk. And
// the rule that lets a chunk that opens and closes no call be given back
// before the chunks in front of it are checked (Trace::ReleaseColumns).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "ir_test_util.h"
#include "irt/graph.h"
#include "irt/print.h"
#include "irt/slice.h"
#include "irt/trace.h"

namespace irt {
namespace {

using testing::TempPath;
using testing::TraceInChunks;

std::string Printed(const Trace& t, const PrintOptions& opts, bool json) {
  std::string path = TempPath("print-chunks.txt");
  auto out = Output::Open(path);
  EXPECT_TRUE(out.ok());
  Status s = json ? PrintJson(t, opts, **out) : PrintText(t, opts, **out);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE((*out)->Commit().ok());
  return testing::ReadFile(path);
}

struct Program {
  const char* file;
  const char* fn;
  std::vector<Value> args;
};

std::vector<Program> Programs() {
  return {{"h.ir", "h", {Value::F64(0.5), Value::I64(3000)}},
          {"looprec.ir", "looprec", {Value::F64(0.5), Value::I64(120)}},
          {"fib.ir", "fib", {Value::I64(12)}}};
}

// The program traced in 7-node chunks (small) and in one chunk (one).
struct Traced {
  std::string small, one;
};
Traced TraceBoth(const Program& p) {
  std::string module = std::string(IRT_SOURCE_DIR) + "/testdata/ir/" + p.file;
  Traced t{TempPath(std::string(p.fn) + "-small.fb"), TempPath(std::string(p.fn) + "-one.fb")};
  EXPECT_TRUE(TraceInChunks(module, p.fn, p.args, 7, t.small).ok());
  EXPECT_TRUE(TraceInChunks(module, p.fn, p.args, 1u << 20, t.one).ok());
  EXPECT_EQ(testing::OpenTrace(t.one).chunks().size(), 1u);
  EXPECT_GT(testing::OpenTrace(t.small).chunks().size(), 100u);
  return t;
}

TEST(GivenBackTest, ListingDoesNotDependOnChunks) {
  for (const Program& p : Programs()) {
    SCOPED_TRACE(p.fn);
    const auto [small, one] = TraceBoth(p);
    PrintOptions all, two, sub;
    two.levels = 2;
    sub.node_path = "@6";
    for (const PrintOptions* o : {&all, &two, &sub}) {
      for (bool json : {false, true}) {
        SCOPED_TRACE(std::to_string(o->levels) + o->node_path + (json ? " json" : " text"));
        // A fresh Trace for each listing: every one starts with nothing decoded.
        std::string want = Printed(testing::OpenTrace(one), *o, json);
        EXPECT_GT(want.size(), o == &all ? 1000u : 10u);
        EXPECT_EQ(Printed(testing::OpenTrace(small), *o, json), want);
      }
    }
  }
}

// Slices computed and written (as a trace, and as a list) from traces in
// 7-node chunks, backward and forward, within a body and through calls,
// with control dependences: the same as from the trace in one chunk.
TEST(GivenBackTest, SlicesDoNotDependOnChunks) {
  for (const Program& p : Programs()) {
    SCOPED_TRACE(p.fn);
    const auto [small, one] = TraceBoth(p);
    struct Spec {
      const char* path;
      SliceDirection d;
      bool through, control;
    };
    std::vector<Spec> specs = {{"@", SliceDirection::kBackward, false, false},
                               {"@", SliceDirection::kBackward, true, true},
                               {"@2", SliceDirection::kForward, true, false},
                               {"@2", SliceDirection::kForward, false, true}};
    // From the middle of h's loop: the walk back over the body (to find
    // where the start is in it) gives back the start's chunk.
    if (std::string(p.fn) == "h")
      specs.push_back({"@12002", SliceDirection::kForward, false, false});
    for (const Spec& k : specs) {
      SCOPED_TRACE(std::string(k.path) + (k.d == SliceDirection::kBackward ? " back" : " fwd") +
                   (k.through ? " -t" : "") + (k.control ? " -c" : ""));
      SliceOptions o;
      o.direction = k.d;
      o.through_calls = k.through;
      o.control = k.control;
      std::string want_list, want_trace;
      for (const std::string& path : {one, small}) {
        Trace t = testing::OpenTrace(path);
        auto s = ComputeSlice(t, k.path, o);
        ASSERT_TRUE(s.ok()) << s.status().message();
        std::string list_path = TempPath("slice.txt"), trace_path = TempPath("slice.fb");
        {
          auto out = Output::Open(list_path);
          ASSERT_TRUE(out.ok());
          ASSERT_TRUE(PrintSliceList(t, *s, {}, **out).ok());
          ASSERT_TRUE((*out)->Commit().ok());
          auto tout = Output::Open(trace_path);
          ASSERT_TRUE(tout.ok());
          ASSERT_TRUE(WriteSliceTrace(t, *s, **tout).ok());
          ASSERT_TRUE((*tout)->Commit().ok());
        }
        std::string list = testing::ReadFile(list_path);
        std::string listed = Printed(testing::OpenTrace(trace_path), {}, false);
        if (path == one) {
          want_list = list;
          want_trace = listed;
          EXPECT_GT(list.size(), 20u);
        } else {
          EXPECT_EQ(list, want_list);
          EXPECT_EQ(listed, want_trace);
        }
      }
    }
  }
}

// A chunk that opens and closes no call (a stretch of a loop) can be given
// back before the chunks in front of it are verified, and read again; a
// chunk that opens or closes one cannot until the chunks before it are
// checked (its closers against the calls they leave open). The trace still
// verifies in order afterwards.
TEST(GivenBackTest, ChunksWithoutCallsGoBackBeforeTheyAreChecked) {
  std::string module = std::string(IRT_SOURCE_DIR) + "/testdata/ir/looprec.ir";
  std::string path = TempPath("looprec-release.fb");
  ASSERT_TRUE(TraceInChunks(module, "looprec", {Value::F64(0.5), Value::I64(30)}, 7, path).ok());
  Trace t = testing::OpenTrace(path);
  t.UseTransientColumns();
  const uint32_t n = static_cast<uint32_t>(t.chunks().size());
  ASSERT_GT(n, 20u);
  int with = 0, without = 0;
  // From the end down: chunk 0 stays unverified, so no chunk is fed.
  for (uint32_t k = n - 1; k-- > 1;) {
    const ChunkInfo& c = t.chunks()[k];
    bool calls = false;
    std::vector<uint64_t> bits;
    for (NodeId i = c.base; i < c.base + c.num_nodes; ++i) {
      auto v = t.node(i);
      ASSERT_TRUE(v.ok()) << v.status().message();
      calls = calls || v->kind() == NodeKind::kCall || v->kind() == NodeKind::kReturn;
      bits.push_back(v->bits());
    }
    if (calls) {
      ++with;
      EXPECT_EQ(t.ReleaseColumns(k), 0u) << k;
      continue;
    }
    ++without;
    EXPECT_GT(t.ReleaseColumns(k), 0u) << k;
    EXPECT_EQ(t.ReleaseColumns(k), 0u) << k;  // once
    for (NodeId i = c.base; i < c.base + c.num_nodes; ++i) {
      auto v = t.node(i);
      ASSERT_TRUE(v.ok()) << v.status().message();
      EXPECT_EQ(v->bits(), bits[i - c.base]) << i;
    }
    EXPECT_GT(t.ReleaseColumns(k), 0u) << k;  // read again, given back again
  }
  EXPECT_GT(with, 0);
  EXPECT_GT(without, 0);
  // In order from chunk 0: every chunk is fed, the released ones included.
  for (NodeId i = 0; i < t.size(); ++i) ASSERT_TRUE(t.node(i).ok()) << i;
  auto root = RootCall(t);
  ASSERT_TRUE(root.ok()) << root.status().message();
  EXPECT_EQ(root->end, t.size() - 1);
  EXPECT_TRUE(CallBody::Load(t, *root).ok());
}

}  // namespace
}  // namespace irt
