// The IR interpreter: runs a function of a Module with an explicit frame
// stack (no host recursion, so recursion depth is bounded by memory only)
// and records every executed statement, branch, argument and return through
// irt::TraceWriter, IRTracker style.
#ifndef IRT_IR_INTERPRETER_H_
#define IRT_IR_INTERPRETER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "irt/ir/context.h"
#include "irt/ir/module.h"
#include "irt/status.h"
#include "irt/value.h"
#include "irt/writer.h"

namespace irt::ir {

/// Where rand() and randn() draws come from: a seeded generator whose draws
/// are identical on every machine, or a list of values replayed in order.
class RandomSource {
 public:
  /// xoshiro256** seeded through splitmix64. rand() takes the top 53 bits of
  /// one output; randn() uses Marsaglia's polar method with a logarithm
  /// computed here in plain arithmetic (no libm), so it is reproducible.
  static RandomSource Seeded(uint64_t seed);
  /// Returns `values` in order, for rand() and randn() alike; a draw after
  /// the last value fails.
  static RandomSource Replay(std::vector<double> values);

  /// Uniform in [0, 1). False when a replay list is exhausted.
  bool Uniform(double* out);
  /// Standard normal. False when a replay list is exhausted.
  bool Normal(double* out);
  /// The error message for a failed draw.
  std::string ExhaustedMessage() const;
  uint64_t draws() const { return draws_; }

 private:
  RandomSource() = default;
  uint64_t Next();
  uint64_t s_[4] = {0, 0, 0, 0};
  bool replay_ = false;
  std::vector<double> values_;
  size_t next_value_ = 0;
  uint64_t draws_ = 0;
};

/// ln(x) for finite x > 0 in IEEE arithmetic only (exact to about 1 ulp).
double PortableLog(double x);

/// irt-trace's default --max-call-depth.
inline constexpr uint64_t kDefaultMaxCallDepth = 2'000'000;

struct InterpreterOptions {
  /// A call nested deeper than this is a runtime error (StackOverflowError).
  /// The default keeps an endless recursion under 1 GB (the interpreter
  /// and writer hold 300-500 bytes per open call).
  uint64_t max_call_depth = kDefaultMaxCallDepth;
  /// Executing more statements and branches than this is a runtime error
  /// (0: no limit), so that a program that never ends still ends its trace.
  uint64_t max_steps = 0;
  /// Trace-level metadata added to every trace (after "status" and "function").
  std::vector<std::pair<std::string, Value>> trace_meta;
};

class Interpreter {
 public:
  /// `module`, `context` and `random` must outlive the interpreter.
  Interpreter(const Module& module, TrackingContext& context, RandomSource& random,
              InterpreterOptions options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  /// kUsage unless the module defines `function` taking `num_args`
  /// arguments. Trace() and Evaluate() check this first.
  Status CheckCall(std::string_view function, size_t num_args) const;

  /// Runs function(args) and records it into `writer`: a root Call marker
  /// (op = function, the arguments as literal operands), the body, and the
  /// root's Return as the last node; then trace metadata status = "ok" and
  /// function = name, and Finish(). Returns the function's result.
  ///
  /// A runtime error of the program (no such function or method, integer
  /// division by zero, a non-Bool condition, exhausted rand values...)
  /// still yields a complete trace: an Error node at the failing statement
  /// (metadata error = message) closes the innermost traced call, an Error
  /// node at each enclosing call statement closes its caller, the trace gets
  /// status = "failed" and error = "FILE:LINE:COL: message", the writer is
  /// finished, and the result is kRuntimeError with that message. Errors of
  /// the writer are returned as they are.
  Result<Value> Trace(std::string_view function, std::span<const Value> args, TraceWriter& writer);

  /// Runs function(args) without recording. Runtime errors: kRuntimeError.
  Result<Value> Evaluate(std::string_view function, std::span<const Value> args);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What irt-trace asks for.
struct TraceRequest {
  std::string module_path;
  std::string function;
  /// Literals ("2.0", "[1.0, 2.0]", "(1, 2)") or "@FILE" for a NumPy .npy file.
  std::vector<std::string> args;
  uint64_t seed = 0;
  /// Comma-separated values replayed by rand()/randn() instead of the
  /// seeded generator ("0.9,0.7,0.1").
  std::optional<std::string> rand_values;
  /// InterpreterOptions::max_steps (0: no limit).
  uint64_t max_steps = 0;
  /// InterpreterOptions::max_call_depth.
  uint64_t max_call_depth = kDefaultMaxCallDepth;
  ContextOptions context;
  std::string producer_version;
};

/// A request checked and loaded, ready to trace. Everything that can fail
/// before output is opened fails in Prepare.
class TraceJob {
 public:
  /// Loads the module (kIoError; kDataError "FILE:LINE:COL: ..." for bad IR),
  /// checks the function and its arity and parses the arguments and rand
  /// values (kUsage; .npy files: kIoError, kDataError, kUnsupported).
  static Result<TraceJob> Prepare(const TraceRequest& request);
  /// Traces into `out` (which the caller commits) and finishes the trace.
  /// kRuntimeError when the program failed: the trace is complete anyway.
  /// `progress`, if given, counts the chunks written (WriterOptions).
  Status Run(Output& out, Progress* progress = nullptr);
  /// The result of the last successful Run.
  const Value& result() const { return result_; }

  TraceJob(TraceJob&&) noexcept;
  TraceJob& operator=(TraceJob&&) noexcept;
  ~TraceJob();

 private:
  TraceJob();
  TraceRequest request_;
  std::unique_ptr<Module> module_;
  std::vector<Value> args_;
  std::optional<std::vector<double>> rand_values_;
  Value result_;
};

/// Parses a command-line argument: a literal, or "@FILE" (a .npy file), as
/// irt::ParseValueArgument does. Bad literals are kUsage.
Result<Value> ParseArgument(std::string_view arg);
/// Parses "v1,v2,...": each a real literal.
Result<std::vector<double>> ParseRandValues(std::string_view text);

}  // namespace irt::ir

#endif  // IRT_IR_INTERPRETER_H_
