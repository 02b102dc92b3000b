// irt-diff: compares two traces structurally. Exit status as diff(1):
// 0 same, 1 different, 2 trouble.
#include "common/cli.h"
#include "irt/diff.h"
#include "irt/trace.h"

namespace {
std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }
}  // namespace

int main(int argc, char** argv) {
  irt::tools::Cli cli("irt-diff", "Compare two traces structurally");
  std::string a = "-", b = "-", output = "-";
  irt::DiffOptions opts;
  bool stat = false, json = false;
  cli.AddOption("a", a, "First trace, plain or zstd-compressed ('-' for standard input)")
      .TypeName("A")
      .Required();
  cli.AddOption("b", b, "Second trace, plain or zstd-compressed ('-' for standard input)")
      .TypeName("B")
      .Required();
  cli.AddOutputOption(
      &output,
      "Write the report to FILE (atomically) instead of stdout; FILE.zst is zstd-compressed");
  auto stat_flag = cli.AddFlag("--stat", stat, "Print a summary only");
  auto json_flag = cli.AddFlag("--json", json, "Print the report as one JSON document");
  cli.AddOption("--rtol", opts.rtol,
                "Relative tolerance for floating-point values: |a - b| <= atol + rtol * |b|")
      .TypeName("X");
  cli.AddOption("--atol", opts.atol, "Absolute tolerance for floating-point values").TypeName("X");
  cli.AddOption("--ignore-meta", opts.ignore_meta,
                "Neither compare nor show metadata KEY (repeatable)")
      .TypeName("KEY")
      .Repeatable();  // one key per --ignore-meta, so the traces may follow
  cli.AddOption("-U,--context", opts.context, "Show N unchanged children around each change")
      .TypeName("N")
      .Count();
  cli.AddOption("--max-elements", opts.max_elements,
                "Abbreviate tensors with more elements than N (0: never)")
      .TypeName("N")
      .Count();
  stat_flag.Excludes(json_flag);
  cli.AddProgressOption();
  return cli.RunWithCode(
      argc, argv,
      [&]() -> irt::Result<int> {
        if (a == "-" && b == "-") {
          return irt::UsageError("only one of the two traces can be standard input");
        }
        IRT_RETURN_IF_ERROR(cli.CheckInput(a == "-" ? a : b));
        IRT_ASSIGN_OR_RETURN(irt::Trace ta, irt::Trace::Open(a, {.progress = cli.progress()}));
        IRT_ASSIGN_OR_RETURN(irt::Trace tb, irt::Trace::Open(b, {.progress = cli.progress()}));
        opts.format = stat   ? irt::DiffFormat::kStat
                      : json ? irt::DiffFormat::kJson
                             : irt::DiffFormat::kText;
        opts.name_a = DisplayName(a);
        opts.name_b = DisplayName(b);
        opts.color = !json && cli.StdoutColor();
        IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, /*binary=*/false));
        IRT_ASSIGN_OR_RETURN(irt::DiffSummary sum, irt::DiffTraces(ta, tb, opts, *out));
        IRT_RETURN_IF_ERROR(out->Commit());
        return sum.same() ? 0 : 1;
      },
      /*trouble_code=*/2);
}
