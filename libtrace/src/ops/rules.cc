// The rule-file parser (a hand-written line-oriented reader with a
// precedence-climbing expression parser; expressions nest at most
// kMaxExprDepth deep), rule lookup, merging and the closure check.
#include "irt/rules.h"

#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "irt/file.h"
#include "irt/ops.h"

namespace irt {

namespace {

constexpr int kMaxExprDepth = 200;

bool IsIdentStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool IsIdentChar(unsigned char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

// Columns count characters (UTF-8 lead bytes), 1-based.
uint32_t Column(std::string_view line, size_t byte) {
  uint32_t col = 1;
  for (size_t i = 0; i < byte && i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++col;
  }
  return col;
}

class LineParser {
 public:
  LineParser(std::string_view line, const std::string& file, uint32_t lineno)
      : s_(line), file_(file), lineno_(lineno) {
    for (char c : line) ascii_ = ascii_ && static_cast<unsigned char>(c) < 0x80;
  }

  Status Error(const std::string& what) const { return ErrorAt(pos_, what); }
  Status ErrorAt(size_t byte, const std::string& what) const {
    return DataError(file_ + ":" + std::to_string(lineno_) + ":" + std::to_string(Col(byte)) +
                     ": " + what);
  }

  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= s_.size();
  }
  bool Eat(std::string_view tok) {
    SkipSpace();
    // The first character decides most tries without a comparison call.
    if (pos_ < s_.size() && s_[pos_] == tok[0] &&
        (tok.size() == 1 || s_.substr(pos_, tok.size()) == tok)) {
      pos_ += tok.size();
      return true;
    }
    return false;
  }
  Result<std::string> Ident(const char* what) {
    IRT_RETURN_IF_ERROR(IdentAt(what));
    return std::string(s_.substr(ident_, pos_ - ident_));
  }
  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }

  /// Parses an expression into *out. Each level of the grammar parses
  /// into the caller's node and builds a call node only when it meets an
  /// operator, so that a leaf is not moved up through every level.
  Status Expr(RuleExpr* out, int depth = 0) { return Comparison(depth, out); }

 private:
  // Skips to an identifier and past it (its start in ident_).
  Status IdentAt(const char* what) {
    SkipSpace();
    ident_ = pos_;
    if (pos_ >= s_.size() || !IsIdentStart(static_cast<unsigned char>(s_[pos_]))) {
      return Error(std::string("expected ") + what);
    }
    while (pos_ < s_.size() && IsIdentChar(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    return Status::Ok();
  }
  // The column of a byte of the line (an ASCII line's without a scan).
  uint32_t Col(size_t byte) const {
    return ascii_ ? static_cast<uint32_t>(std::min(byte, s_.size()) + 1) : Column(s_, byte);
  }
  // Makes *out the call `op(*out, rhs...)` written at byte `at`.
  void Call(std::string_view op, RuleExpr* out, RuleExpr* rhs, size_t at) {
    RuleExpr e;
    e.kind = RuleExpr::Kind::kCall;
    e.name = op;
    e.args.reserve(rhs != nullptr ? 2 : 1);
    e.args.push_back(std::move(*out));
    if (rhs != nullptr) e.args.push_back(std::move(*rhs));
    e.line = lineno_;
    e.col = Col(at);
    *out = std::move(e);
  }

  Status Comparison(int depth, RuleExpr* out) {
    IRT_RETURN_IF_ERROR(Additive(depth, out));
    SkipSpace();
    if (pos_ >= s_.size()) return Status::Ok();
    const char c = s_[pos_];
    if (c != '<' && c != '>' && c != '=' && c != '!') return Status::Ok();
    static constexpr std::string_view kOps[] = {"<=", ">=", "==", "!=", "<", ">"};
    for (std::string_view op : kOps) {
      size_t at = pos_;
      if (Eat(op)) {
        RuleExpr rhs;
        IRT_RETURN_IF_ERROR(Additive(depth, &rhs));
        Call(op, out, &rhs, at);
        return Status::Ok();
      }
    }
    return Status::Ok();
  }

  Status Additive(int depth, RuleExpr* out) {
    IRT_RETURN_IF_ERROR(Multiplicative(depth, out));
    for (;;) {
      if (++depth > kMaxExprDepth) return Error("expression nested too deeply");
      SkipSpace();
      size_t at = pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-') && s_.substr(pos_, 2) != "+=") {
        std::string_view op = s_.substr(pos_++, 1);
        RuleExpr rhs;
        IRT_RETURN_IF_ERROR(Multiplicative(depth, &rhs));
        Call(op, out, &rhs, at);
        continue;
      }
      return Status::Ok();
    }
  }

  Status Multiplicative(int depth, RuleExpr* out) {
    IRT_RETURN_IF_ERROR(UnaryExpr(depth, out));
    for (;;) {
      if (++depth > kMaxExprDepth) return Error("expression nested too deeply");
      SkipSpace();
      size_t at = pos_;
      if (pos_ < s_.size() && (s_[pos_] == '*' || s_[pos_] == '/')) {
        std::string_view op = s_.substr(pos_++, 1);
        RuleExpr rhs;
        IRT_RETURN_IF_ERROR(UnaryExpr(depth, &rhs));
        Call(op, out, &rhs, at);
        continue;
      }
      return Status::Ok();
    }
  }

  Status UnaryExpr(int depth, RuleExpr* out) {
    if (depth > kMaxExprDepth) return Error("expression nested too deeply");
    SkipSpace();
    size_t at = pos_;
    if (Eat("-")) {
      IRT_RETURN_IF_ERROR(UnaryExpr(depth + 1, out));
      Call("-", out, nullptr, at);
      return Status::Ok();
    }
    return Power(depth, out);
  }

  Status Power(int depth, RuleExpr* out) {
    IRT_RETURN_IF_ERROR(Postfix(depth, out));
    SkipSpace();
    size_t at = pos_;
    if (Eat("^")) {
      RuleExpr exp;
      IRT_RETURN_IF_ERROR(UnaryExpr(depth + 1, &exp));
      Call("^", out, &exp, at);
    }
    return Status::Ok();
  }

  Status Postfix(int depth, RuleExpr* out) {
    IRT_RETURN_IF_ERROR(Primary(depth, out));
    for (;;) {
      if (++depth > kMaxExprDepth) return Error("expression nested too deeply");
      size_t at = pos_;
      if (pos_ < s_.size() && s_[pos_] == '\'') {  // no space before the quote
        ++pos_;
        Call("transpose", out, nullptr, at);
        continue;
      }
      return Status::Ok();
    }
  }

  Status Primary(int depth, RuleExpr* out) {
    if (depth > kMaxExprDepth) return Error("expression nested too deeply");
    SkipSpace();
    size_t at = pos_;
    if (pos_ >= s_.size()) return Error("expected an expression");
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      IRT_RETURN_IF_ERROR(Expr(out, depth + 1));
      if (!Eat(")")) return Error("expected ')'");
      return Status::Ok();
    }
    if ((c >= '0' && c <= '9') || c == '.') {
      size_t end = pos_;
      while (end < s_.size() && ((s_[end] >= '0' && s_[end] <= '9') || s_[end] == '.' ||
                                 s_[end] == 'e' || s_[end] == 'E' ||
                                 ((s_[end] == '+' || s_[end] == '-') && end > pos_ &&
                                  (s_[end - 1] == 'e' || s_[end - 1] == 'E')))) {
        ++end;
      }
      double v = 0;
      auto [p, ec] = std::from_chars(s_.data() + pos_, s_.data() + end, v);
      if (ec != std::errc() || p != s_.data() + end) {
        return Error("bad number '" + std::string(s_.substr(pos_, end - pos_)) + "'");
      }
      pos_ = end;
      out->kind = RuleExpr::Kind::kNumber;
      out->number = v;
      out->line = lineno_;
      out->col = Col(at);
      return Status::Ok();
    }
    if (!IsIdentStart(static_cast<unsigned char>(c))) {
      return Error("unexpected '" + std::string(1, c) + "'");
    }
    IRT_RETURN_IF_ERROR(IdentAt("a name"));
    out->name = s_.substr(ident_, pos_ - ident_);
    out->line = lineno_;
    out->col = Col(at);
    if (pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      out->kind = RuleExpr::Kind::kCall;
      if (!Eat(")")) {
        for (;;) {
          RuleExpr& a = out->args.emplace_back();
          IRT_RETURN_IF_ERROR(Expr(&a, depth + 1));
          if (Eat("...")) {
            if (a.kind != RuleExpr::Kind::kVar) {
              return Error("only a rest parameter can be spliced with '...'");
            }
            a.splat = true;
          }
          if (Eat(")")) break;
          if (!Eat(",")) return Error("expected ',' or ')'");
        }
      }
      return Status::Ok();
    }
    out->kind = RuleExpr::Kind::kVar;
    return Status::Ok();
  }

  std::string_view s_;
  const std::string& file_;
  uint32_t lineno_;
  size_t pos_ = 0;
  size_t ident_ = 0;
  bool ascii_ = true;
};

// What names an expression may use.
enum class Direction { kForward, kReverse };

std::string Where(const std::string& file, const RuleExpr& e) {
  return file + ":" + std::to_string(e.line) + ":" + std::to_string(e.col);
}

// Checks the names and calls of an expression; records the differentials of
// parameters it uses (forward lines).
// What makes two rules the same rule: operation, arity and variadicity.
// Parse and Merge look rules up by it instead of scanning every rule for
// every rule (10^5 rules took minutes).
using RuleKey = std::tuple<std::string, size_t, bool>;
RuleKey KeyOf(const Rule& r) { return {r.op, r.params.size(), r.variadic}; }

Status CheckExpr(const RuleExpr& root, const Rule& r, Direction dir, const std::string& file,
                 std::vector<bool>* uses_tangent) {
  std::vector<const RuleExpr*> stack{&root};
  while (!stack.empty()) {
    const RuleExpr* e = stack.back();
    stack.pop_back();
    if (e->kind == RuleExpr::Kind::kNumber) continue;
    if (e->kind == RuleExpr::Kind::kCall) {
      bool splat = false;
      for (const RuleExpr& a : e->args) {
        splat = splat || a.splat;
        stack.push_back(&a);
      }
      bool known = false;
      if (splat) {
        known = FindOp(e->name) != nullptr;
      } else {
        known = FindOp(e->name, e->args.size()) != nullptr;
      }
      if (!known) {
        return DataError(Where(file, *e) + ": unknown primitive '" + e->name + "' with " +
                         std::to_string(e->args.size()) + " arguments");
      }
      continue;
    }
    // A variable.
    const std::string& n = e->name;
    auto param = std::find(r.params.begin(), r.params.end(), n);
    bool is_rest = r.variadic && param != r.params.end() && param + 1 == r.params.end();
    if (e->splat && !is_rest) {
      return DataError(Where(file, *e) + ": '" + n + "...' splices only the rest parameter");
    }
    if (param != r.params.end()) {
      if (is_rest && !e->splat) {
        return DataError(Where(file, *e) + ": the rest parameter '" + n + "' must be spliced as '" +
                         n + "...'");
      }
      continue;
    }
    if (n == r.result) continue;
    if (n.size() > 1 && n[0] == 'd') {
      std::string base = n.substr(1);
      if (base == r.result) {
        if (dir == Direction::kReverse) continue;
        return DataError(Where(file, *e) + ": the forward line computes " + n +
                         "; it cannot use it");
      }
      auto p = std::find(r.params.begin(), r.params.end(), base);
      if (p != r.params.end()) {
        if (r.variadic && p + 1 == r.params.end()) {
          return DataError(Where(file, *e) + ": the rest parameter '" + base +
                           "' has no differential");
        }
        if (dir == Direction::kForward) {
          (*uses_tangent)[static_cast<size_t>(p - r.params.begin())] = true;
          continue;
        }
        return DataError(Where(file, *e) + ": a reverse line cannot use " + n +
                         " (only the result's d" + r.result + ")");
      }
    }
    return DataError(Where(file, *e) + ": unknown name '" + n + "' in the rule for " +
                     r.Signature());
  }
  return Status::Ok();
}

Status FinishRule(Rule& r, const std::vector<bool>& uses_tangent) {
  std::string where = r.file + ":" + std::to_string(r.line) + ":1";
  bool any = r.forward.has_value();
  for (size_t i = 0; i < r.params.size(); ++i) {
    any = any || r.reverse[i].has_value();
  }
  if (!any) {
    return DataError(where + ": the rule for " + r.Signature() +
                     " has no lines (declare it with 'nondiff' if it has no derivative)");
  }
  if (r.forward) {
    for (size_t i = 0; i < r.params.size(); ++i) {
      if (uses_tangent[i] && !r.reverse[i]) {
        return DataError(where + ": the forward line of " + r.Signature() + " uses d" +
                         r.params[i] + " but no reverse line computes d" + r.params[i]);
      }
      if (!uses_tangent[i] && r.reverse[i]) {
        return DataError(where + ": " + r.Signature() + " has a reverse line for d" + r.params[i] +
                         " but its forward line does not use d" + r.params[i]);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

std::string Rule::Signature() const {
  std::string s = op + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i) s += ", ";
    s += params[i];
    if (variadic && i + 1 == params.size()) s += "...";
  }
  return s + ") -> " + result;
}

Result<RuleSet> RuleSet::Parse(std::string_view text, const std::string& file) {
  RuleSet set;
  std::optional<Rule> cur;
  std::vector<bool> uses_tangent;
  std::map<RuleKey, size_t> seen;  // rule -> its index in set.rules_
  auto finish = [&]() -> Status {
    if (!cur) return Status::Ok();
    IRT_RETURN_IF_ERROR(FinishRule(*cur, uses_tangent));
    auto [first, fresh] = seen.emplace(KeyOf(*cur), set.rules_.size());
    if (!fresh) {
      const Rule& other = set.rules_[first->second];
      return DataError(cur->file + ":" + std::to_string(cur->line) + ":1: a second rule for " +
                       cur->op + " with " + std::to_string(cur->params.size()) +
                       " arguments (the first is on line " + std::to_string(other.line) + ")");
    }
    set.rules_.push_back(std::move(*cur));
    cur.reset();
    return Status::Ok();
  };
  uint32_t lineno = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++lineno;
    size_t hash = raw.find('#');
    std::string_view line = hash == std::string_view::npos ? raw : raw.substr(0, hash);
    LineParser p(line, file, lineno);
    if (p.AtEnd()) {
      if (end == text.size()) break;
      continue;
    }
    bool indented = line[0] == ' ' || line[0] == '\t';
    if (!indented) {
      IRT_RETURN_IF_ERROR(finish());
      p.set_pos(0);
      if (line.substr(0, 8) == "nondiff " || line.substr(0, 8) == "nondiff\t" ||
          line == "nondiff") {
        p.set_pos(7);
        while (!p.AtEnd()) {
          size_t b = p.pos();
          size_t e = b;
          while (e < line.size() && line[e] != ' ' && line[e] != '\t' && line[e] != '\r') ++e;
          std::string name(line.substr(b, e - b));
          if (set.by_op_.count(name)) {
            return p.ErrorAt(b, "'" + name + "' has a rule above; it cannot also be nondiff");
          }
          set.nondiff_.insert(name);
          p.set_pos(e);
        }
        continue;
      }
      // Header: NAME(params) -> result
      size_t paren = line.find('(');
      if (paren == std::string_view::npos || paren == 0) {
        return p.ErrorAt(0, "expected a rule header 'name(args) -> result' or 'nondiff names'");
      }
      std::string_view name = line.substr(0, paren);
      while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
      if (name.empty() || name.find_first_of(" \t") != std::string_view::npos) {
        return p.ErrorAt(0, "a rule's name is one word before '('");
      }
      Rule r;
      r.op = std::string(name);
      r.file = file;
      r.line = lineno;
      p.set_pos(paren + 1);
      if (!p.Eat(")")) {
        for (;;) {
          if (r.variadic) return p.Error("the rest parameter must be the last one");
          IRT_ASSIGN_OR_RETURN(std::string param, p.Ident("a parameter name"));
          if (std::find(r.params.begin(), r.params.end(), param) != r.params.end()) {
            return p.Error("parameter '" + param + "' appears twice");
          }
          r.params.push_back(param);
          if (p.Eat("...")) r.variadic = true;
          if (p.Eat(")")) break;
          if (!p.Eat(",")) return p.Error("expected ',' or ')'");
        }
      }
      if (!p.Eat("->")) return p.Error("expected '->' and the result's name");
      IRT_ASSIGN_OR_RETURN(r.result, p.Ident("the result's name"));
      if (std::find(r.params.begin(), r.params.end(), r.result) != r.params.end()) {
        return p.Error("the result has the name of a parameter");
      }
      if (!p.AtEnd()) return p.Error("unexpected text after the rule header");
      if (set.nondiff_.count(r.op)) {
        return p.ErrorAt(0, "'" + r.op + "' is declared nondiff above; it cannot have a rule");
      }
      r.reverse.assign(r.params.size(), std::nullopt);
      r.index.assign(r.params.size(), {});
      uses_tangent.assign(r.params.size(), false);
      cur = std::move(r);
      continue;
    }
    // A body line.
    if (!cur) return p.ErrorAt(0, "an indented line outside a rule");
    Rule& r = *cur;
    size_t lhs_at = (p.SkipSpace(), p.pos());
    IRT_ASSIGN_OR_RETURN(std::string lhs, p.Ident("'dname = ...'"));
    std::string base = lhs.size() > 1 && lhs[0] == 'd' ? lhs.substr(1) : "";
    auto param = std::find(r.params.begin(), r.params.end(), base);
    bool is_forward = !base.empty() && base == r.result;
    if (!is_forward && (base.empty() || param == r.params.end())) {
      return p.ErrorAt(lhs_at, "'" + lhs + "' is not d followed by the result (" + r.result +
                                   ") or a parameter of " + r.Signature());
    }
    size_t pi = static_cast<size_t>(param - r.params.begin());
    if (!is_forward && r.variadic && pi + 1 == r.params.size()) {
      return p.ErrorAt(lhs_at, "the rest parameter '" + base + "' cannot be differentiated");
    }
    std::vector<RuleExpr> index;
    bool sparse = false;
    if (p.Eat("[")) {
      if (is_forward) return p.Error("the forward line cannot be indexed");
      if (!p.Eat("]")) {
        for (;;) {
          RuleExpr ix;
          IRT_RETURN_IF_ERROR(p.Expr(&ix));
          if (p.Eat("...")) {
            if (ix.kind != RuleExpr::Kind::kVar) {
              return p.Error("only a rest parameter can be spliced with '...'");
            }
            ix.splat = true;
          }
          index.push_back(std::move(ix));
          if (p.Eat("]")) break;
          if (!p.Eat(",")) return p.Error("expected ',' or ']'");
        }
      }
      if (index.empty()) return p.Error("an index is needed between '[' and ']'");
      if (!p.Eat("+=")) return p.Error("expected '+=' after an indexed differential");
      sparse = true;
    } else if (!p.Eat("=")) {
      return p.Error("expected '='");
    }
    if (p.AtEnd()) return p.Error("expected an expression");
    RuleExpr rhs;
    IRT_RETURN_IF_ERROR(p.Expr(&rhs));
    if (!p.AtEnd()) return p.Error("unexpected text after the expression");
    Direction dir = is_forward ? Direction::kForward : Direction::kReverse;
    IRT_RETURN_IF_ERROR(CheckExpr(rhs, r, dir, file, &uses_tangent));
    for (const RuleExpr& ix : index)
      IRT_RETURN_IF_ERROR(CheckExpr(ix, r, dir, file, &uses_tangent));
    if (is_forward) {
      if (r.forward) return p.ErrorAt(lhs_at, "a second forward line for d" + r.result);
      r.forward = std::move(rhs);
    } else {
      if (r.reverse[pi]) return p.ErrorAt(lhs_at, "a second reverse line for d" + base);
      r.reverse[pi] = std::move(rhs);
      if (sparse) r.index[pi] = std::move(index);
    }
    if (end == text.size()) break;
  }
  IRT_RETURN_IF_ERROR(finish());
  set.Index();
  return set;
}

Result<RuleSet> RuleSet::Load(const std::string& path) {
  IRT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return Parse(text, path);
}

void RuleSet::Index() {
  by_op_.clear();
  for (size_t i = 0; i < rules_.size(); ++i) by_op_[rules_[i].op].push_back(i);
}

void RuleSet::Merge(const RuleSet& other) {
  // Drop, in one pass, this set's rules for operations `other` declares
  // nondiff and the rules `other` replaces; then append `other`'s rules.
  std::set<RuleKey> replaced;
  for (const Rule& r : other.rules_) replaced.insert(KeyOf(r));
  rules_.erase(std::remove_if(rules_.begin(), rules_.end(),
                              [&](const Rule& q) {
                                return other.nondiff_.count(q.op) > 0 ||
                                       replaced.count(KeyOf(q)) > 0;
                              }),
               rules_.end());
  for (const std::string& n : other.nondiff_) nondiff_.insert(n);
  for (const Rule& r : other.rules_) {
    nondiff_.erase(r.op);
    rules_.push_back(r);
  }
  Index();
}

const Rule* RuleSet::Find(std::string_view op, size_t arity) const {
  auto it = by_op_.find(op);
  if (it == by_op_.end()) return nullptr;
  const Rule* variadic = nullptr;
  for (size_t i : it->second) {
    const Rule& r = rules_[i];
    if (!r.variadic && r.params.size() == arity) return &r;
    if (r.variadic && r.Accepts(arity)) variadic = &r;
  }
  return variadic;
}

Status RuleSet::CheckClosure() const {
  for (const Rule& r : rules_) {
    std::vector<const RuleExpr*> stack;
    if (r.forward) stack.push_back(&*r.forward);
    for (size_t i = 0; i < r.params.size(); ++i) {
      if (r.reverse[i]) stack.push_back(&*r.reverse[i]);
      for (const RuleExpr& ix : r.index[i]) stack.push_back(&ix);
    }
    bool sparse = false;
    for (const auto& ix : r.index) sparse = sparse || !ix.empty();
    while (!stack.empty()) {
      const RuleExpr* e = stack.back();
      stack.pop_back();
      if (e->kind != RuleExpr::Kind::kCall) continue;
      for (const RuleExpr& a : e->args) stack.push_back(&a);
      bool splat =
          std::any_of(e->args.begin(), e->args.end(), [](const RuleExpr& a) { return a.splat; });
      bool covered = IsNondiff(e->name) ||
                     (splat ? HasRule(e->name) : Find(e->name, e->args.size()) != nullptr);
      if (!covered) {
        return DataError(Where(r.file, *e) + ": the rule for " + r.Signature() + " uses '" +
                         e->name + "', which has no rule of its own");
      }
    }
    // In an emitted backward pass, sparse accumulation becomes addindex.
    if (sparse && !HasRule("addindex")) {
      return DataError(r.file + ":" + std::to_string(r.line) + ":1: " + r.Signature() +
                       " accumulates sparsely, but addindex has no rule");
    }
  }
  return Status::Ok();
}

std::vector<std::string> DefaultRulesPaths(std::string_view exe_path) {
  std::vector<std::string> out;
  const char* env = std::getenv("IRT_RULES");
  if (env != nullptr && env[0] != '\0') out.emplace_back(env);
  std::string dir(exe_path);
  size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  out.push_back(dir + "/../share/irtrace/default.rules");
  out.push_back(dir + "/../../rules/default.rules");
  return out;
}

Result<RuleSet> LoadDefaultRules(std::string_view exe_path, std::string* used) {
  std::vector<std::string> paths = DefaultRulesPaths(exe_path);
  const char* env = std::getenv("IRT_RULES");
  bool from_env = env != nullptr && env[0] != '\0';
  for (size_t i = 0; i < paths.size(); ++i) {
    struct stat st;
    if (stat(paths[i].c_str(), &st) != 0) {
      if (from_env && i == 0) {
        return NotFound("IRT_RULES names '" + paths[i] + "', which does not exist");
      }
      continue;
    }
    if (used) *used = paths[i];
    return RuleSet::Load(paths[i]);
  }
  std::string where;
  for (const std::string& p : paths) where += (where.empty() ? "" : ", ") + p;
  return NotFound("cannot find the default rules (looked for " + where +
                  "); set IRT_RULES or give --no-default-rules --rules FILE");
}

}  // namespace irt
