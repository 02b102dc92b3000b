// IRTracker's text format and the JSON form (irt/print.h) on the seed
// README's f(x) = sin(x) + x, built through the writer: one node's line,
// the whole listing, levels, subtrees and metadata.
#include "irt/print.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "irt/graph.h"
#include "irt/output.h"
#include "irt/trace.h"
#include "irt/writer.h"
#include "test_util.h"

namespace irt {
namespace {

using testing::TempPath;
using testing::WriteAndOpen;
using testing::WriteSeedF;

// Runs `print` into a temporary file and returns what it wrote.
std::string Printed(const std::function<Status(Output&)>& print) {
  std::string path = TempPath("printed.txt");
  auto out = Output::Open(path);
  EXPECT_TRUE(out.ok());
  Status s = print(**out);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE((*out)->Commit().ok());
  return testing::ReadFile(path);
}

TEST(PrintTest, FormatNodeLines) {
  Trace t = WriteAndOpen("f.fb", WriteSeedF);
  auto root = RootCall(t);
  ASSERT_TRUE(root.ok());
  auto body = CallBody::Load(t, *root);
  ASSERT_TRUE(body.ok());
  PrintOptions opts;
  EXPECT_EQ(*FormatNode(t, *body, 1, opts), "@2: [Arg:§1:%2] 1.0::Float64");
  EXPECT_EQ(*FormatNode(t, *body, 2, opts), "@3: [§1:%3] ⟨sin⟩(@2) → 0.8414709848078965::Float64");
  EXPECT_EQ(*FormatNode(t, *body, 3, opts),
            "@4: [§1:%4] ⟨+⟩(@3, @2) → 1.8414709848078965::Float64");
  EXPECT_EQ(*FormatNode(t, *body, 4, opts), "@5: [§1:&1] return @4 → 1.8414709848078965::Float64");
}

TEST(PrintTest, TextListingLevelsAndSubtrees) {
  Trace t = WriteAndOpen("f.fb", WriteSeedF);
  std::string all = Printed([&](Output& o) { return PrintText(t, {}, o); });
  EXPECT_EQ(all,
            "⟨f⟩(⟨1.0⟩, ()...) → 1.8414709848078965::Float64\n"
            "  @1: [Arg:§1:%1] f::typeof(f)\n"
            "  @2: [Arg:§1:%2] 1.0::Float64\n"
            "  @3: [§1:%3] ⟨sin⟩(@2) → 0.8414709848078965::Float64\n"
            "  @4: [§1:%4] ⟨+⟩(@3, @2) → 1.8414709848078965::Float64\n"
            "  @5: [§1:&1] return @4 → 1.8414709848078965::Float64\n");
  PrintOptions top;
  top.levels = 1;
  EXPECT_EQ(Printed([&](Output& o) { return PrintText(t, top, o); }),
            "⟨f⟩(⟨1.0⟩, ()...) → 1.8414709848078965::Float64\n");
  PrintOptions sub;
  sub.node_path = "@3";
  EXPECT_EQ(Printed([&](Output& o) { return PrintText(t, sub, o); }),
            "@3: [§1:%3] ⟨sin⟩(@2) → 0.8414709848078965::Float64\n");
  PrintOptions missing;
  missing.node_path = "@9";
  auto out = Output::Open(TempPath("missing.txt"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(PrintText(t, missing, **out).code(), Code::kNotFound);
}

TEST(PrintTest, MetadataIsShownUnlessDisabled) {
  Trace t = WriteAndOpen("meta.fb", [](TraceWriter& w) {
    ClassSpec root{.kind = NodeKind::kCall, .op = "m"};
    ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
    ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
    ret.operands = {OperandSpec::Ref()};
    ClassId cr = w.DefineClass(root), cc = w.DefineClass(c), ct = w.DefineClass(ret);
    w.Append(cr, Value(), {});
    NodeId k = w.Append(cc, Value::I64(2), {});
    w.AddMeta("tag", Value::String("x"));
    w.Append(ct, Value::I64(2), std::vector<NodeId>{k});
  });
  std::string with = Printed([&](Output& o) { return PrintText(t, {}, o); });
  EXPECT_NE(with.find("# tag = \"x\""), std::string::npos) << with;
  PrintOptions off;
  off.show_meta = false;
  std::string without = Printed([&](Output& o) { return PrintText(t, off, o); });
  EXPECT_EQ(without.find("tag"), std::string::npos) << without;
}

TEST(PrintTest, JsonNamesEveryNode) {
  Trace t = WriteAndOpen("f.fb", WriteSeedF);
  std::string json = Printed([&](Output& o) { return PrintJson(t, {}, o); });
  EXPECT_EQ(json.front(), '{');
  EXPECT_NE(json.find("\"root\""), std::string::npos);
  EXPECT_NE(json.find("\"op\":\"sin\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"children\""), std::string::npos);
}

}  // namespace
}  // namespace irt
