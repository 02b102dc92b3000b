// irt-trace: run a function of an IR module and write its trace.
#include <cstdint>
#include <string>
#include <vector>

#include "common/cli.h"
#include "irt/ir/interpreter.h"

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-trace", "Run a function of an IR module and write its trace");
  irt::ir::TraceRequest req;
  std::string output = "-";
  std::string rand_values;
  cli.AddOption("module", req.module_path, "IR module (IRTools text form)")
      .Required()
      .TypeName("MODULE.ir");
  cli.AddOption("function", req.function, "Function to call").Required().TypeName("FUNCTION");
  cli.AddOption("args", req.args,
                "Arguments: literals (2, 2.0, true, \"s\", [1.0, 2.0], [1 2; 3 4], (1, 2.0)) or "
                "@FILE.npy for a NumPy array; put -- before the arguments if one starts with "
                "'-' and is not a number")
      .TypeName("ARG");
  cli.AddOutputOption(
      &output, "Write the trace to FILE (default: standard output); FILE.zst is zstd-compressed");
  cli.AddOption("--seed", req.seed, "Seed of the random generator behind rand() and randn()")
      .TypeName("N")
      .Count();
  irt::tools::Opt rv =
      cli.AddOption("--rand-values", rand_values,
                    "Replay these draws for rand() and randn(), in order; running out is an error")
          .TypeName("V1,V2,...");
  cli.AddOption("--max-depth", req.context.max_depth,
                "Record calls at nesting level N or deeper (the root is level 1) as primitives")
      .TypeName("N")
      .Count();
  cli.AddOption("--primitive", req.context.primitives,
                "Record calls of module function NAME as primitives (repeatable)")
      .TypeName("NAME")
      .Repeatable();  // one name per --primitive, so positionals may follow
  cli.AddOption("--max-steps", req.max_steps,
                "Stop the program with an error after N statements and branches (0: no limit); "
                "the trace still ends complete, as a failed run")
      .TypeName("N")
      .Count();
  cli.AddOption("--max-call-depth", req.max_call_depth,
                "Stop the program with an error (StackOverflowError) when a call would nest "
                "deeper than N (default " +
                    std::to_string(irt::ir::kDefaultMaxCallDepth) +
                    ", under 1 GB; 0: no limit); the trace still ends complete")
      .TypeName("N")
      .Count();
  cli.AddFlag("--tag-random", req.context.tag_random,
              "Tag rand()/randn() draws with metadata random = \"uniform\"/\"normal\"");
  cli.AddForceOption();
  cli.AddProgressOption();
  req.producer_version = IRT_VERSION;
  // CLI11 splits a value written "[a, b]" into several values; a leading
  // space keeps a tensor literal whole (literals may be surrounded by spaces).
  std::vector<std::string> storage(argv, argv + argc);
  std::vector<char*> args;
  for (std::string& a : storage) {
    if (!a.empty() && a.front() == '[') a.insert(a.begin(), ' ');
    args.push_back(a.data());
  }
  return cli.Run(argc, args.data(), [&]() -> irt::Status {
    if (rv.given()) req.rand_values = rand_values;
    // Usage and input errors come before the output is created.
    IRT_ASSIGN_OR_RETURN(irt::ir::TraceJob job, irt::ir::TraceJob::Prepare(req));
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/true));
    irt::Status run = job.Run(*out, cli.progress());
    if (!run.ok() && run.code() != irt::Code::kRuntimeError) return run;
    // A program that failed still leaves a complete trace behind.
    IRT_RETURN_IF_ERROR(out->Commit());
    return run;
  });
}
