// irt-convert: a trace rewritten in another format version (2.0, packed
// node columns; or 1.1, for readers older than format 2), chunk by chunk.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/cli.h"
#include "irt/convert.h"

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-convert", "Rewrite a trace in another format version (2 or 1)");
  std::string input = "-", output = "-";
  irt::ConvertOptions opts;
  cli.AddTraceInput(&input);
  cli.AddOutputOption(&output);
  cli.AddOption("--format", opts.format_major,
                "Format to write: 2 (packed nodes, the default) or 1 (format 1.1)")
      .TypeName("N")
      .OneOf({1, 2});
  cli.AddForceOption();
  cli.AddProgressOption();
  return cli.Run(argc, argv, [&]() -> irt::Status {
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    opts.progress = cli.progress();
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/true));
    IRT_ASSIGN_OR_RETURN(irt::ConvertResult r, irt::ConvertTrace(input, *out, opts));
    cli.log().info(
        fmt::format("{} chunks, {} nodes: {} rewritten in format {}; {} bytes in, {} out", r.chunks,
                    r.nodes, r.chunks_rewritten, opts.format_major, r.bytes_in, r.bytes_out));
    return out->Commit();
  });
}
