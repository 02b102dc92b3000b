// irt-dot: a trace (or a few levels of it, or a subtree) as a Graphviz DOT
// graph, optionally with a slice highlighted.
#include <string>

#include "common/cli.h"
#include "irt/dot.h"
#include "irt/slice.h"
#include "irt/trace.h"

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-dot", "Draw a trace as a Graphviz DOT graph");
  std::string input = "-", output = "-", slice_path;
  irt::DotOptions opts;
  irt::SliceOptions sopts;
  bool forward = false;
  cli.AddTraceInput(&input);
  cli.AddOutputOption(&output);
  cli.AddOption("-l,--levels", opts.levels,
                "Draw N levels: 1 is the call itself, 2 adds its children, deeper calls are "
                "single nodes (0: all)")
      .TypeName("N")
      .Count();
  cli.AddOption("-n,--node", opts.node_path, "Draw the subtree at PATH, e.g. @8/@4")
      .TypeName("PATH");
  cli.AddOption("--max-nodes", opts.max_nodes,
                "Refuse to draw more than N nodes (default " +
                    std::to_string(irt::kDefaultDotMaxNodes) + "; 0: no limit)")
      .TypeName("N")
      .Count();
  cli.AddOption("-m,--show-meta", opts.show_meta,
                "Show metadata KEY (e.g. adjoint) under node labels; repeatable; '*' for all")
      .TypeName("KEY")
      .Repeatable();  // one key per --show-meta, so the trace may follow
  cli.AddOption("-s,--highlight-slice", slice_path,
                "Highlight the slice from the node at PATH (backward unless --forward)")
      .TypeName("PATH");
  cli.AddFlag("-F,--forward", forward, "With --highlight-slice: slice forward");
  cli.AddFlag("-t,--through-calls", sopts.through_calls,
              "With --highlight-slice: follow dependences across calls");
  cli.AddFlag("-c,--control", sopts.control, "With --highlight-slice: add control dependences");
  return cli.Run(argc, argv, [&]() -> irt::Status {
    if (slice_path.empty() && (forward || sopts.through_calls || sopts.control)) {
      return irt::UsageError(
          "--forward, --through-calls and --control go with --highlight-slice PATH");
    }
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    IRT_ASSIGN_OR_RETURN(irt::Trace trace, irt::Trace::Open(input));
    std::optional<irt::Slice> slice;
    if (!slice_path.empty()) {
      sopts.direction = forward ? irt::SliceDirection::kForward : irt::SliceDirection::kBackward;
      IRT_ASSIGN_OR_RETURN(irt::Slice s, irt::ComputeSlice(trace, slice_path, sopts));
      slice.emplace(std::move(s));
      opts.highlight = &*slice;
    }
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/false));
    IRT_RETURN_IF_ERROR(irt::WriteDot(trace, opts, *out));
    return out->Commit();
  });
}
