// Derivative rules as data. A rule file says, for each primitive (or module
// function), how a change of its arguments changes its result, written in
// primitive operations, once for forward mode and once per argument for
// reverse mode:
//
//     matmul(A, B) -> Y
//       dY = matmul(dA, B) + matmul(A, dB)     # forward: the result's tangent
//       dA = matmul(dY, B')                    # reverse: the adjoint each argument receives
//       dB = matmul(A', dY)
//
//     getindex(x, i...) -> y
//       dy = getindex(dx, i...)
//       dx[i...] += dy                         # sparse: adds into one element of x's adjoint
//
//     nondiff < <= > >= == != rand randn zero size
//
// `dv` is the differential of v: the tangent of an argument or of the result
// (forward), the adjoint of the result or the contribution to an argument's
// adjoint (reverse). An argument without a reverse line receives nothing (it
// is treated as a constant, like the shape argument of sum_to); the forward
// line must use the differentials of exactly the arguments that have reverse
// lines. `nondiff` declares primitives whose results carry no derivative
// (comparisons, integer and random operations). The syntax is specified in
// irt-grad(1).
#ifndef IRT_RULES_H_
#define IRT_RULES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "irt/status.h"

namespace irt {

/// An expression of a rule, as written.
struct RuleExpr {
  enum class Kind : uint8_t { kNumber, kVar, kCall };
  Kind kind = Kind::kNumber;
  double number = 0;
  std::string name;  // the variable, or the primitive called
  std::vector<RuleExpr> args;
  bool splat = false;  // `dims...`: the rest parameter spliced into a call
  uint32_t line = 0, col = 0;
};

struct Rule {
  std::string op;
  std::vector<std::string> params;
  /// The last parameter collects the remaining arguments (`i...`); it is
  /// never differentiated.
  bool variadic = false;
  std::string result;
  /// `d<result> = ...`: the forward-mode rule.
  std::optional<RuleExpr> forward;
  /// Per parameter: `d<param> = ...` (dense contribution to its adjoint) or
  /// `d<param>[i...] += ...` (sparse: `index` holds the index expressions).
  std::vector<std::optional<RuleExpr>> reverse;
  std::vector<std::vector<RuleExpr>> index;
  std::string file;
  uint32_t line = 0;

  /// Whether argument `i` (0-based, in the call) receives an adjoint.
  bool Differentiates(size_t i) const { return i < reverse.size() && reverse[i].has_value(); }
  bool Accepts(size_t arity) const {
    return variadic ? arity + 1 >= params.size() : arity == params.size();
  }
  /// "matmul(A, B) -> Y".
  std::string Signature() const;
};

class RuleSet {
 public:
  /// Parses rule text. Errors are kDataError "FILE:LINE:COL: what".
  static Result<RuleSet> Parse(std::string_view text, const std::string& file_name);
  /// Reads and parses a rule file (kIoError if it cannot be read).
  static Result<RuleSet> Load(const std::string& path);

  /// Adds `other`'s rules and declarations; for the same primitive and
  /// arity, `other` wins (a rule replaces a nondiff declaration and back).
  void Merge(const RuleSet& other);

  /// The rule for `op` called with `arity` arguments, or nullptr.
  const Rule* Find(std::string_view op, size_t arity) const;
  /// Whether some rule names `op` (any arity).
  bool HasRule(std::string_view op) const { return by_op_.count(op) != 0; }
  /// Whether `op` is declared nondiff (and has no rule).
  bool IsNondiff(std::string_view op) const { return nondiff_.count(op) != 0; }

  const std::vector<Rule>& rules() const { return rules_; }
  const std::set<std::string, std::less<>>& nondiff() const { return nondiff_; }

  /// Closure: every primitive a rule uses is evaluable (irt/ops.h) and
  /// either has a rule for that arity or is declared nondiff, so that a
  /// backward pass built from the rules can be differentiated again.
  /// kDataError naming the rule and the primitive.
  Status CheckClosure() const;

 private:
  void Index();
  std::vector<Rule> rules_;
  std::map<std::string, std::vector<size_t>, std::less<>> by_op_;
  std::set<std::string, std::less<>> nondiff_;
};

/// Where the shipped rule file is looked for, in order: $IRT_RULES, then
/// <dir of exe>/../share/irtrace/default.rules, then
/// <dir of exe>/../../rules/default.rules (a build tree).
std::vector<std::string> DefaultRulesPaths(std::string_view exe_path);

/// Loads the first existing file of DefaultRulesPaths(). kNotFound names
/// the places searched. `*used` receives the path loaded.
Result<RuleSet> LoadDefaultRules(std::string_view exe_path, std::string* used = nullptr);

}  // namespace irt

#endif  // IRT_RULES_H_
