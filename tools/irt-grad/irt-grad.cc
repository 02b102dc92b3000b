// irt-grad: derivatives of a trace's result, the backward pass as a trace,
// or the trace annotated with adjoints.
#include <fmt/format.h>
#include <malloc.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>

#include "common/cli.h"
#include "irt/grad.h"
#include "irt/npy.h"
#include "irt/rules.h"
#include "irt/trace.h"

namespace {

// A literal, or @FILE for a NumPy .npy file; a bad literal's message
// names the option.
irt::Result<irt::Value> ParseValueOption(const std::string& what, std::string_view text) {
  auto v = irt::ParseValueArgument(text);
  if (!v && v.error().code() == irt::Code::kUsage) {
    return irt::UsageError(what + ": " + v.error().message());
  }
  return v;
}

irt::Result<uint32_t> ParsePosition(std::string_view text) {
  std::string_view d = text;
  if (!d.empty() && d[0] == '@') d.remove_prefix(1);
  uint32_t p = 0;
  bool ok = !d.empty() && d.size() < 10;
  for (char c : d) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) p = p * 10 + static_cast<uint32_t>(c - '0');
  }
  if (!ok || p == 0) {
    return irt::UsageError("bad position '" + std::string(text) + "': expected @N, e.g. @2");
  }
  return p;
}

// The process's peak resident set in MiB (Linux), for -v.
double PeakMiB() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb / 1024.0;
}

std::string ExePath(const char* argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string(argv0);
}

}  // namespace

int main(int argc, char** argv) {
  // Tensor adjoints are large, short-lived buffers: keep freed memory for
  // reuse rather than returning it to the system and faulting it in again.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  irt::tools::Cli cli("irt-grad", "Derivatives of a trace's result: reverse or forward mode");
  std::string input = "-", output = "-", mode = "reverse", wrt, seed, npy;
  std::vector<std::string> tangents, rule_files;
  bool json = false, emit = false, annotate = false, no_default = false;
  irt::GradPrintOptions popts;
  cli.AddTraceInput(&input);
  cli.AddOutputOption(&output);
  cli.AddOption("--mode", mode, "reverse (default) or forward")
      .OneOf({"reverse", "forward"})
      .TypeName("MODE");
  cli.AddOption("--wrt", wrt, "Differentiate with respect to these root arguments, e.g. @2,@3")
      .TypeName("@N,...");
  cli.AddOption("--seed", seed, "Adjoint of the result: a literal or @FILE.npy (reverse mode)")
      .TypeName("VALUE");
  cli.AddOption("--tangent", tangents, "Tangent of a root argument, e.g. @2=1.0 (forward mode)")
      .TypeName("@N=VALUE")
      .Repeatable();
  cli.AddOption("--rules", rule_files, "Add or override rules from FILE (repeatable)")
      .TypeName("FILE")
      .Repeatable();
  cli.AddFlag("--no-default-rules", no_default, "Do not load the shipped rules");
  cli.AddFlag("--json", json, "Print JSON instead of text");
  auto max_el = cli.AddOption("--max-elements", popts.max_elements,
                              "Abbreviate tensors with more elements than N (0: never)")
                    .TypeName("N")
                    .Count();
  cli.AddOption("--npy", npy, "Also write each derivative to PREFIXN.npy (N: its position)")
      .TypeName("PREFIX");
  cli.AddFlag("--emit-trace", emit, "Write the backward pass as a trace instead");
  cli.AddFlag("--annotate", annotate, "Write the trace with each node's adjoint as metadata");
  cli.AddForceOption();
  cli.AddProgressOption();
  return cli.Run(argc, argv, [&]() -> irt::Status {
    popts.json = json;
    if (max_el.given()) popts.json_max_elements = popts.max_elements;
    if (emit && annotate) return irt::UsageError("--emit-trace and --annotate exclude each other");
    irt::GradOptions opts;
    opts.mode = mode == "forward" ? irt::GradMode::kForward : irt::GradMode::kReverse;
    if ((emit || annotate) && opts.mode == irt::GradMode::kForward) {
      return irt::UsageError("--emit-trace and --annotate are reverse mode");
    }
    if (!wrt.empty()) {
      size_t start = 0;
      while (start <= wrt.size()) {
        size_t comma = wrt.find(',', start);
        if (comma == std::string::npos) comma = wrt.size();
        IRT_ASSIGN_OR_RETURN(uint32_t p,
                             ParsePosition(std::string_view(wrt).substr(start, comma - start)));
        opts.wrt.push_back(p);
        start = comma + 1;
      }
    }
    if (!seed.empty()) {
      if (opts.mode == irt::GradMode::kForward)
        return irt::UsageError("--seed is for reverse mode");
      IRT_ASSIGN_OR_RETURN(irt::Value s, ParseValueOption("--seed", seed));
      opts.seed = s;
    }
    for (const std::string& t : tangents) {
      if (opts.mode != irt::GradMode::kForward) {
        return irt::UsageError("--tangent is for forward mode (--mode forward)");
      }
      size_t eq = t.find('=');
      if (eq == std::string::npos)
        return irt::UsageError("bad --tangent '" + t + "': expected @N=VALUE");
      IRT_ASSIGN_OR_RETURN(uint32_t p, ParsePosition(std::string_view(t).substr(0, eq)));
      IRT_ASSIGN_OR_RETURN(irt::Value v, ParseValueOption("--tangent " + t.substr(0, eq),
                                                          std::string_view(t).substr(eq + 1)));
      opts.tangents.emplace_back(p, v);
    }
    if (opts.mode == irt::GradMode::kForward && opts.tangents.empty()) {
      return irt::UsageError("forward mode needs at least one --tangent @N=VALUE");
    }
    irt::RuleSet rules;
    if (!no_default) {
      std::string used;
      IRT_ASSIGN_OR_RETURN(rules, irt::LoadDefaultRules(ExePath(argv[0]), &used));
      cli.log().debug(fmt::format("rules from {}", used));
    }
    for (const std::string& f : rule_files) {
      IRT_ASSIGN_OR_RETURN(irt::RuleSet extra, irt::RuleSet::Load(f));
      rules.Merge(extra);
    }
    IRT_RETURN_IF_ERROR(cli.CheckInput(input));
    auto t0 = std::chrono::steady_clock::now();
    IRT_ASSIGN_OR_RETURN(irt::Trace trace, irt::Trace::Open(input, {.progress = cli.progress()}));
    double open_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    IRT_ASSIGN_OR_RETURN(auto out, cli.OpenOutput(output, emit || annotate));
    irt::GradResult r;
    if (emit) {
      IRT_ASSIGN_OR_RETURN(
          r, irt::tools::InTrace(trace.name(), irt::EmitGradientTrace(trace, rules, opts, *out)));
    } else if (annotate) {
      opts.keep_adjoints = true;
      IRT_ASSIGN_OR_RETURN(
          r, irt::tools::InTrace(trace.name(), irt::WriteAnnotated(trace, rules, opts, *out)));
    } else {
      IRT_ASSIGN_OR_RETURN(
          r, irt::tools::InTrace(trace.name(), irt::Differentiate(trace, rules, opts)));
      IRT_RETURN_IF_ERROR(irt::PrintGradient(r, popts, *out));
    }
    for (const irt::ArgumentDerivative& a : r.arguments) {
      if (npy.empty() || !a.chosen || !a.differentiable || a.derivative.is_none()) continue;
      IRT_RETURN_IF_ERROR(irt::WriteNpy(a.derivative, npy + std::to_string(a.pos) + ".npy"));
    }
    const irt::GradStats& st = r.stats;
    cli.log().info(fmt::format(
        "{} nodes, {} active, {} rule applications; open {:.3f} ms, forward pass {:.3f} ms, "
        "sweep {:.3f} ms, write {:.3f} ms; peak memory {:.1f} MiB",
        st.nodes, st.active_nodes, st.rule_applications, open_s * 1e3, st.activity_seconds * 1e3,
        st.sweep_seconds * 1e3, st.write_seconds * 1e3, PeakMiB()));
    return out->Commit();
  });
}
