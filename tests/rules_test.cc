// Derivative rules as data: the rule file syntax, its errors with line and
// column, merging rule sets, and the shipped rules (closed, and covering
// the standard operation set).
#include "irt/rules.h"

#include <gtest/gtest.h>

#include <string>

#include "irt/ops.h"

namespace irt {
namespace {

const RuleSet& DefaultRules() {
  static const RuleSet* rules = [] {
    auto r = RuleSet::Load(std::string(IRT_SOURCE_DIR) + "/rules/default.rules");
    EXPECT_TRUE(r.ok()) << r.status().message();
    return new RuleSet(r.ok() ? std::move(r).value() : RuleSet());
  }();
  return *rules;
}

TEST(RulesTest, ShippedRulesParseAndAreClosed) {
  const RuleSet& r = DefaultRules();
  EXPECT_GT(r.rules().size(), 20u);
  Status s = r.CheckClosure();
  EXPECT_TRUE(s.ok()) << s.message();
  // Both directions are present in every shipped rule.
  for (const Rule& rule : r.rules()) {
    EXPECT_TRUE(rule.forward.has_value()) << rule.Signature();
  }
}

// The shipped rules cover the standard operation set: a row flagged
// nondiff (or random) is declared nondiff, every other row has a rule under
// its rule name for some arity it takes.
TEST(RulesTest, EveryStandardOperationHasARuleOrIsNondiff) {
  const RuleSet& r = DefaultRules();
  for (const OpDef& op : StandardOps()) {
    if (op.Has(kOpNondiff) || op.Has(kOpRandom)) {
      EXPECT_TRUE(r.IsNondiff(op.name)) << op.name << " is nondiff in the operation set";
      EXPECT_TRUE(op.rule.empty()) << op.name;
      continue;
    }
    EXPECT_FALSE(r.IsNondiff(op.name)) << op.name << " is differentiable in the operation set";
    if (op.rule.empty()) {  // tuple's pass through natively; others: no derivative yet
      for (size_t n = op.min_arity; n <= op.min_arity + 3u; ++n) {
        EXPECT_EQ(r.Find(op.name, n), nullptr) << op.name;
      }
      continue;
    }
    bool found = false;
    size_t top = op.max_arity == kOpVariadic ? op.min_arity + 3 : op.max_arity;
    for (size_t n = op.min_arity; n <= top; ++n) found = found || r.Find(op.rule, n) != nullptr;
    EXPECT_TRUE(found) << "standard operation " << op.name << " has no rule";
  }
}

TEST(RulesTest, RuleFileSyntax) {
  auto r = RuleSet::Parse(
      "# comment\n"
      "nondiff foo bar\n"
      "\n"
      "f(x, y) -> z   # a rule\n"
      "  dz = dx * y + x * dy\n"
      "  dx = dz * y\n"
      "  dy = x * dz\n"
      "g(v, i...) -> w\n"
      "  dw = getindex(dv, i...)\n"
      "  dv[i...] += dw\n"
      "h(A) -> B\n"
      "  dB = dA'\n"
      "  dA = dB'\n",
      "t.rules");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->IsNondiff("foo"));
  const Rule* f = r->Find("f", 2);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->Signature(), "f(x, y) -> z");
  EXPECT_TRUE(f->Differentiates(0));
  EXPECT_EQ(r->Find("f", 3), nullptr);
  const Rule* g = r->Find("g", 4);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->variadic);
  EXPECT_EQ(g->index[0].size(), 1u);
  EXPECT_FALSE(g->Differentiates(1));
  const Rule* h = r->Find("h", 1);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->forward->name, "transpose");
}

TEST(RulesTest, ErrorsNameLineAndColumn) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"f(x) -> y\n  dy = cos(x * dx\n", "t.rules:2:18: expected ',' or ')'"},
      {"f(x) -> y\n  dy = q * dx\n  dx = dy\n", "t.rules:2:8: unknown name 'q'"},
      {"f(x) -> y\n  dz = dx\n", "t.rules:2:3: 'dz' is not d followed by the result"},
      {"f(x) -> y\n  dy = nosuch(dx)\n  dx = dy\n", "t.rules:2:8: unknown primitive 'nosuch'"},
      {"  dx = 1\n", "t.rules:1:1: an indented line outside a rule"},
      {"f(x, y) -> z\n  dz = dx + dy\n  dx = dz\n",
       "t.rules:1:1: the forward line of f(x, y) -> z uses dy but no reverse line computes dy"},
      {"f(x) -> y\n  dy = dx\n  dx = dx\n", "t.rules:3:8: a reverse line cannot use dx"},
      {"f(x) -> y\n  dy = dx\n  dx = dy\nf(a) -> b\n  db = da\n  da = db\n",
       "t.rules:4:1: a second rule for f with 1 arguments"},
      {"f x(y) -> z\n", "t.rules:1:1: a rule's name is one word before '('"},
      {"f x -> y\n", "t.rules:1:1: expected a rule header 'name(args) -> result'"},
      {"f(x) -> y\n  dy = 1.2.3 * dx\n", "t.rules:2:8: bad number '1.2.3'"},
      {"f(x) -> y\n", "t.rules:1:1: the rule for f(x) -> y has no lines"},
  };
  for (const Case& c : cases) {
    auto r = RuleSet::Parse(c.text, "t.rules");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().message().substr(0, std::string(c.message).size()), c.message)
        << r.status().message();
  }
  // Hostile nesting is an error, not a stack overflow.
  std::string deep = "f(x) -> y\n  dy = " + std::string(100000, '(') + "dx\n";
  EXPECT_FALSE(RuleSet::Parse(deep, "t.rules").ok());
  std::string chain = "f(x) -> y\n  dy = dx";
  for (int i = 0; i < 100000; ++i) chain += " + dx";
  EXPECT_FALSE(RuleSet::Parse(chain + "\n", "t.rules").ok());
}

TEST(RulesTest, MergeOverrides) {
  RuleSet base = DefaultRules();
  auto extra = RuleSet::Parse("sin(x) -> y\n  dy = 2 * dx\n  dx = 2 * dy\nnondiff cos\n", "x");
  ASSERT_TRUE(extra.ok());
  base.Merge(*extra);
  EXPECT_EQ(base.Find("sin", 1)->file, "x");
  EXPECT_TRUE(base.IsNondiff("cos"));
  EXPECT_EQ(base.Find("cos", 1), nullptr);
}

}  // namespace
}  // namespace irt
