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
  auto& app = cli.app();
  app.add_option("a", a, "First trace, plain or zstd-compressed ('-' for standard input)")
      ->type_name("A")
      ->required();
  app.add_option("b", b, "Second trace, plain or zstd-compressed ('-' for standard input)")
      ->type_name("B")
      ->required();
  cli.AddOutputOption(
      &output,
      "Write the report to FILE (atomically) instead of stdout; FILE.zst is zstd-compressed");
  app.add_flag("--stat", stat, "Print a summary only");
  app.add_flag("--json", json, "Print the report as one JSON document");
  app.add_option("--rtol", opts.rtol,
                 "Relative tolerance for floating-point values: |a - b| <= atol + rtol * |b|")
      ->type_name("X");
  app.add_option("--atol", opts.atol, "Absolute tolerance for floating-point values")
      ->type_name("X");
  app.add_option("--ignore-meta", opts.ignore_meta,
                 "Neither compare nor show metadata KEY (repeatable)")
      ->type_name("KEY")
      ->expected(1)  // one key per --ignore-meta, so the traces may follow
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("-U,--context", opts.context, "Show N unchanged children around each change")
      ->type_name("N")
      ->check(irt::tools::Count());
  app.add_option("--max-elements", opts.max_elements,
                 "Abbreviate tensors with more elements than N (0: never)")
      ->type_name("N")
      ->check(irt::tools::Count());
  app.get_option("--stat")->excludes("--json");
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
