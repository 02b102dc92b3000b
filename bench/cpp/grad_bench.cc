// Differentiates a stored trace several times in one process with
// libtrace's irt::Differentiate, the way the peers' in-process figures are
// taken (ADOL-C's gradient() from its stored tape, PyTorch's backward(),
// best of their repetitions), and prints the best time of each phase.
//
//   irt-grad-bench [--runs N] [--wrt @N,...] TRACE
//
// Every run opens the trace again (its chunks are checked and decoded
// again) and differentiates it from scratch; what carries over from run to
// run is the process's memory: the heap and the cached tensor blocks that
// earlier runs freed. The first run meets fresh memory, as a whole
// irt-grad process does, and is printed on its own. Every run must give
// the first run's derivatives bit for bit, or the program fails.
//
// The rules are the shipped ones, found as irt-grad finds them (IRT_RULES,
// or the build's share/irtrace/default.rules).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "irt/grad.h"
#include "irt/rules.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "irt-grad-bench: %s\n", what.c_str());
  return 1;
}

int Usage() {
  std::fprintf(stderr,
               "usage: irt-grad-bench [--runs N] [--wrt @N,...] [--column-budget BYTES] TRACE\n");
  return 2;
}

struct Phases {
  double open = 0, forward = 0, sweep = 0, total = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string path;
  irt::GradOptions opts;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
      if (runs < 1) return Usage();
    } else if (!std::strcmp(argv[i], "--column-budget") && i + 1 < argc) {
      opts.column_budget = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--wrt") && i + 1 < argc) {
      for (const char* p = argv[++i]; *p != '\0';) {
        if (*p == '@') ++p;
        char* end = nullptr;
        long n = std::strtol(p, &end, 10);
        if (end == p || n < 1) return Usage();
        opts.wrt.push_back(static_cast<uint32_t>(n));
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') return Usage();
      }
    } else if (path.empty() && argv[i][0] != '-') {
      path = argv[i];
    } else {
      return Usage();
    }
  }
  if (path.empty()) return Usage();
  irt::Result<irt::RuleSet> rules = irt::LoadDefaultRules(argv[0]);
  if (!rules.ok()) return Fail(rules.status().message());

  std::vector<irt::Value> first;
  irt::Value first_result;
  Phases fresh, best{1e300, 1e300, 1e300, 1e300};
  double value = 0;
  for (int k = 0; k < runs; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    irt::Result<irt::Trace> trace = irt::Trace::Open(path);
    if (!trace.ok()) return Fail(trace.status().message());
    auto t1 = std::chrono::steady_clock::now();
    irt::Result<irt::GradResult> r = irt::Differentiate(*trace, *rules, opts);
    if (!r.ok()) return Fail(path + ": " + r.status().message());
    auto t2 = std::chrono::steady_clock::now();
    Phases p{Seconds(t0, t1), r->stats.activity_seconds, r->stats.sweep_seconds, Seconds(t0, t2)};
    std::vector<irt::Value> got;
    for (const irt::ArgumentDerivative& a : r->arguments) {
      if (a.chosen && a.differentiable) got.push_back(a.derivative);
    }
    if (k == 0) {
      fresh = p;
      first = std::move(got);
      first_result = r->result;
      value = r->result.is_scalar() ? r->result.to_double() : 0;
    } else if (got.size() != first.size() ||
               !std::equal(got.begin(), got.end(), first.begin(), irt::BitEqual) ||
               !irt::BitEqual(r->result, first_result)) {
      return Fail(path + ": run " + std::to_string(k + 1) +
                  " gave another value or other derivatives than the first run");
    }
    best.open = std::min(best.open, p.open);
    best.forward = std::min(best.forward, p.forward);
    best.sweep = std::min(best.sweep, p.sweep);
    best.total = std::min(best.total, p.total);
  }
  auto line = [](const char* what, double fresh_s, double best_s) {
    std::printf("%-9s first %10.3f ms  best %10.3f ms\n", what, fresh_s * 1e3, best_s * 1e3);
  };
  line("open", fresh.open, best.open);
  line("forward", fresh.forward, best.forward);
  line("sweep", fresh.sweep, best.sweep);
  line("total", fresh.total, best.total);
  std::printf("runs      %d\n", runs);
  std::printf("value     %.17g\n", value);
  return 0;
}
