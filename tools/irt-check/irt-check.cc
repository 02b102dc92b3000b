// irt-check: verifies a trace completely and summarises it.
#include <fmt/format.h>

#include "common/cli.h"
#include "irt/check.h"
#include "irt/json.h"

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-check", "Verify a trace file completely and print a summary");
  std::string input = "-", output = "-";
  bool json = false;
  cli.AddTraceInput(&input);
  cli.AddOutputOption(&output,
                      "Write the summary to FILE instead of stdout; FILE.zst is zstd-compressed");
  cli.AddFlag("--json", json, "Print the summary as JSON");
  cli.AddProgressOption();
  return cli.Run(argc, argv, [&]() -> irt::Status {
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    IRT_ASSIGN_OR_RETURN(irt::CheckSummary s, irt::CheckTrace(input, cli.progress()));
    // -q prints errors only: the exit status says the trace is valid. A
    // summary asked for with -o FILE is still written.
    if (cli.quiet() && output == "-") return irt::Status::Ok();
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/false));
    if (json) {
      *out << fmt::format(
          "{{\"ok\":true,\"format\":{{\"major\":{},\"minor\":{}}},\"producer\":{{\"name\":{},"
          "\"version\":{}}},\"chunks\":{},\"nodes\":{},\"calls\":{},\"max_depth\":{},"
          "\"bytes\":{}}}\n",
          s.format_major, s.format_minor, irt::JsonQuote(s.producer_name),
          irt::JsonQuote(s.producer_version), s.chunks, s.nodes, s.calls, s.max_depth, s.bytes);
    } else {
      *out << fmt::format("format:    {}.{}\n", s.format_major, s.format_minor)
           << fmt::format("producer:  {} {}\n", irt::DisplayString(s.producer_name),
                          irt::DisplayString(s.producer_version))
           << fmt::format("chunks:    {}\n", s.chunks) << fmt::format("nodes:     {}\n", s.nodes)
           << fmt::format("calls:     {}\n", s.calls) << fmt::format("max depth: {}\n", s.max_depth)
           << fmt::format("bytes:     {}\n", s.bytes) << "ok\n";
    }
    return out->Commit();
  });
}
