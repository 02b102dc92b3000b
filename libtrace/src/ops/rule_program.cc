// Compiling rule lines to register programs, with zero propagation for
// tangents that do not flow (forward mode), and running them.
#include "ops/rule_program.h"

#include <algorithm>
#include <bit>
#include <map>

#include "irt/ops.h"
#include "ops/kernels_internal.h"

namespace irt::internal {

namespace {

// Primitives that are linear in their first argument and give zero when it is zero.
bool LinearInFirst(std::string_view op) {
  static constexpr std::string_view kOps[] = {"transpose",    "sum",     "mean",     "sum_to",
                                              "broadcast_to", "reshape", "getindex", "getitem",
                                              "identity",     "fill"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

class Compiler {
 public:
  Compiler(const Rule& rule, size_t arity, bool forward, const std::vector<bool>& has_tangent)
      : r_(rule), arity_(arity), forward_(forward), has_tangent_(has_tangent) {
    p_.reads.assign(arity + 1, false);
    next_ = static_cast<int32_t>(arity + 2 + (forward ? arity : 0));
  }

  Result<int32_t> Expr(const RuleExpr& e, int depth) {
    if (depth > 256) return DataError(Where(e) + ": expression too deep");
    switch (e.kind) {
      case RuleExpr::Kind::kNumber:
        return Const(e.number);
      case RuleExpr::Kind::kVar:
        return Var(e);
      case RuleExpr::Kind::kCall:
        break;
    }
    std::vector<int32_t> args;
    std::vector<const RuleExpr*> arg_exprs;
    for (const RuleExpr& a : e.args) {
      if (a.splat) {
        size_t first = r_.params.size() - 1;
        for (size_t k = first; k < arity_; ++k) {
          args.push_back(static_cast<int32_t>(k));
          arg_exprs.push_back(&a);
          p_.reads[k] = true;
        }
        continue;
      }
      IRT_ASSIGN_OR_RETURN(int32_t reg, Expr(a, depth + 1));
      args.push_back(reg);
      arg_exprs.push_back(&a);
    }
    const std::string& op = e.name;
    bool any_zero = std::find(args.begin(), args.end(), kZeroReg) != args.end();
    if (any_zero) {
      size_t n = args.size();
      if ((op == "+" && n == 2)) {
        if (args[0] == kZeroReg) return args[1];
        return args[0];
      }
      if (op == "-" && n == 2) {
        if (args[1] == kZeroReg) return args[0];
        args.erase(args.begin());
        arg_exprs.erase(arg_exprs.begin());
        return Emit("-", args);
      }
      if (op == "-" && n == 1) return kZeroReg;
      if (op == "*" || op == "matmul" || op == "dot") return kZeroReg;
      if (op == "/" && args[0] == kZeroReg) return kZeroReg;
      if (LinearInFirst(op) && args[0] == kZeroReg) return kZeroReg;
      if (op == "ifelse" && n == 3 && args[1] == kZeroReg && args[2] == kZeroReg) return kZeroReg;
      if ((op == "addindex" || op == "additem") && n >= 2 && args[0] == kZeroReg &&
          args[1] == kZeroReg) {
        return kZeroReg;
      }
      // Not foldable: a zero tangent becomes zero(primal) (same shape and
      // type) when it is a parameter's differential, a scalar 0 otherwise.
      for (size_t k = 0; k < n; ++k) {
        if (args[k] != kZeroReg) continue;
        const RuleExpr* a = arg_exprs[k];
        int32_t primal = -1;
        if (a->kind == RuleExpr::Kind::kVar && a->name.size() > 1 && a->name[0] == 'd') {
          auto it = std::find(r_.params.begin(), r_.params.end(), a->name.substr(1));
          if (it != r_.params.end()) primal = static_cast<int32_t>(it - r_.params.begin());
        }
        if (primal >= 0) {
          p_.reads[static_cast<size_t>(primal)] = true;
          IRT_ASSIGN_OR_RETURN(args[k], Emit("zero", {primal}));
        } else {
          IRT_ASSIGN_OR_RETURN(args[k], Const(0.0));
        }
      }
    }
    return Emit(op, args);
  }

  Result<int32_t> Emit(const std::string& op, const std::vector<int32_t>& args) {
    Instr in;
    in.op = op;
    in.def = FindOp(op, args.size());
    SOp sop = ScalarOpFor(op, args.size());
    in.has_sop = sop != SOp::kNone;
    if (in.has_sop) in.sop = sop;
    p_.scalar = p_.scalar && in.has_sop;
    in.args = args;
    in.dst = next_++;
    p_.code.push_back(std::move(in));
    return p_.code.back().dst;
  }

  Program Finish(std::vector<int32_t> outputs) {
    p_.outputs = std::move(outputs);
    p_.num_regs = next_;
    Lower(p_);
    return std::move(p_);
  }

  // The scalar form and the transpose fusion plan.
  static void Lower(Program& p) {
    std::vector<int32_t> alias(static_cast<size_t>(p.num_regs));
    for (size_t r = 0; r < alias.size(); ++r) alias[r] = static_cast<int32_t>(r);
    auto res = [&](int32_t r) { return r < 0 ? r : alias[static_cast<size_t>(r)]; };
    bool fits = p.num_regs < 32000;
    for (const Instr& in : p.code) {
      if (!in.has_sop) continue;
      if (in.sop == SOp::kCopy) {
        alias[static_cast<size_t>(in.dst)] = res(in.args[0]);
        continue;
      }
      ScalarInstr si{in.sop, static_cast<uint8_t>(in.args.size()), 0, 0,
                     0,      static_cast<int16_t>(in.dst)};
      si.a = static_cast<int16_t>(res(in.args[0]));
      if (in.args.size() > 1) si.b = static_cast<int16_t>(res(in.args[1]));
      if (in.args.size() > 2) si.c = static_cast<int16_t>(res(in.args[2]));
      p.scode.push_back(si);
    }
    if (!fits) p.scalar = false;
    for (int32_t o : p.outputs) p.souts.push_back(res(o));
    if (p.code.size() == 1 && p.code[0].op == "getindex" && p.code[0].args.size() >= 2 &&
        p.outputs.size() == 1 && p.outputs[0] == p.code[0].dst) {
      p.element_of = p.code[0].args[0];
      p.element_index.assign(p.code[0].args.begin() + 1, p.code[0].args.end());
    }
    if (p.code.size() == 2 && p.code[0].op == "zero" && p.code[1].op == "additem" &&
        p.code[1].args.size() >= 3 && p.code[1].args[0] == p.code[0].dst && p.outputs.size() == 1 &&
        p.outputs[0] == p.code[1].dst) {
      p.item_value = p.code[1].args[1];
      p.item_zeros_of = p.code[0].args[0];
      p.item_index.assign(p.code[1].args.begin() + 2, p.code[1].args.end());
    }
    // A transpose whose only use is an operand of a matmul is folded into it.
    std::vector<int> uses(static_cast<size_t>(p.num_regs), 0);
    for (const Instr& in : p.code) {
      for (int32_t a : in.args) {
        if (a >= 0) ++uses[static_cast<size_t>(a)];
      }
    }
    for (int32_t o : p.outputs) {
      if (o >= 0) ++uses[static_cast<size_t>(o)];
    }
    p.fuse.assign(p.code.size(), 0);
    std::vector<int> producer(static_cast<size_t>(p.num_regs), -1);
    for (size_t i = 0; i < p.code.size(); ++i) {
      const Instr& in = p.code[i];
      if (in.op == "matmul" && in.args.size() == 2) {
        for (int k = 0; k < 2; ++k) {
          int32_t a = in.args[static_cast<size_t>(k)];
          if (a < 0 || uses[static_cast<size_t>(a)] != 1) continue;
          int t = producer[static_cast<size_t>(a)];
          if (t < 0 || p.code[static_cast<size_t>(t)].op != "transpose") continue;
          p.fuse[static_cast<size_t>(t)] = 1;
          p.fuse[i] |= k == 0 ? 2 : 4;
        }
      }
      producer[static_cast<size_t>(in.dst)] = static_cast<int>(i);
    }
    // A product, or a product reshaped or transposed (which move its
    // elements and keep their bits).
    int32_t out = p.outputs.empty() ? -1 : p.outputs[0];
    while (out >= 0 && producer[static_cast<size_t>(out)] >= 0) {
      const Instr& in = p.code[static_cast<size_t>(producer[static_cast<size_t>(out)])];
      if (in.op == "matmul") {
        p.output_is_product = true;
        break;
      }
      if ((in.op != "reshape" && in.op != "transpose") || in.args.empty()) break;
      out = in.args[0];
    }
  }

 private:
  std::string Where(const RuleExpr& e) const {
    return r_.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.col);
  }

  Result<int32_t> Const(double v) {
    uint64_t bits = std::bit_cast<uint64_t>(v);
    auto it = consts_.find(bits);
    if (it != consts_.end()) return it->second;
    int32_t reg = next_++;
    consts_[bits] = reg;
    p_.consts.emplace_back(reg, v);
    return reg;
  }

  Result<int32_t> Var(const RuleExpr& e) {
    const std::string& n = e.name;
    for (size_t i = 0; i < r_.params.size(); ++i) {
      if (r_.params[i] == n) {
        p_.reads[i] = true;
        return static_cast<int32_t>(i);
      }
    }
    if (n == r_.result) {
      p_.reads[arity_] = true;
      return static_cast<int32_t>(arity_);
    }
    if (n.size() > 1 && n[0] == 'd') {
      std::string base = n.substr(1);
      if (!forward_ && base == r_.result) return static_cast<int32_t>(arity_ + 1);
      if (forward_) {
        for (size_t i = 0; i < r_.params.size(); ++i) {
          if (r_.params[i] == base) {
            if (i >= has_tangent_.size() || !has_tangent_[i]) return kZeroReg;
            return static_cast<int32_t>(arity_ + 1 + i);
          }
        }
      }
    }
    return DataError(Where(e) + ": unknown name '" + n + "'");
  }

  const Rule& r_;
  size_t arity_;
  bool forward_;
  std::vector<bool> has_tangent_;
  Program p_;
  int32_t next_ = 0;
  std::map<uint64_t, int32_t> consts_;
};

}  // namespace

Result<Program> CompileForward(const Rule& rule, size_t arity,
                               const std::vector<bool>& has_tangent) {
  if (!rule.forward) {
    return NotFound(rule.file + ":" + std::to_string(rule.line) + ":1: the rule for " +
                    rule.Signature() + " has no forward line (d" + rule.result + " = ...)");
  }
  Compiler c(rule, arity, true, has_tangent);
  IRT_ASSIGN_OR_RETURN(int32_t out, c.Expr(*rule.forward, 0));
  return c.Finish({out});
}

Result<Program> CompileReverse(const Rule& rule, size_t arity, size_t i) {
  Compiler c(rule, arity, false, {});
  IRT_ASSIGN_OR_RETURN(int32_t out, c.Expr(*rule.reverse[i], 0));
  std::vector<int32_t> outputs{out};
  for (const RuleExpr& ix : rule.index[i]) {
    if (ix.splat) {
      for (size_t k = rule.params.size() - 1; k < arity; ++k) {
        outputs.push_back(static_cast<int32_t>(k));
      }
      continue;
    }
    IRT_ASSIGN_OR_RETURN(int32_t reg, c.Expr(ix, 0));
    outputs.push_back(reg);
  }
  Program p = c.Finish(std::move(outputs));
  // Splatted index registers are read too.
  for (int32_t o : p.outputs) {
    if (o >= 0 && static_cast<size_t>(o) <= arity) p.reads[static_cast<size_t>(o)] = true;
  }
  return p;
}

void RunScalar(const Program& p, double* regs) {
  for (const auto& [reg, v] : p.consts) regs[reg] = v;
  for (const ScalarInstr& in : p.scode) RunScalarInstr(in, regs);
}

Status RunValues(const Program& p, std::vector<Value>& regs, bool f32, ProgramObserver* observer) {
  for (const auto& [reg, v] : p.consts) {
    regs[static_cast<size_t>(reg)] = f32 ? Value::F32(static_cast<float>(v)) : Value::F64(v);
    if (observer) observer->OnConst(reg, regs[static_cast<size_t>(reg)]);
  }
  std::vector<Value> args;
  for (size_t i = 0; i < p.code.size(); ++i) {
    const Instr& in = p.code[i];
    if (observer == nullptr && p.fuse[i] != 0) {
      if (p.fuse[i] == 1) continue;  // folded into the matmul that uses it
      // matmul with transposed operands: pass the transposes' sources.
      auto source = [&](int k) -> const Value& {
        int32_t a = in.args[static_cast<size_t>(k)];
        if (!(p.fuse[i] & (k == 0 ? 2 : 4))) return regs[static_cast<size_t>(a)];
        for (size_t j = i; j-- > 0;) {
          if (p.code[j].dst == a) return regs[static_cast<size_t>(p.code[j].args[0])];
        }
        return regs[static_cast<size_t>(a)];
      };
      auto r = MatmulTransposed(source(0), (p.fuse[i] & 2) != 0, source(1), (p.fuse[i] & 4) != 0);
      if (!r) return r.error();
      regs[static_cast<size_t>(in.dst)] = std::move(r).value();
      continue;
    }
    args.clear();
    for (int32_t a : in.args) args.push_back(regs[static_cast<size_t>(a)]);
    auto r = in.def != nullptr ? ApplyOp(*in.def, args) : ApplyOp(in.op, args);
    if (!r) return r.error();
    regs[static_cast<size_t>(in.dst)] = std::move(r).value();
    if (observer) IRT_RETURN_IF_ERROR(observer->OnInstr(in, regs));
  }
  return Status::Ok();
}

}  // namespace irt::internal
