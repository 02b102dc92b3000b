// irt-print: a trace as IRTracker's text listing, or as JSON.
#include "common/cli.h"
#include "irt/print.h"
#include "irt/trace.h"

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-print", "Print a trace as an extended Wengert list (or JSON)");
  std::string input = "-", output = "-";
  irt::PrintOptions opts;
  bool json = false, partial = false, no_meta = false;
  cli.AddTraceInput(&input);
  cli.AddOutputOption(&output);
  cli.AddOption("-l,--levels", opts.levels,
                "Print N levels: 1 is the call itself, 2 adds its children, ... (0: all)")
      .TypeName("N")
      .Count();
  cli.AddOption("-n,--node", opts.node_path, "Print the subtree at PATH, e.g. @8/@4")
      .TypeName("PATH");
  cli.AddFlag("--json", json, "Print JSON (one document) instead of text");
  cli.AddFlag("--no-meta", no_meta, "Do not print metadata");
  cli.AddOption("--max-elements", opts.max_elements,
                "Abbreviate tensors with more elements than N (0: never)")
      .TypeName("N")
      .Count();
  cli.AddFlag("--partial", partial, "Read the complete chunks of an unfinished trace");
  return cli.Run(argc, argv, [&]() -> irt::Status {
    opts.show_meta = !no_meta;
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    IRT_ASSIGN_OR_RETURN(irt::Trace trace, irt::Trace::Open(input, {.allow_partial = partial}));
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/false));
    irt::Status s = json ? irt::PrintJson(trace, opts, *out) : irt::PrintText(trace, opts, *out);
    if (!s.ok()) return s;
    return out->Commit();
  });
}
