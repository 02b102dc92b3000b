// irt-trace's request: load and check everything, then trace to an output.
#include <algorithm>

#include "irt/ir/interpreter.h"
#include "irt/npy.h"
#include "irt/output.h"

namespace irt::ir {

Result<Value> ParseArgument(std::string_view arg) { return ParseValueArgument(arg); }

Result<std::vector<double>> ParseRandValues(std::string_view text) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    Result<Value> v = ParseLiteral(item);
    if (!v.ok()) return UsageError("random values: " + v.error().message());
    if (!v->is_scalar() || v->kind() == VKind::kNothing || v->kind() == VKind::kNone) {
      return UsageError("random values: '" + std::string(item) + "' is not a number");
    }
    out.push_back(v->to_double());
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

TraceJob::TraceJob() = default;
TraceJob::TraceJob(TraceJob&&) noexcept = default;
TraceJob& TraceJob::operator=(TraceJob&&) noexcept = default;
TraceJob::~TraceJob() = default;

Result<TraceJob> TraceJob::Prepare(const TraceRequest& request) {
  TraceJob job;
  job.request_ = request;
  IRT_ASSIGN_OR_RETURN(Module m, Module::Load(request.module_path));
  job.module_ = std::make_unique<Module>(std::move(m));
  StandardContext ctx(request.context);
  RandomSource random = RandomSource::Seeded(0);
  IRT_RETURN_IF_ERROR(
      Interpreter(*job.module_, ctx, random).CheckCall(request.function, request.args.size()));
  for (const std::string& p : request.context.primitives) {
    if (job.module_->Find(p) < 0) {
      return UsageError("'" + request.module_path + "' defines no function '" + p +
                        "' to treat as primitive");
    }
  }
  for (size_t i = 0; i < request.args.size(); ++i) {
    Result<Value> v = ParseArgument(request.args[i]);
    if (!v.ok()) return v.error().Prefixed("argument " + std::to_string(i + 1));
    job.args_.push_back(std::move(*v));
  }
  if (request.rand_values) {
    IRT_ASSIGN_OR_RETURN(job.rand_values_, ParseRandValues(*request.rand_values));
  }
  return job;
}

Status TraceJob::Run(Output& out, Progress* progress) {
  WriterOptions wo;
  wo.progress = progress;
  wo.producer_name = "irt-trace";
  wo.producer_version = request_.producer_version;
  TraceWriter writer(&out, wo);
  RandomSource random =
      rand_values_ ? RandomSource::Replay(*rand_values_) : RandomSource::Seeded(request_.seed);
  StandardContext ctx(request_.context);
  InterpreterOptions io;
  std::string path = request_.module_path;
  size_t slash = path.find_last_of('/');
  io.trace_meta.emplace_back("module",
                             Value::String(slash == path.npos ? path : path.substr(slash + 1)));
  std::string args;
  for (const Value& a : args_) args += (args.empty() ? "" : ", ") + FormatValue(a);
  io.trace_meta.emplace_back("args", Value::String(args));
  if (rand_values_) {
    io.trace_meta.emplace_back("rand_values", Value::String(*request_.rand_values));
  } else {
    io.trace_meta.emplace_back("seed", Value::I64(static_cast<int64_t>(request_.seed)));
  }
  if (request_.context.max_depth != 0) {
    io.trace_meta.emplace_back("max_depth",
                               Value::I64(static_cast<int64_t>(request_.context.max_depth)));
  }
  io.max_call_depth = request_.max_call_depth == 0 ? ~uint64_t{0} : request_.max_call_depth;
  if (request_.max_call_depth != kDefaultMaxCallDepth) {
    io.trace_meta.emplace_back("max_call_depth",
                               Value::I64(static_cast<int64_t>(request_.max_call_depth)));
  }
  if (request_.max_steps != 0) {
    io.max_steps = request_.max_steps;
    io.trace_meta.emplace_back("max_steps", Value::I64(static_cast<int64_t>(request_.max_steps)));
  }
  Interpreter interp(*module_, ctx, random, std::move(io));
  Result<Value> r = interp.Trace(request_.function, args_, writer);
  if (!r.ok()) return r.error();
  result_ = std::move(*r);
  return Status::Ok();
}

}  // namespace irt::ir
