// irt::Differentiate: checks the trace's root call and result, picks the
// seed, and runs the engine's passes in the mode asked for.
#include <string>
#include <vector>

#include "irt/grad.h"
#include "irt/print.h"

// Last: it turns on the popcnt instruction for the rest of the file.
#include "analyses/grad/engine.h"

namespace irt {
namespace internal::grad {

namespace {

Status Prepare(const Trace& trace, GradResult* r, bool* result_float) {
  if (!trace.complete()) return DataError(trace.name() + ": the trace is incomplete");
  IRT_ASSIGN_OR_RETURN(NodeView root, trace.node(0));
  if (root.kind() != NodeKind::kCall) {
    return DataError(trace.name() + ": the first node does not open the root call");
  }
  r->function = std::string(root.op());
  for (size_t i = 0; i < root.num_operands(); ++i) {
    Operand o = root.operand(i);
    r->call_args.push_back(o.is_ref ? Value() : o.literal);
  }
  IRT_ASSIGN_OR_RETURN(NodeView last, trace.node(trace.size() - 1));
  if (last.kind() == NodeKind::kError) {
    return DataError(trace.name() + ": the trace records a failed run of " + r->function +
                     "; it has no derivative");
  }
  if (last.kind() != NodeKind::kReturn || last.closes() != 0) {
    return DataError(trace.name() + ": the last node does not close the root call");
  }
  r->result = last.value();
  bool f = r->result.is_float() ||
           (r->result.kind() == VKind::kTensor &&
            (r->result.tensor().dtype == DType::kF64 || r->result.tensor().dtype == DType::kF32));
  *result_float = f;
  return Status::Ok();
}

Status CheckResultDifferentiable(const GradResult& r, bool result_float) {
  if (!result_float) {
    return InvalidArgument("the result of " + DisplayString(r.function) + " is " +
                           TypeName(r.result) +
                           "; only Float64, Float32 and tensors of them have derivatives");
  }
  return Status::Ok();
}

Result<Value> DefaultSeed(const GradResult& r, const GradOptions& opts) {
  if (opts.seed) {
    const Value& s = *opts.seed;
    bool ok = (s.is_scalar() && s.kind() != VKind::kNone && s.kind() != VKind::kNothing) ||
              s.kind() == VKind::kTensor;
    if (!ok) return UsageError("the seed must be a number or a tensor, not " + TypeName(s));
    if (r.result.kind() != VKind::kTensor && s.kind() == VKind::kTensor) {
      return InvalidArgument("the result of " + DisplayString(r.function) + " is a " +
                             TypeName(r.result) + "; the seed must be a number");
    }
    return s;
  }
  if (r.result.kind() == VKind::kTensor) {
    return InvalidArgument("the result of " + DisplayString(r.function) + " is a " +
                           TypeName(r.result) +
                           "; give its adjoint with --seed (a tensor of its shape, or a number)");
  }
  return r.result.kind() == VKind::kF32 ? Value::F32(1.0f) : Value::F64(1.0);
}

}  // namespace

Status CheckSomeDifferentiable(const GradResult& r, const std::vector<ArgumentDerivative>& args) {
  std::string names;
  for (const ArgumentDerivative& a : args) {
    if (a.chosen && a.differentiable) return Status::Ok();
    if (a.chosen)
      names +=
          (names.empty() ? "" : ", ") + ("@" + std::to_string(a.pos)) + "::" + TypeName(a.value);
  }
  return InvalidArgument("no differentiable argument: " + DisplayString(r.function) + " takes " +
                         (names.empty() ? std::string("no chosen arguments") : names) +
                         "; derivatives exist for Float64, Float32 and tensors of them");
}

// The writers run the passes themselves, with the options filled in here.
Result<GradResult> Prepared(const Trace& trace, const GradOptions& options, GradOptions* opts) {
  GradResult r;
  r.mode = GradMode::kReverse;
  if (options.mode != GradMode::kReverse) {
    return UsageError("the backward pass and adjoints are reverse mode");
  }
  bool result_float = false;
  IRT_RETURN_IF_ERROR(Prepare(trace, &r, &result_float));
  IRT_RETURN_IF_ERROR(CheckResultDifferentiable(r, result_float));
  *opts = options;
  IRT_ASSIGN_OR_RETURN(r.seed, DefaultSeed(r, *opts));
  opts->seed = r.seed;
  return r;
}

}  // namespace internal::grad

using internal::grad::CheckResultDifferentiable;
using internal::grad::CheckSomeDifferentiable;
using internal::grad::DefaultSeed;
using internal::grad::GradEngine;
using internal::grad::Prepare;
using internal::grad::ScalarValue;

namespace {

// Differentiate's passes, once the trace is set up for them.
Result<GradResult> DifferentiateChecked(const Trace& trace, const RuleSet& rules,
                                        const GradOptions& options, GradResult r) {
  GradOptions opts = options;
  if (opts.mode == GradMode::kReverse) {
    IRT_ASSIGN_OR_RETURN(r.seed, DefaultSeed(r, opts));
    opts.seed = r.seed;
  }
  if (opts.mode == GradMode::kForward && opts.tangents.empty()) {
    return UsageError("forward mode needs at least one tangent (--tangent @N=VALUE)");
  }
  GradEngine e(trace, rules, opts);
  e.UseRootOperands(&r.call_args);
  IRT_RETURN_IF_ERROR(e.ForwardPass(opts.mode == GradMode::kForward, false));
  IRT_RETURN_IF_ERROR(CheckSomeDifferentiable(r, e.args()));
  if (opts.mode == GradMode::kForward) {
    for (const auto& [p, t] : opts.tangents) {
      for (const ArgumentDerivative& a : e.args()) {
        if (a.pos == p && !a.differentiable) {
          return UsageError("@" + std::to_string(p) + " is " + TypeName(a.value) +
                            ", which is not differentiable");
        }
      }
    }
  } else {
    IRT_RETURN_IF_ERROR(e.ReversePass());
  }
  IRT_RETURN_IF_ERROR(e.Finish(&r));
  if (opts.mode == GradMode::kForward) {
    // The tangents as given, scalars in the argument's type.
    for (ArgumentDerivative& a : r.arguments) {
      for (const auto& [p, t] : opts.tangents) {
        if (a.pos != p) continue;
        a.derivative = t;
        if (t.kind() != VKind::kTensor && a.value.is_float()) {
          a.derivative = ScalarValue(t.to_double(), a.value.kind() == VKind::kF32);
        }
      }
    }
  }
  return r;
}

}  // namespace

Result<GradResult> Differentiate(const Trace& trace, const RuleSet& rules,
                                 const GradOptions& options) {
  GradResult r;
  r.mode = options.mode;
  bool result_float = false;
  IRT_RETURN_IF_ERROR(Prepare(trace, &r, &result_float));
  IRT_RETURN_IF_ERROR(CheckResultDifferentiable(r, result_float));
  // The passes hold a bounded set of decoded chunks (the engine decodes a
  // chunk again when it comes back to it), and the forward pass reads every
  // chunk in order: check and decode them on a second core meanwhile.
  trace.UseTransientColumns();
  trace.VerifyAhead();
  try {
    return DifferentiateChecked(trace, rules, options, std::move(r));
  } catch (const internal::grad::ColumnsLost& e) {
    return e.status;
  }
}

}  // namespace irt
