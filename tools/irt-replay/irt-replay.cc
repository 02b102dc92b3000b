// irt-replay: re-evaluates a recorded computation with changed values,
// recomputing only the forward slice of the changes.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/cli.h"
#include "irt/replay.h"
#include "irt/trace.h"

namespace {
// A replay that cannot continue past a branch: documented in irt-replay(1).
constexpr int kExitDiverged = 3;
}  // namespace

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-replay", "Re-evaluate a trace with changed values");
  std::string input = "-", output = "-";
  std::vector<std::string> sets;
  bool prefix = false;
  cli.AddTraceInput(&input);
  cli.AddOption("-s,--set", sets,
                "Give the node at PATH the value VALUE (a literal or @FILE.npy), e.g. @2=3.0, "
                "@8/@4=0.1 or @2=@x.npy; repeatable")
      .TypeName("@PATH=VALUE")
      .Repeatable()  // one change per --set, so the trace may follow
      .Required();
  cli.AddOutputOption(
      &output,
      "Write the new trace to FILE (atomically) instead of stdout; FILE.zst is zstd-compressed");
  cli.AddFlag("--prefix", prefix,
              "On a divergence, write the valid prefix (an unfinished trace) instead of nothing");
  cli.AddForceOption();
  cli.AddProgressOption();
  return cli.RunWithCode(argc, argv, [&]() -> irt::Result<int> {
    std::vector<irt::ReplayChange> changes;
    for (const std::string& s : sets) {
      IRT_ASSIGN_OR_RETURN(irt::ReplayChange c, irt::ParseReplayChange(s));
      changes.push_back(std::move(c));
    }
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    IRT_ASSIGN_OR_RETURN(irt::Trace trace, irt::Trace::Open(input, {.progress = cli.progress()}));
    irt::ReplayOptions opts;
    opts.prefix = prefix;
    irt::Result<irt::Replay> run = irt::Replay::Run(trace, changes, opts);
    // A --set that names no node is reported like a usage error, by the
    // option it came from, though it exits 1 as in every tool.
    if (!run.ok() && run.status().message().starts_with("--set ")) return run.status();
    IRT_ASSIGN_OR_RETURN(irt::Replay replay, irt::tools::InTrace(trace.name(), std::move(run)));
    const irt::ReplayResult& r = replay.result();
    for (const std::string& w : r.warnings) cli.log().warn(w);
    if (replay.has_output()) {
      IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/true));
      IRT_RETURN_IF_ERROR(replay.Write(*out));
      IRT_RETURN_IF_ERROR(out->Commit());
    }
    cli.log().info(
        fmt::format("re-evaluated {} nodes, visited {} of {}; {} changed; rebuilt {} of {} chunks",
                    r.evaluated, r.visited, r.nodes, r.changed.size(), r.chunks_rebuilt, r.chunks));
    if (r.divergence) {
      if (prefix) {
        cli.log().warn(r.divergence->message);
        cli.log().warn(fmt::format("wrote the valid prefix: the {} nodes before the divergence",
                                   r.divergence->node));
      } else {
        cli.log().error(r.divergence->message);
      }
      return kExitDiverged;
    }
    return 0;
  });
}
