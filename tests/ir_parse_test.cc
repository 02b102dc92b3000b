// Parsing IR modules: the accepted syntax, its resolved form, and every
// kind of error with its FILE:LINE:COL.
#include <gtest/gtest.h>

#include "irt/ir/module.h"

namespace irt::ir {
namespace {

std::string ParseError(std::string_view text) {
  auto m = Module::Parse(text, "t.ir");
  EXPECT_FALSE(m.ok()) << text;
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), Code::kDataError);
  return m.status().message();
}

constexpr std::string_view kGeom = R"(# geom(n, β) = rand() < β ? n : geom(n + 1, β)
function geom
1: (%1, %2, %3)
  %4 = Main.rand()
  %5 = %4 < %3
  br 2 unless %5
  return %2
2:
  %6 = %2 + 1
  %7 = Main.geom(%6, %3)
  return %7
end
)";

TEST(IrParseTest, Geom) {
  auto m = Module::Parse(kGeom, "geom.ir");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->functions().size(), 1u);
  EXPECT_EQ(m->Find("geom"), 0);
  EXPECT_EQ(m->Find("nope"), -1);
  const Function& f = m->functions()[0];
  EXPECT_EQ(f.name, "geom");
  EXPECT_EQ(f.num_params, 2u);
  EXPECT_EQ(f.num_slots, 7u);
  EXPECT_EQ(f.ir_text,
            "1: (%1, %2, %3)\n  %4 = Main.rand()\n  %5 = %4 < %3\n  br 2 unless %5\n"
            "  return %2\n2:\n  %6 = %2 + 1\n  %7 = Main.geom(%6, %3)\n  return %7");
  ASSERT_EQ(f.blocks.size(), 2u);
  ASSERT_EQ(f.code.size(), 7u);
  EXPECT_EQ(f.code[0].code, OpCode::kPrim);
  EXPECT_EQ(f.code[0].op->name, "rand");
  EXPECT_EQ(f.code[0].pos.line, 4u);
  EXPECT_EQ(f.code[0].pos.col, 3u);
  EXPECT_EQ(f.code[1].op->name, "<");
  EXPECT_EQ(f.code[1].name, "<");
  EXPECT_EQ(f.code[2].code, OpCode::kBrUnless);
  EXPECT_EQ(f.code[2].ssa, 1u);  // branch position
  EXPECT_EQ(f.code[2].target, 1u);
  EXPECT_EQ(f.code[3].code, OpCode::kReturn);
  EXPECT_EQ(f.code[3].ssa, 2u);
  EXPECT_EQ(f.code[4].code, OpCode::kPrim);
  EXPECT_EQ(f.code[5].code, OpCode::kCall);
  EXPECT_EQ(f.code[5].target, 0u);
  EXPECT_EQ(f.code[5].block, 2u);
  EXPECT_EQ(f.code[6].code, OpCode::kReturn);
  // %6 = %2 + 1: a slot and a constant.
  const Instr& add = f.code[4];
  EXPECT_FALSE(f.operands[add.first_arg].is_const);
  ASSERT_TRUE(f.operands[add.first_arg + 1].is_const);
  EXPECT_EQ(FormatValue(f.constants[f.operands[add.first_arg + 1].index]), "1");
}

TEST(IrParseTest, SyntaxVariants) {
  auto m = Module::Parse(R"(
function g   # trailing comment
1: (%1, %2::Float64, %3)
  %4 = Base.sin(%2)::Float64
  %5 = -%4
  %6 = !%3
  %7 = %5 ≤ 1.5
  %8 = "a # not a comment"
  %9 = [1.0 2.0; 3.0 4.0]
  %10 = %2 ÷ 2
  %11 = %2 % 2
  %12 = xor(%3, true)
  %13 = -1
  %14 = 2 * %2
  br 2 (%4, -1.5) unless %6
  br 3
2: (%15, %16)
  return %15
3:
  %17 = h(%2)
4:
  return %17
end

function h
1: (%1, %2)
  return %2
end
)",
                         "g.ir");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const Function& g = m->functions()[0];
  EXPECT_EQ(g.num_params, 2u);
  auto stmt = [&](uint32_t ssa) -> const Instr& {
    for (const Instr& in : g.code) {
      if (in.ssa == ssa && in.code != OpCode::kBr && in.code != OpCode::kBrUnless &&
          in.code != OpCode::kReturn) {
        return in;
      }
    }
    static Instr none;
    ADD_FAILURE() << "no %" << ssa;
    return none;
  };
  EXPECT_EQ(stmt(4).op->name, "sin");
  EXPECT_EQ(stmt(5).op->name, "-");
  EXPECT_EQ(stmt(5).op->min_arity, 1);
  EXPECT_EQ(stmt(6).op->name, "!");
  EXPECT_EQ(stmt(7).op->name, "<=");
  EXPECT_EQ(stmt(7).name, "<=");
  EXPECT_EQ(stmt(8).code, OpCode::kConst);
  EXPECT_EQ(FormatValue(g.constants[stmt(8).target]), "\"a # not a comment\"");
  EXPECT_EQ(FormatValue(g.constants[stmt(9).target]), "[1.0 2.0; 3.0 4.0]");
  EXPECT_EQ(stmt(10).name, "div");
  EXPECT_EQ(stmt(11).name, "rem");
  EXPECT_EQ(stmt(12).op->name, "xor");
  EXPECT_EQ(stmt(13).code, OpCode::kConst);
  EXPECT_EQ(stmt(14).op->name, "*");
  EXPECT_EQ(stmt(17).code, OpCode::kCall);
  // Block 3 has no branch: it falls through to block 4 at branch position 1.
  const Block& b3 = g.blocks[2];
  const Instr& fall = g.code[b3.first + 1];
  EXPECT_EQ(fall.code, OpCode::kBr);
  EXPECT_EQ(fall.ssa, 1u);
  EXPECT_EQ(fall.target, 3u);
  EXPECT_EQ(fall.nargs, 0u);
  // The conditional branch: two block arguments, then the condition.
  const Instr& br = g.code[g.blocks[0].first + 11];
  EXPECT_EQ(br.code, OpCode::kBrUnless);
  EXPECT_EQ(br.nargs, 2u);
  EXPECT_TRUE(g.operands[br.first_arg + 1].is_const);
  EXPECT_FALSE(g.operands[br.first_arg + 2].is_const);
}

TEST(IrParseTest, CallsResolveAfterTheWholeModule) {
  auto m = Module::Parse(R"(
function a
1: (%1)
  %2 = b()
  %3 = sin(%2)
  %4 = sin(%2, %2)
  %5 = frobnicate(%2)
  return %5
end
function b
1: (%1)
  return 1.0
end
function sin
1: (%1, %2, %3)
  return %2
end
)",
                         "a.ir");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const Function& a = m->functions()[0];
  EXPECT_EQ(a.code[0].code, OpCode::kCall);  // defined later in the file
  EXPECT_EQ(a.code[0].target, 1u);
  EXPECT_EQ(a.code[1].code, OpCode::kCall);  // module functions shadow primitives
  EXPECT_EQ(a.code[2].code, OpCode::kCall);
  EXPECT_EQ(a.code[3].code, OpCode::kUndefined);  // a runtime error, as in Julia
}

TEST(IrParseTest, Errors) {
  EXPECT_EQ(ParseError("function f\n1: (%1, %2)\n  %3 = %9 + 1\n  return %3\nend\n"),
            "t.ir:3:8: unknown SSA value %9 in function 'f'");
  EXPECT_EQ(ParseError("function f\n1: (%1, %2)\n  %3 = %2 + 1\n  %3 = %2 + 2\n  return %3\nend\n"),
            "t.ir:4:3: redefinition of %3 (first defined at 3:3)");
  EXPECT_EQ(ParseError("function f\n1: (%1, %2)\n  %2 = 1\n  return %2\nend\n"),
            "t.ir:3:3: redefinition of %2 (first defined at 2:9)");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  br 5\nend\n"),
            "t.ir:3:6: unknown block 5 in function 'f'");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  br 1\nend\n"),
            "t.ir:3:6: cannot branch to the entry block 1");
  EXPECT_EQ(ParseError("# f\nfunction f\n1: (%1)\n  return 1\n"),
            "t.ir:2:1: function 'f' has no 'end'");
  EXPECT_EQ(ParseError("function f\n1: (%1, %2)\n  %3 = %2 + 1.5x\n  return %3\nend\n"),
            "t.ir:3:13: bad operand: bad number '1.5x'");
  EXPECT_EQ(ParseError("function f\n1: (%1, %2)\n  %3 = %2 + [1.0, q]\n  return %3\nend\n"),
            "t.ir:3:19: bad operand: unknown name 'q' in literal");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  br 3\n3:\n  return 1\nend\n"),
            "t.ir:4:1: expected block 2, found block 3");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  br 2 (1)\n2: (%2, %3)\n  return %2\nend\n"),
            "t.ir:3:3: block 2 takes 2 arguments, 1 given");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  return 1\n  %2 = 1\nend\n"),
            "t.ir:4:3: statements must come before the branches of their block");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  %2 = 1\nend\n"),
            "t.ir:3:3: block 1 of function 'f' does not end with a return or a branch");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  %2 = 1\n2: (%3)\n  return %3\nend\n"),
            "t.ir:3:3: block 1 falls through to block 2, which takes arguments");
  EXPECT_EQ(ParseError("x = 1\n"), "t.ir:1:1: expected 'function NAME'");
  EXPECT_EQ(
      ParseError("function f\n1: (%1)\n  return 1\nend\nfunction f\n1: (%1)\n  return 2\nend\n"),
      "t.ir:5:10: redefinition of function 'f' (first defined at 1:1)");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  %2 = Foo.bar()\n  return %2\nend\n"),
            "t.ir:3:8: unknown module 'Foo' (only Main., Base. and Core. are understood)");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  %2 1\n  return %2\nend\n"),
            "t.ir:3:6: expected '=' after the SSA value");
  EXPECT_EQ(ParseError("function f\n1:\n  return 1\nend\n"),
            "t.ir:2:1: block 1 must declare the function itself and its parameters, like "
            "'1: (%1, %2)'");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  return 1\nfunction g\n"),
            "t.ir:4:1: missing 'end' of function 'f' before this 'function'");
  EXPECT_EQ(ParseError("function f\nend\n"), "t.ir:2:1: function 'f' has no blocks");
  EXPECT_EQ(ParseError("function f\n  %2 = 1\nend\n"),
            "t.ir:2:3: expected a block header like '1: (%1, %2)'");
  EXPECT_EQ(ParseError("function f\n1: (%1, %2)\n  %3 = %2 @ 1\n  return %3\nend\n"),
            "t.ir:3:11: expected an operator, found '@ 1'");
  EXPECT_EQ(ParseError("function f\n1: (%1, %2)\n  %3 = %2\n  return %3\nend\n"),
            "t.ir:3:8: a statement must compute something: copying %2 is not supported");
  EXPECT_EQ(ParseError("function f\n1: (%1, %2)\n  %3 = sin(%2\n  return %3\nend\n"),
            "t.ir:3:11: missing ')'");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  goto 2\nend\n"),
            "t.ir:3:3: expected a statement, a branch, a block header or 'end'");
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  return 1 2\nend\n"), "t.ir:3:12: unexpected '2'");
  // Columns count characters, not bytes.
  EXPECT_EQ(ParseError("function f\n1: (%1)\n  %3 = \"ββ\" + %9\n  return %3\nend\n"),
            "t.ir:3:15: unknown SSA value %9 in function 'f'");
}

TEST(IrParseTest, WindowsLineEndingsAndNoFinalNewline) {
  auto m = Module::Parse("function f\r\n1: (%1)\r\n  return 1\r\nend", "w.ir");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->functions()[0].ir_text, "1: (%1)\n  return 1");
}

TEST(IrParseTest, LoadReportsMissingFiles) {
  auto m = Module::Load(::testing::TempDir() + "/no-such-module.ir");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kIoError);
}

TEST(IrParseTest, SeedFilesParse) {
  for (const char* name : {"f", "h", "geom", "deep", "loop", "prims", "recloop", "error"}) {
    auto m = Module::Load(std::string(IRT_SOURCE_DIR) + "/testdata/ir/" + name + ".ir");
    EXPECT_TRUE(m.ok()) << name << ": " << m.status().message();
  }
}

}  // namespace
}  // namespace irt::ir
