// irt-stats: counts of a trace's nodes, calls, depths and chunks, in one
// streaming pass with bounded memory.
#include "common/cli.h"
#include "irt/stats.h"

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-stats", "Count a trace's nodes by kind, operation and call depth");
  std::string input = "-", output = "-";
  irt::StatsOptions opts;
  bool json = false;
  cli.AddTraceInput(&input);
  cli.AddOutputOption(&output);
  cli.AddOption("-n,--top", opts.top, "List the N heaviest calls (by nodes in their subtree)")
      .TypeName("N")
      .Count();
  cli.AddFlag("--chunks", opts.chunks, "Also list every chunk (index, first node, nodes, bytes)");
  cli.AddFlag("--json", json, "Print JSON (one document) instead of text");
  cli.AddFlag("--histogram", opts.histogram,
              "Draw a bar of '#' after each operation's count and each depth's nodes");
  return cli.Run(argc, argv, [&]() -> irt::Status {
    if (json && opts.histogram) return irt::UsageError("--histogram is for text, not --json");
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/false));
    IRT_RETURN_IF_ERROR(irt::PrintStats(input, opts, json, *out));
    return out->Commit();
  });
}
