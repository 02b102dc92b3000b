// irt-export: a trace as JSON Lines, a speedscope profile or a Trace Event
// Format file (Perfetto, chrome://tracing).
#include <string>

#include "common/cli.h"
#include "irt/export.h"

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-export", "Export a trace to other tools' formats");
  std::string input = "-", output = "-";
  irt::ExportOptions opts;
  bool jsonl = false, speedscope = false, chrome = false, python = false, c = false;
  cli.AddTraceInput(&input);
  cli.AddOutputOption(&output);
  auto fj = cli.AddFlag("--jsonl", jsonl, "One JSON object per node, in execution order");
  auto fs = cli.AddFlag("--speedscope", speedscope,
                        "speedscope's file format: calls as spans as wide as their nodes");
  auto fc = cli.AddFlag("--chrome-trace", chrome,
                        "Trace Event Format (Perfetto, chrome://tracing): calls as slices");
  auto fp = cli.AddFlag("--python", python,
                        "Straight-line Python: one assignment per node, calls inlined");
  auto fcode = cli.AddFlag("--c", c, "Straight-line C11: one assignment per node, calls inlined");
  std::vector<irt::tools::Opt> formats{fj, fs, fc, fp, fcode};
  for (size_t k = 0; k < formats.size(); ++k) {
    for (size_t m = k + 1; m < formats.size(); ++m) formats[k].Excludes(formats[m]);
  }
  cli.AddOption("--max-elements", opts.max_elements,
                "--jsonl: write tensors with more elements than N without their data (0: never)")
      .TypeName("N")
      .Count();
  cli.AddOption("--max-depth", opts.max_depth,
                "Refuse a trace with calls deeper than N (default: " +
                    std::to_string(irt::kChromeTraceMaxDepth) + " for --chrome-trace, " +
                    std::to_string(irt::kSpeedscopeMaxDepth) + " for --speedscope)")
      .TypeName("N")
      .Count();
  cli.AddProgressOption();
  return cli.Run(argc, argv, [&]() -> irt::Status {
    if (!jsonl && !speedscope && !chrome && !python && !c) {
      return irt::UsageError(
          "choose a format: --jsonl, --speedscope, --chrome-trace, --python or --c");
    }
    opts.format = jsonl        ? irt::ExportFormat::kJsonl
                  : speedscope ? irt::ExportFormat::kSpeedscope
                  : chrome     ? irt::ExportFormat::kChromeTrace
                  : python     ? irt::ExportFormat::kPython
                               : irt::ExportFormat::kC;
    opts.exporter = "irt-export " IRT_VERSION;
    opts.progress = cli.progress();
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/false));
    IRT_RETURN_IF_ERROR(irt::ExportTrace(input, opts, *out));
    return out->Commit();
  });
}
