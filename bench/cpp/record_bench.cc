// Records the workloads W1-W4 of bench/ (see bench/ir/) with the C++
// recording front end, irt/record.h, and prints per workload: the plain
// C++ time (the same program on plain doubles), the recording time, nodes
// and bytes, ns per node and per workload operation, and the result.
//
//   irt-record-bench [--runs N] [--no-write-behind] [--out DIR] [W1 W2 W3 W4]
//
// --no-write-behind packs and writes each chunk on the recording thread
// (WriterOptions::write_behind), to see what the second thread gives or
// costs on this machine.
// Each trace is written to DIR/wK.fb (default: a temporary directory), so
// that irt-grad can differentiate it afterwards (bench/grad_bench.py).
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "irt/record.h"
#include "workloads.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Result {
  double plain_s = 1e300, record_s = 1e300;
  uint64_t nodes = 0, bytes = 0;
  double value = 0;
};

bool write_behind = true;

template <class Plain, class Rec>
Result Measure(int runs, const std::string& path, Plain plain, Rec rec) {
  Result r;
  for (int k = 0; k < runs; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    volatile double v = plain();
    auto t1 = std::chrono::steady_clock::now();
    (void)v;
    r.plain_s = std::min(r.plain_s, Seconds(t0, t1));
  }
  for (int k = 0; k < runs; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    irt::rec::RecorderOptions opts;
    opts.producer = "irt-record-bench";
    opts.writer.write_behind = write_behind;
    irt::rec::Recorder recorder(path, opts);
    double v = rec(recorder);
    irt::Status s = recorder.Finish();
    auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "irt-record-bench: %s\n", s.message().c_str());
      std::exit(1);
    }
    r.record_s = std::min(r.record_s, Seconds(t0, t1));
    r.nodes = recorder.nodes();
    r.value = v;
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) r.bytes = static_cast<uint64_t>(st.st_size);
  return r;
}

void Print(const char* w, const Result& r, double ops) {
  std::printf("%s plain          %10.3f ms\n", w, r.plain_s * 1e3);
  std::printf("%s record         %10.3f ms\n", w, r.record_s * 1e3);
  std::printf("%s nodes          %10llu\n", w, static_cast<unsigned long long>(r.nodes));
  std::printf("%s bytes          %10llu\n", w, static_cast<unsigned long long>(r.bytes));
  // Recording over plain; a tensor workload may record in less time than
  // its plain version takes (its products are Eigen's either way): then
  // there is no overhead to divide.
  const double over = r.record_s - r.plain_s;
  if (over > 0) {
    std::printf("%s ns/node        %10.2f  (recording over plain)\n", w,
                over * 1e9 / static_cast<double>(r.nodes));
    std::printf("%s ns/op          %10.2f  (per workload operation, %g ops)\n", w, over * 1e9 / ops,
                ops);
  } else {
    std::printf("%s ns/node        %10s  (recording took no longer than plain)\n", w, "-");
  }
  std::printf("%s value          %.17g\n", w, r.value);
  std::fflush(stdout);
}

}  // namespace

int Main(int argc, char** argv) {
  int runs = 3;
  std::string dir;
  std::vector<std::string> which;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--no-write-behind")) {
      write_behind = false;
    } else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
      dir = argv[++i];
    } else if (argv[i][0] == 'W') {
      which.push_back(argv[i]);
    } else {
      std::fprintf(
          stderr,
          "usage: irt-record-bench [--runs N] [--no-write-behind] [--out DIR] [W1 W2 W3 W4]\n");
      return 2;
    }
  }
  if (dir.empty()) {
    char tmpl[] = "/tmp/irt-record-bench.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return 1;
    dir = tmpl;
  }
  if (which.empty()) which = {"W1", "W2", "W3", "W4"};
  using namespace workloads;
  using irt::rec::Tensor;
  for (const std::string& w : which) {
    std::string path = dir + "/" + w + ".fb";
    if (w == "W1") {
      Result r = Measure(
          runs, path, [] { return PowsumPlain(kW1X, kW1N); },
          [](irt::rec::Recorder& rec) { return rec.Run(Powsum, kW1X, kW1N).value(); });
      Print("W1", r, 2.0 * kW1N);  // ADOL-C tapes pow and + per iteration
    } else if (w == "W3") {
      Result r = Measure(
          runs, path, [] { return RecursionPlain(kW3X, kW3D); },
          [](irt::rec::Recorder& rec) { return rec.Run(Recursion, kW3X, kW3D).value(); });
      Print("W3", r, 6.0 * kW3D);
    } else if (w == "W2") {
      std::vector<double> x = RosenData(kW2N);
      Tensor xt({kW2N}, x);
      Result r = Measure(
          runs, path, [&] { return RosenPlain(x, kW2N); },
          [&](irt::rec::Recorder& rec) { return rec.Run(Rosen, xt, kW2N).value(); });
      Print("W2", r, 13.0 * (kW2N - 1));
    } else if (w == "W4") {
      MlpData d = MlpInputs();
      const std::vector<Tensor>& t = d.t;
      Result r = Measure(
          runs, path, [&] { return MlpPlain(d); },
          [&](irt::rec::Recorder& rec) {
            return rec.Run(Mlp, t[0], t[1], t[2], t[3], t[4], t[5], t[6]).value();
          });
      Print("W4", r, 9.0);
    } else {
      std::fprintf(stderr, "irt-record-bench: no workload %s\n", w.c_str());
      return 2;
    }
  }
  std::printf("traces in %s\n", dir.c_str());
  return 0;
}

// W3 recurses 30000 calls deep in C++ itself: run on a thread with a
// stack large enough for it (the recorder keeps its own call stack on the
// heap; the program's frames are the program's).
int main(int argc, char** argv) {
  struct Args {
    int argc;
    char** argv;
    int status;
  } a{argc, argv, 1};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t{1} << 30);
  pthread_t t;
  auto body = [](void* p) -> void* {
    Args* x = static_cast<Args*>(p);
    x->status = Main(x->argc, x->argv);
    return nullptr;
  };
  if (pthread_create(&t, &attr, body, &a) != 0) return Main(argc, argv);
  pthread_join(t, nullptr);
  return a.status;
}
