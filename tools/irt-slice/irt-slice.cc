// irt-slice: the part of a trace a node depends on, or that depends on it,
// written as a trace (or listed as text).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/cli.h"
#include "irt/slice.h"
#include "irt/trace.h"

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-slice", "Slice a trace: what a node depends on, or what depends on it");
  std::string input = "-", output = "-", backward, forward;
  irt::SliceOptions opts;
  irt::PrintOptions popts;
  bool list = false, no_meta = false;
  cli.AddTraceInput(&input);
  cli.AddOutputOption(&output);
  auto b = cli.AddOption("-b,--backward", backward,
                         "Slice backward from the node at PATH (e.g. @8/@4): what it depends on")
               .TypeName("PATH");
  auto f = cli.AddOption("-F,--forward", forward,
                         "Slice forward from the node at PATH: what depends on it")
               .TypeName("PATH");
  b.Excludes(f);
  f.Excludes(b);
  cli.AddFlag("-t,--through-calls", opts.through_calls,
              "Follow dependences into callees and out to callers, at any depth");
  cli.AddFlag("-c,--control", opts.control,
              "Add control dependences: the branches taken and the conditions that decided them");
  cli.AddFlag("-l,--list", list,
              "List the selected nodes as text (original positions) instead of writing a trace");
  cli.AddFlag("--no-meta", no_meta, "With --list: do not print metadata");
  cli.AddOption("--max-elements", popts.max_elements,
                "With --list: abbreviate tensors with more elements than N (0: never)")
      .TypeName("N")
      .Count();
  cli.AddForceOption();
  cli.AddProgressOption();
  return cli.Run(argc, argv, [&]() -> irt::Status {
    if (backward.empty() == forward.empty()) {
      return irt::UsageError("give one of --backward PATH or --forward PATH");
    }
    opts.direction =
        backward.empty() ? irt::SliceDirection::kForward : irt::SliceDirection::kBackward;
    popts.show_meta = !no_meta;
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    IRT_ASSIGN_OR_RETURN(irt::Trace trace, irt::Trace::Open(input, {.progress = cli.progress()}));
    IRT_ASSIGN_OR_RETURN(irt::Slice slice,
                         irt::ComputeSlice(trace, backward.empty() ? forward : backward, opts));
    for (const std::string& w : slice.warnings()) cli.log().warn(w);
    cli.log().info(fmt::format("{}: {} nodes selected of {}", slice.description(), slice.size(),
                               trace.size()));
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/!list));
    irt::Status s = list ? irt::PrintSliceList(trace, slice, popts, *out)
                         : irt::WriteSliceTrace(trace, slice, *out);
    if (!s.ok()) return s;
    return out->Commit();
  });
}
