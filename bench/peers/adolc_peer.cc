// ADOL-C on the benchmark workloads W1-W4 (bench/README.md): records the
// workload with adouble to a tape, then computes the gradient from the tape.
//
//   irt-peer-adolc W1|W2|W3|W4 [--size N] [--runs R] [--whole] [--grad FILE.npy]
//
// Each run records a fresh tape (trace_on with keep, trace_off), reverses it
// with the values the recording kept (fos_reverse), and computes the gradient
// from the stored tape at the same point (gradient(): zos_forward replay plus
// fos_reverse), the analogue of irt-grad reading a trace file, and the
// derivative along the all-ones direction from the stored tape (fos_forward,
// the analogue of irt-grad --mode forward). ADOL-C's
// default buffers hold 524288 entries, so a longer tape goes to ADOLC-*.tap
// files in the current directory; they are removed at the end. --whole does
// one record and one gradient() only, for timing the whole process.
//
// Prints one line of key=value pairs: the best (smallest) time over the runs
// of each phase in ms, the tape statistics, the value, the tangent along
// all-ones and, for one input, the derivative; --grad writes the whole
// gradient as a 1-D float64 .npy file.
#include <adolc/adolc.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "workloads.h"

namespace {

constexpr short kTag = 1;

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool IsTapeFile(const std::string& name) {
  return name.rfind("ADOLC-", 0) == 0 && name.size() > 4 &&
         name.compare(name.size() - 4, 4, ".tap") == 0;
}

// Sums the sizes of the ADOL-C tape files in the current directory, or
// removes them (removeTape leaves the Taylor file behind).
long TapeFiles(bool remove) {
  long bytes = 0;
  DIR* dir = opendir(".");
  if (dir == nullptr) return 0;
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir)) {
    if (IsTapeFile(entry->d_name)) names.emplace_back(entry->d_name);
  }
  closedir(dir);
  for (const std::string& name : names) {
    struct stat st;
    if (stat(name.c_str(), &st) == 0) bytes += st.st_size;
    if (remove) unlink(name.c_str());
  }
  return bytes;
}

bool WriteNpy(const std::string& path, const std::vector<double>& values) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" +
                       std::to_string(values.size()) + ",), }";
  header.append(63 - (header.size() + 10) % 64, ' ');
  header += '\n';
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const uint16_t length = static_cast<uint16_t>(header.size());
  const char magic[] = "\x93NUMPY\x01\x00";
  bool ok = std::fwrite(magic, 1, 8, f) == 8 && std::fwrite(&length, 2, 1, f) == 1 &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(values.data(), sizeof(double), values.size(), f) == values.size();
  return std::fclose(f) == 0 && ok;
}

int Usage() {
  std::fprintf(stderr,
               "usage: irt-peer-adolc W1|W2|W3|W4 [--size N] [--runs R] [--whole] "
               "[--grad FILE.npy]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  namespace b = irt::bench;
  if (argc < 2) return Usage();
  const std::string workload = argv[1];
  long size = workload == "W1"   ? b::kPowsumN
              : workload == "W2" ? b::kRosenN
              : workload == "W3" ? b::kRecursionD
                                 : b::kBatch;
  int runs = 3;
  bool whole = false;
  std::string grad_path;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--whole") {
      whole = true;
    } else if (i + 1 < argc && arg == "--size") {
      size = std::atol(argv[++i]);
    } else if (i + 1 < argc && arg == "--runs") {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (i + 1 < argc && arg == "--grad") {
      grad_path = argv[++i];
    } else {
      return Usage();
    }
  }
  if (whole) runs = 1;

  std::vector<double> input, mlp_x;
  if (workload == "W1") {
    input = {b::kPowsumX};
  } else if (workload == "W2") {
    for (long i = 0; i < size; ++i) input.push_back(b::RosenX(i));
  } else if (workload == "W3") {
    input = {b::kRecursionX};
  } else if (workload == "W4") {
    input = b::MlpParameters();
    mlp_x = b::MlpInput();
  } else {
    return Usage();
  }
  const int n = static_cast<int>(input.size());

  double value = 0;
  auto record = [&] {
    trace_on(kTag, 1);
    std::vector<adouble> x(n);
    for (int i = 0; i < n; ++i) x[i] <<= input[i];
    adouble y;
    if (workload == "W1")
      y = b::Powsum<adouble>(x[0], size);
    else if (workload == "W2")
      y = b::Rosenbrock<adouble>(x.data(), size);
    else if (workload == "W3")
      y = b::Recursion<adouble>(x[0], size);
    else
      y = b::Mlp<adouble>(mlp_x.data(), x.data());
    y >>= value;
    trace_off();
  };

  constexpr double kInf = std::numeric_limits<double>::infinity();
  double record_ms = kInf, reverse_ms = kInf, gradient_ms = kInf, tangent_ms = kInf;
  double tangent = 0;
  std::vector<double> ones(n, 1.0);  // fos_forward takes it as non-const
  long file_bytes = 0;
  std::vector<double> reverse(n), grad(n);
  for (int run = 0; run < runs; ++run) {
    const double t0 = NowMs();
    record();
    const double t1 = NowMs();
    record_ms = std::min(record_ms, t1 - t0);
    file_bytes = TapeFiles(false);
    if (!whole) {
      double seed = 1.0;
      const double t2 = NowMs();
      fos_reverse(kTag, 1, n, &seed, reverse.data());
      reverse_ms = std::min(reverse_ms, NowMs() - t2);
    }
    const double t3 = NowMs();
    gradient(kTag, n, input.data(), grad.data());
    gradient_ms = std::min(gradient_ms, NowMs() - t3);
    if (!whole) {
      double y = 0;
      const double t4 = NowMs();
      fos_forward(kTag, 1, n, 0, input.data(), ones.data(), &y, &tangent);
      tangent_ms = std::min(tangent_ms, NowMs() - t4);
    }
  }

  size_t stats[STAT_SIZE];
  tapestats(kTag, stats);
  // The tape: one byte per operation, a locint per location, a double per
  // constant; the values kept for the reverse sweep are Taylor doubles.
  const size_t tape_bytes = stats[NUM_OPERATIONS] + stats[NUM_LOCATIONS] * sizeof(locint) +
                            stats[NUM_VALUES] * sizeof(double);
  const size_t value_bytes = stats[TAY_STACK_SIZE] * sizeof(double);
  double reverse_diff = 0;  // kept Taylors vs replay: the same gradient
  for (int i = 0; i < n && !whole; ++i)
    reverse_diff = std::max(reverse_diff, std::abs(reverse[i] - grad[i]));

  std::printf("peer=adolc workload=%s size=%ld runs=%d value=%.17g record_ms=%.4f gradient_ms=%.4f",
              workload.c_str(), size, runs, value, record_ms, gradient_ms);
  if (!whole) {
    std::printf(" reverse_ms=%.4f reverse_vs_gradient=%.3g tangent_ms=%.4f tangent=%.17g",
                reverse_ms, reverse_diff, tangent_ms, tangent);
  }
  std::printf(" ops=%zu tape_bytes=%zu value_bytes=%zu file_bytes=%ld", stats[NUM_OPERATIONS],
              tape_bytes, value_bytes, file_bytes);
  if (n == 1) std::printf(" derivative=%.17g", grad[0]);
  std::printf("\n");
  removeTape(kTag, ADOLC_REMOVE_COMPLETELY);
  TapeFiles(true);
  if (!grad_path.empty() && !WriteNpy(grad_path, grad)) {
    std::fprintf(stderr, "irt-peer-adolc: cannot write '%s'\n", grad_path.c_str());
    return 1;
  }
  return 0;
}
