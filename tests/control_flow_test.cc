// Control-flow facts (format 1.1): the rules valid facts follow, the writer
// round trip through the one reader, the 1.0 compatibility parser, and the
// IR adapter's facts against what that parser derives from the same text.
#include "io/control_flow.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "irt/ir/interpreter.h"
#include "irt/ir/module.h"
#include "irt/output.h"
#include "irt/trace.h"
#include "irt/writer.h"
#include "test_util.h"

namespace irt {
namespace {

BranchFact Br(uint32_t block, uint32_t pos, uint32_t target, uint32_t cond = 0,
              bool conditional = false) {
  BranchFact b;
  b.block = block;
  b.pos = pos;
  b.target = target;
  b.condition = cond;
  b.conditional = conditional;
  return b;
}

// geom: `br 2 unless %5` and `return %2` in block 1, `return %7` in block 2.
ControlFlow Geom() {
  ControlFlow f;
  f.blocks = 2;
  f.branches = {Br(1, 1, 2, 5, true), Br(1, 2, 0), Br(2, 1, 0)};
  return f;
}

bool Same(const BranchFact& a, const BranchFact& b) {
  return a.block == b.block && a.pos == b.pos && a.target == b.target &&
         a.conditional == b.conditional && a.condition == b.condition &&
         a.taken_when == b.taken_when;
}

TEST(ControlFlowTest, RulesAcceptValidFacts) {
  EXPECT_EQ(CheckControlFlow(Geom()), "");
  ControlFlow empty_blocks;
  empty_blocks.blocks = 3;  // blocks without branches are allowed
  EXPECT_EQ(CheckControlFlow(empty_blocks), "");
}

TEST(ControlFlowTest, RulesRefuseMalformedFacts) {
  auto refused = [](ControlFlow f) { return CheckControlFlow(f); };
  ControlFlow f = Geom();
  f.blocks = 0;
  EXPECT_NE(refused(f), "");
  f = Geom();
  f.blocks = kMaxControlFlowBlocks + 1;
  EXPECT_NE(refused(f).find("more than"), std::string::npos);
  f = Geom();
  f.branches[1].pos = 3;
  EXPECT_NE(refused(f).find("position 3 where 2 is due"), std::string::npos);
  f = Geom();
  std::swap(f.branches[0], f.branches[2]);
  EXPECT_NE(refused(f).find("not sorted"), std::string::npos);
  f = Geom();
  f.branches[0].target = 9;
  EXPECT_NE(refused(f).find("target block 9"), std::string::npos);
  f = Geom();
  f.branches[1].conditional = true;
  EXPECT_NE(refused(f).find("a return has no condition"), std::string::npos);
  f = Geom();
  f.branches[0].conditional = false;
  EXPECT_NE(refused(f).find("unconditional"), std::string::npos);
  f = Geom();
  f.branches[2].block = 0;
  EXPECT_NE(refused(f).find("block out of range"), std::string::npos);
}

TEST(ControlFlowTest, WriterRefusesInvalidFacts) {
  auto out = Output::Open(irt::testing::TempPath("cf-bad.fb"));
  ASSERT_TRUE(out.ok());
  TraceWriter w(out->get(), {});
  ControlFlow f = Geom();
  f.branches[0].target = 7;
  w.RegisterControlFlow("geom", f);
  EXPECT_FALSE(w.status().ok());
  EXPECT_NE(w.status().message().find("control flow of 'geom'"), std::string::npos);
}

TEST(ControlFlowTest, WriterRoundTripThroughTheReader) {
  std::string path = irt::testing::TempPath("cf-roundtrip.fb");
  {
    auto out = Output::Open(path);
    ASSERT_TRUE(out.ok());
    TraceWriter w(out->get(), {});
    // No IR text at all: an adapter may record the facts alone.
    w.RegisterControlFlow("g", Geom());
    ClassSpec root{.kind = NodeKind::kCall, .op = "g"};
    ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 2};
    ClassSpec cst{.kind = NodeKind::kConstant, .block = 1, .pos = 3};
    ret.operands = {OperandSpec::Ref()};
    ClassId c_root = w.DefineClass(root), c_cst = w.DefineClass(cst), c_ret = w.DefineClass(ret);
    w.Append(c_root, Value(), {});
    NodeId c = w.Append(c_cst, Value::I64(3), {});
    w.Append(c_ret, Value::I64(3), std::vector<NodeId>{c});
    ASSERT_TRUE(w.Finish().ok()) << w.status().message();
    ASSERT_TRUE((*out)->Commit().ok());
  }
  auto t = Trace::Open(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format_minor(), kFormatMinor);
  EXPECT_FALSE(t->FunctionIR("g", 0).has_value());
  internal::ControlFlowIndex index(*t);
  std::string missing;
  const internal::FunctionFlow* f = index.Find("g", 0, &missing);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(missing, "");
  ASSERT_EQ(f->facts().branches.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(Same(f->facts().branches[i], Geom().branches[i]));
  EXPECT_TRUE(f->IsCondition(5));
  EXPECT_FALSE(f->IsCondition(2));
  std::vector<uint32_t> conds;
  f->NotTaken(1, 2, [&](const BranchFact& b) { conds.push_back(b.condition); });
  EXPECT_EQ(conds, std::vector<uint32_t>{5});
  conds.clear();
  f->NotTaken(2, 1, [&](const BranchFact& b) { conds.push_back(b.condition); });
  EXPECT_TRUE(conds.empty());
  // A function the trace says nothing about is missing once.
  EXPECT_EQ(index.Find("h", 0, &missing), nullptr);
  EXPECT_EQ(missing, "no control-flow facts for 'h'");
  EXPECT_EQ(index.Find("h", 0, &missing), nullptr);
  EXPECT_EQ(missing, "");
}

TEST(ControlFlowTest, CompatibilityParserReadsIRToolsBranches) {
  ControlFlow f = internal::ParseControlFlowText(
      "1: (%1, %2, %3)\n  %4 = Main.rand()\n  %5 = %4 < %3  # \"br 9 unless %9\"\n"
      "  br 2 unless %5\n  return %2\n2:\n  %6 = %2 + 1\n  %7 = Main.geom(%6, %3)\n"
      "  return %7\n");
  EXPECT_EQ(CheckControlFlow(f), "");
  ASSERT_EQ(f.branches.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(Same(f.branches[i], Geom().branches[i])) << i;
  // Arguments, literal conditions, hostile block numbers.
  f = internal::ParseControlFlowText(
      "1:\n  br 2 (0, %4) unless true\n  br 3\n99999999999:\n  return 1\n2: (%5, %6)\n"
      "  return %5\n");
  EXPECT_EQ(CheckControlFlow(f), "");
  ASSERT_EQ(f.branches.size(), 3u);
  EXPECT_TRUE(Same(f.branches[0], Br(1, 1, 2, 0, true)));
  EXPECT_TRUE(Same(f.branches[1], Br(1, 2, 3)));
  EXPECT_TRUE(Same(f.branches[2], Br(2, 1, 0)));
  EXPECT_EQ(f.blocks, 3u);
  // No blocks at all: still valid facts, with no branches.
  f = internal::ParseControlFlowText("garbage\n");
  EXPECT_EQ(CheckControlFlow(f), "");
  EXPECT_TRUE(f.branches.empty());
}

// The 1.0 rule derives from IR text what irt-trace now records: for every
// function of every module in testdata/ir, the branches the text shows are
// the adapter's, in each block before its fall-through.
TEST(ControlFlowTest, AdapterFactsMatchTheTextOfEveryTestModule) {
  std::string dir = std::string(IRT_SOURCE_DIR) + "/testdata/ir";
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 3 && n.substr(n.size() - 3) == ".ir") files.push_back(n);
  }
  closedir(d);
  ASSERT_FALSE(files.empty());
  for (const std::string& file : files) {
    std::string path = irt::testing::TempPath("cf-" + file + ".fb");
    auto m = ir::Module::Load(dir + "/" + file);
    ASSERT_TRUE(m.ok()) << m.status().message();
    for (const ir::Function& fn : m->functions()) {
      ControlFlow text = internal::ParseControlFlowText(fn.ir_text);
      // The adapter's facts, as written into a trace by irt-trace.
      // A run that fails (wrong argument types, the step limit) still
      // leaves a complete trace with the facts.
      ir::TraceRequest req;
      req.module_path = dir + "/" + file;
      req.function = fn.name;
      req.args.assign(fn.num_params, "1");
      req.max_steps = 10000;
      auto job = ir::TraceJob::Prepare(req);
      ASSERT_TRUE(job.ok()) << job.status().message();
      {
        auto out = Output::Open(path);
        ASSERT_TRUE(out.ok());
        (void)job->Run(**out);
        ASSERT_TRUE((*out)->Commit().ok());
      }
      auto t = Trace::Open(path);
      ASSERT_TRUE(t.ok()) << t.status().message();
      internal::ControlFlowIndex index(*t);
      std::string missing;
      const internal::FunctionFlow* facts = index.Find(fn.name, 0, &missing);
      ASSERT_NE(facts, nullptr) << file << " " << fn.name;
      EXPECT_EQ(facts->facts().blocks, fn.blocks.size());
      for (const BranchFact& b : text.branches) {
        auto in_block = facts->Block(b.block);
        ASSERT_GE(in_block.size(), b.pos) << file << " " << fn.name;
        EXPECT_TRUE(Same(in_block[b.pos - 1], b))
            << file << " " << fn.name << " §" << b.block << ":&" << b.pos;
      }
    }
  }
}

}  // namespace
}  // namespace irt
