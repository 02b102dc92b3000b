// irt-test-producer: a second producer of traces, for the tests only. It runs
// a few fixed programs written in C++ (not interpreted from IR) and records
// them through TraceWriter, the public writer API, with operations of the
// standard set (irt/ops.h) and control-flow facts, but without IR text. Its
// nodes follow the IR adapter's layout for the same programs (classes,
// block numbers, SSA ids, branch positions), so that the tools' answers on
// its traces can be compared with their answers on irt-trace's: tools that
// read only the format and the facts must agree.
//
//   irt-test-producer [-o FILE] [--chunk-nodes N] PROGRAM ARGS...
//   irt-test-producer [-o FILE] h X N        testdata/ir/h.ir: sum of X^i, i < N
//   irt-test-producer [-o FILE] looprec X D  testdata/ir/looprec.ir: a loop in a recursion
//   irt-test-producer [-o FILE] frob X       frobnicate(X) * X: an operation outside
//                                            the standard set (frobnicate(x) = 2x + 1)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "irt/control_flow.h"
#include "irt/ops.h"
#include "irt/output.h"
#include "irt/status.h"
#include "irt/value.h"
#include "irt/writer.h"

namespace {

using irt::BranchFact;
using irt::ClassId;
using irt::ClassSpec;
using irt::ControlFlow;
using irt::NodeId;
using irt::NodeKind;
using irt::OperandSpec;
using irt::Result;
using irt::Status;
using irt::TraceWriter;
using irt::Value;

constexpr NodeId kNoNode = irt::kNoNode;

// An SSA value of a running program: its value and the node that carries it.
struct Ssa {
  Value v;
  NodeId node = kNoNode;
};

// An operand of a statement: an SSA value (a reference) or a literal.
struct Arg {
  Arg(const Ssa& s) : ssa(&s) {}           // NOLINT: implicit
  Arg(Value v) : literal(std::move(v)) {}  // NOLINT: implicit
  const Ssa* ssa = nullptr;
  Value literal;
  const Value& value() const { return ssa != nullptr ? ssa->v : literal; }
};

OperandSpec Ref() { return OperandSpec::Ref(); }
OperandSpec Lit(Value v) { return OperandSpec::Literal(std::move(v)); }

// The writer, with the class shapes the IR adapter gives each kind of
// statement.
class Recorder {
 public:
  explicit Recorder(TraceWriter& w) : w_(w) {}

  // The root call marker: the callee's name and its arguments as literals.
  ClassId RootCall(const std::string& fn, const std::vector<Value>& args) {
    ClassSpec s;
    s.kind = NodeKind::kCall;
    s.op = fn;
    for (const Value& a : args) s.operands.push_back(Lit(a));
    return w_.DefineClass(std::move(s));
  }
  // An argument of the entry block (§1:%ssa); `from_caller` when it refers
  // to the caller's node for it (a nested call passing an SSA value).
  ClassId Param(uint32_t ssa, bool from_caller) {
    ClassSpec s;
    s.kind = NodeKind::kArgument;
    s.block = 1;
    s.pos = ssa;
    if (from_caller) s.operands.push_back(Ref());
    return w_.DefineClass(std::move(s));
  }
  // Argument k (1-based) of block `block`, assigned by the jump it refers to.
  ClassId BlockParam(uint32_t block, uint32_t ssa, uint32_t k) {
    ClassSpec s;
    s.kind = NodeKind::kArgument;
    s.block = block;
    s.pos = ssa;
    s.aux = k;
    s.operands.push_back(Ref());
    return w_.DefineClass(std::move(s));
  }
  ClassId Statement(NodeKind kind, uint32_t block, uint32_t ssa, std::string op,
                    std::vector<OperandSpec> operands) {
    ClassSpec s;
    s.kind = kind;
    s.block = block;
    s.pos = ssa;
    s.op = std::move(op);
    s.operands = std::move(operands);
    return w_.DefineClass(std::move(s));
  }
  // A branch at §block:&pos to `target`; a conditional one has its
  // condition as last operand and is taken when it is false ("br T unless %c").
  ClassId Branch(uint32_t block, uint32_t pos, uint32_t target, bool conditional,
                 std::vector<OperandSpec> operands) {
    ClassSpec s;
    s.kind = NodeKind::kJump;
    s.block = block;
    s.pos = pos;
    s.aux = target;
    s.has_condition = conditional;
    s.condition_taken_when = false;
    s.operands = std::move(operands);
    return w_.DefineClass(std::move(s));
  }
  ClassId Return(uint32_t block, uint32_t pos, std::vector<OperandSpec> operands) {
    ClassSpec s;
    s.kind = NodeKind::kReturn;
    s.block = block;
    s.pos = pos;
    s.operands = std::move(operands);
    return w_.DefineClass(std::move(s));
  }

  // Appends a node of class `c`; its references are the SSA operands.
  NodeId Append(ClassId c, const Value& v, std::initializer_list<Arg> args) {
    std::vector<NodeId> refs;
    for (const Arg& a : args) {
      if (a.ssa != nullptr) refs.push_back(a.ssa->node);
    }
    return w_.Append(c, v, refs);
  }
  NodeId AppendRefs(ClassId c, const Value& v, std::vector<NodeId> refs) {
    return w_.Append(c, v, refs);
  }
  // Evaluates standard operation `op` with irt::ApplyOp, as every tool
  // does, and records it.
  Result<Ssa> Prim(ClassId c, std::string_view op, std::initializer_list<Arg> args) {
    std::vector<Value> vals;
    for (const Arg& a : args) vals.push_back(a.value());
    Result<Value> r = irt::ApplyOp(op, vals);
    if (!r.ok()) return r.error();
    Ssa out{*r, kNoNode};
    out.node = Append(c, out.v, args);
    return out;
  }

  TraceWriter& writer() { return w_; }

 private:
  TraceWriter& w_;
};

Result<bool> Condition(const Ssa& c) {
  if (c.v.kind() != irt::VKind::kBool) {
    return irt::RuntimeError("TypeError: non-boolean (" + irt::TypeName(c.v) +
                             ") used in boolean context");
  }
  return c.v.as_bool();
}

BranchFact Br(uint32_t block, uint32_t pos, uint32_t target) {
  BranchFact b;
  b.block = block;
  b.pos = pos;
  b.target = target;
  return b;
}
BranchFact BrUnless(uint32_t block, uint32_t pos, uint32_t target, uint32_t condition) {
  BranchFact b = Br(block, pos, target);
  b.conditional = true;
  b.condition = condition;
  b.taken_when = false;
  return b;
}
BranchFact Ret(uint32_t block, uint32_t pos) { return Br(block, pos, 0); }

// ---------------------------------------------------------------------------
// h (testdata/ir/h.ir), the seed's loop:
//   1: (%1, %2, %3)
//     %4 = Main.zero(%2)
//     br 2 (0, %4)
//   2: (%5, %6)
//     %7 = %5 < %3
//     br 4 unless %7
//     br 3
//   3:
//     %8 = %2 ^ %5
//     %9 = %6 + %8
//     %10 = %5 + 1
//     br 2 (%10, %9)
//   4:
//     return %6

ControlFlow HFlow() {
  return ControlFlow{4, {Br(1, 1, 2), BrUnless(2, 1, 4, 7), Br(2, 2, 3), Br(3, 1, 2), Ret(4, 1)}};
}

Result<Value> TraceH(Recorder& rec, const Value& x, const Value& n) {
  TraceWriter& w = rec.writer();
  w.RegisterControlFlow("h", HFlow());
  const ClassId root = rec.RootCall("h", {x, n});
  const ClassId p1 = rec.Param(1, false), p2 = rec.Param(2, false), p3 = rec.Param(3, false);
  const ClassId zero4 = rec.Statement(NodeKind::kPrimitive, 1, 4, "zero", {Ref()});
  const ClassId br1_1 = rec.Branch(1, 1, 2, false, {Lit(Value::I64(0)), Ref()});
  const ClassId a5 = rec.BlockParam(2, 5, 1), a6 = rec.BlockParam(2, 6, 2);
  const ClassId lt7 = rec.Statement(NodeKind::kPrimitive, 2, 7, "<", {Ref(), Ref()});
  const ClassId br2_1 = rec.Branch(2, 1, 4, true, {Ref()});
  const ClassId br2_2 = rec.Branch(2, 2, 3, false, {});
  const ClassId pow8 = rec.Statement(NodeKind::kPrimitive, 3, 8, "^", {Ref(), Ref()});
  const ClassId add9 = rec.Statement(NodeKind::kPrimitive, 3, 9, "+", {Ref(), Ref()});
  const ClassId add10 =
      rec.Statement(NodeKind::kPrimitive, 3, 10, "+", {Ref(), Lit(Value::I64(1))});
  const ClassId br3_1 = rec.Branch(3, 1, 2, false, {Ref(), Ref()});
  const ClassId ret4 = rec.Return(4, 1, {Ref()});

  rec.Append(root, Value(), {});
  Ssa f{Value::Function("h")}, px{x}, pn{n};
  f.node = rec.Append(p1, f.v, {});
  px.node = rec.Append(p2, px.v, {});
  pn.node = rec.Append(p3, pn.v, {});
  // §1
  IRT_ASSIGN_OR_RETURN(Ssa r4, rec.Prim(zero4, "zero", {px}));
  NodeId jump = rec.Append(br1_1, Value(), {Value::I64(0), r4});
  Ssa i{Value::I64(0)}, acc{r4.v};
  i.node = rec.AppendRefs(a5, i.v, {jump});
  acc.node = rec.AppendRefs(a6, acc.v, {jump});
  for (;;) {
    // §2
    IRT_ASSIGN_OR_RETURN(Ssa c7, rec.Prim(lt7, "<", {i, pn}));
    IRT_ASSIGN_OR_RETURN(bool go_on, Condition(c7));
    if (!go_on) {
      rec.Append(br2_1, Value(), {c7});
      break;
    }
    rec.Append(br2_2, Value(), {});
    // §3
    IRT_ASSIGN_OR_RETURN(Ssa p8, rec.Prim(pow8, "^", {px, i}));
    IRT_ASSIGN_OR_RETURN(Ssa s9, rec.Prim(add9, "+", {acc, p8}));
    IRT_ASSIGN_OR_RETURN(Ssa i10, rec.Prim(add10, "+", {i, Value::I64(1)}));
    jump = rec.Append(br3_1, Value(), {i10, s9});
    i = Ssa{i10.v, rec.AppendRefs(a5, i10.v, {jump})};
    acc = Ssa{s9.v, rec.AppendRefs(a6, s9.v, {jump})};
  }
  // §4
  rec.Append(ret4, acc.v, {acc});
  return acc.v;
}

// ---------------------------------------------------------------------------
// looprec (testdata/ir/looprec.ir), a loop inside a recursion:
//   1: (%1, %2, %3)
//     %4 = %3 == 0
//     br 2 unless %4
//     return 0.0
//   2:
//     br 3 (1, 0.0)
//   3: (%5, %6)
//     %7 = %5 <= %3
//     br 5 unless %7
//     br 4
//   4:
//     %8 = %2 ^ %5
//     %9 = %6 + %8
//     %10 = %5 + 1
//     br 3 (%10, %9)
//   5:
//     %11 = %3 - 1
//     %12 = Main.looprec(%2, %11)
//     %13 = %6 + %12
//     return %13

ControlFlow LooprecFlow() {
  return ControlFlow{5,
                     {BrUnless(1, 1, 2, 4), Ret(1, 2), Br(2, 1, 3), BrUnless(3, 1, 5, 7),
                      Br(3, 2, 4), Br(4, 1, 3), Ret(5, 1)}};
}

struct LooprecClasses {
  explicit LooprecClasses(Recorder& rec)
      : p1(rec.Param(1, false)),
        p2(rec.Param(2, false)),
        p3(rec.Param(3, false)),
        p2_ref(rec.Param(2, true)),
        p3_ref(rec.Param(3, true)),
        eq4(rec.Statement(NodeKind::kPrimitive, 1, 4, "==", {Ref(), Lit(Value::I64(0))})),
        br1_1(rec.Branch(1, 1, 2, true, {Ref()})),
        ret1_2(rec.Return(1, 2, {Lit(Value::F64(0.0))})),
        br2_1(rec.Branch(2, 1, 3, false, {Lit(Value::I64(1)), Lit(Value::F64(0.0))})),
        a5(rec.BlockParam(3, 5, 1)),
        a6(rec.BlockParam(3, 6, 2)),
        le7(rec.Statement(NodeKind::kPrimitive, 3, 7, "<=", {Ref(), Ref()})),
        br3_1(rec.Branch(3, 1, 5, true, {Ref()})),
        br3_2(rec.Branch(3, 2, 4, false, {})),
        pow8(rec.Statement(NodeKind::kPrimitive, 4, 8, "^", {Ref(), Ref()})),
        add9(rec.Statement(NodeKind::kPrimitive, 4, 9, "+", {Ref(), Ref()})),
        add10(rec.Statement(NodeKind::kPrimitive, 4, 10, "+", {Ref(), Lit(Value::I64(1))})),
        br4_1(rec.Branch(4, 1, 3, false, {Ref(), Ref()})),
        sub11(rec.Statement(NodeKind::kPrimitive, 5, 11, "-", {Ref(), Lit(Value::I64(1))})),
        call12(rec.Statement(NodeKind::kCall, 5, 12, "looprec", {Ref(), Ref()})),
        add13(rec.Statement(NodeKind::kPrimitive, 5, 13, "+", {Ref(), Ref()})),
        ret5_1(rec.Return(5, 1, {Ref()})) {}
  ClassId p1, p2, p3, p2_ref, p3_ref, eq4, br1_1, ret1_2, br2_1, a5, a6, le7, br3_1, br3_2, pow8,
      add9, add10, br4_1, sub11, call12, add13, ret5_1;
};

// One call of looprec, its marker already written; x and d are the
// caller's SSA values (node kNoNode at the root). Returns the result as
// the caller sees it: the value and the callee's Return node.
Result<Ssa> Looprec(Recorder& rec, const LooprecClasses& c, const Ssa& x, const Ssa& d) {
  const bool root = x.node == kNoNode;
  Ssa f{Value::Function("looprec")}, px{x.v}, pd{d.v};
  f.node = rec.Append(c.p1, f.v, {});
  px.node = root ? rec.Append(c.p2, px.v, {}) : rec.Append(c.p2_ref, px.v, {x});
  pd.node = root ? rec.Append(c.p3, pd.v, {}) : rec.Append(c.p3_ref, pd.v, {d});
  // §1
  IRT_ASSIGN_OR_RETURN(Ssa c4, rec.Prim(c.eq4, "==", {pd, Value::I64(0)}));
  IRT_ASSIGN_OR_RETURN(bool base, Condition(c4));
  if (base) {
    Value zero = Value::F64(0.0);
    return Ssa{zero, rec.Append(c.ret1_2, zero, {zero})};
  }
  rec.Append(c.br1_1, Value(), {c4});
  // §2
  NodeId jump = rec.Append(c.br2_1, Value(), {Value::I64(1), Value::F64(0.0)});
  Ssa i{Value::I64(1)}, acc{Value::F64(0.0)};
  i.node = rec.AppendRefs(c.a5, i.v, {jump});
  acc.node = rec.AppendRefs(c.a6, acc.v, {jump});
  for (;;) {
    // §3
    IRT_ASSIGN_OR_RETURN(Ssa c7, rec.Prim(c.le7, "<=", {i, pd}));
    IRT_ASSIGN_OR_RETURN(bool go_on, Condition(c7));
    if (!go_on) {
      rec.Append(c.br3_1, Value(), {c7});
      break;
    }
    rec.Append(c.br3_2, Value(), {});
    // §4
    IRT_ASSIGN_OR_RETURN(Ssa p8, rec.Prim(c.pow8, "^", {px, i}));
    IRT_ASSIGN_OR_RETURN(Ssa s9, rec.Prim(c.add9, "+", {acc, p8}));
    IRT_ASSIGN_OR_RETURN(Ssa i10, rec.Prim(c.add10, "+", {i, Value::I64(1)}));
    jump = rec.Append(c.br4_1, Value(), {i10, s9});
    i = Ssa{i10.v, rec.AppendRefs(c.a5, i10.v, {jump})};
    acc = Ssa{s9.v, rec.AppendRefs(c.a6, s9.v, {jump})};
  }
  // §5
  IRT_ASSIGN_OR_RETURN(Ssa d11, rec.Prim(c.sub11, "-", {pd, Value::I64(1)}));
  rec.Append(c.call12, Value(), {px, d11});
  IRT_ASSIGN_OR_RETURN(Ssa r12, Looprec(rec, c, px, d11));
  IRT_ASSIGN_OR_RETURN(Ssa s13, rec.Prim(c.add13, "+", {acc, r12}));
  return Ssa{s13.v, rec.Append(c.ret5_1, s13.v, {s13})};
}

Result<Value> TraceLooprec(Recorder& rec, const Value& x, const Value& d) {
  rec.writer().RegisterControlFlow("looprec", LooprecFlow());
  LooprecClasses c(rec);
  rec.Append(rec.RootCall("looprec", {x, d}), Value(), {});
  IRT_ASSIGN_OR_RETURN(Ssa r, Looprec(rec, c, Ssa{x}, Ssa{d}));
  return r.v;
}

// ---------------------------------------------------------------------------
// frob(x) = frobnicate(x) * x, where frobnicate is this producer's own
// operation, outside the standard set: frobnicate(x) = 2x + 1 on Float64.
//   1: (%1, %2)
//     %3 = frobnicate(%2)
//     %4 = %3 * %2
//     return %4

Result<Value> TraceFrob(Recorder& rec, const Value& x) {
  if (x.kind() != irt::VKind::kF64) return irt::UsageError("frob takes a Float64");
  rec.writer().RegisterControlFlow("frob", ControlFlow{1, {Ret(1, 1)}});
  const ClassId root = rec.RootCall("frob", {x});
  const ClassId p1 = rec.Param(1, false), p2 = rec.Param(2, false);
  const ClassId frob3 = rec.Statement(NodeKind::kPrimitive, 1, 3, "frobnicate", {Ref()});
  const ClassId mul4 = rec.Statement(NodeKind::kPrimitive, 1, 4, "*", {Ref(), Ref()});
  const ClassId ret1 = rec.Return(1, 1, {Ref()});
  rec.Append(root, Value(), {});
  Ssa f{Value::Function("frob")}, px{x};
  f.node = rec.Append(p1, f.v, {});
  px.node = rec.Append(p2, px.v, {});
  Ssa f3{Value::F64(2 * x.as_f64() + 1)};
  f3.node = rec.Append(frob3, f3.v, {px});
  IRT_ASSIGN_OR_RETURN(Ssa m4, rec.Prim(mul4, "*", {f3, px}));
  rec.Append(ret1, m4.v, {m4});
  return m4.v;
}

// ---------------------------------------------------------------------------

constexpr const char* kUsage = "usage: irt-test-producer [-o FILE] h X N | looprec X D | frob X\n";

Status Run(const std::string& out_path, uint32_t chunk_nodes, const std::string& program,
           const std::vector<Value>& args) {
  const size_t arity = program == "frob" ? 1 : 2;
  if ((program != "h" && program != "looprec" && program != "frob") || args.size() != arity) {
    return irt::UsageError(kUsage);
  }
  IRT_ASSIGN_OR_RETURN(std::unique_ptr<irt::Output> out, irt::Output::Open(out_path));
  if (out->IsTerminal()) return irt::UsageError("refusing to write a trace to a terminal");
  irt::WriterOptions wo;
  wo.producer_name = "irt-test-producer";
  wo.producer_version = "1";
  if (chunk_nodes != 0) wo.chunk_nodes = chunk_nodes;
  TraceWriter writer(out.get(), wo);
  Recorder rec(writer);
  Result<Value> r = program == "h"         ? TraceH(rec, args[0], args[1])
                    : program == "looprec" ? TraceLooprec(rec, args[0], args[1])
                                           : TraceFrob(rec, args[0]);
  if (!r.ok()) return r.error();
  std::string text;
  for (const Value& a : args) text += (text.empty() ? "" : ", ") + irt::FormatValue(a);
  writer.AddTraceMeta("status", Value::String("ok"));
  writer.AddTraceMeta("function", Value::String(program));
  writer.AddTraceMeta("args", Value::String(text));
  IRT_RETURN_IF_ERROR(writer.Finish());
  return out->Commit();
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path = "-";
  uint32_t chunk_nodes = 0;  // the writer's default
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (a == "--chunk-nodes" && i + 1 < argc) {
      chunk_nodes = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      words.push_back(a);
    }
  }
  if (words.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::vector<Value> args;
  for (size_t i = 1; i < words.size(); ++i) {
    Result<Value> v = irt::ParseLiteral(words[i]);
    if (!v.ok()) {
      std::fprintf(stderr, "irt-test-producer: argument %zu: %s\n", i, v.error().message().c_str());
      return 2;
    }
    args.push_back(*v);
  }
  Status s = Run(out_path, chunk_nodes, words[0], args);
  if (!s.ok()) {
    std::fprintf(stderr, "irt-test-producer: %s%s", s.message().c_str(),
                 s.message().ends_with('\n') ? "" : "\n");
    return s.code() == irt::Code::kUsage ? 2 : 1;
  }
  return 0;
}
