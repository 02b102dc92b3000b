// irt-record-seed PROGRAM ARGS... -o FILE: records one of the seed's
// programs written in C++ (seed.h) with irt/record.h. PROGRAM is f X, h X N,
// geom N BETA SEED [--max-depth D] [--tag-random], or fails X (which
// throws three calls deep and exits 1 after writing its trace).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "seed.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: irt-record-seed f X | h X N | geom N BETA SEED | fails X "
               "[--max-depth D] [--tag-random] -o FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  std::string out;
  irt::rec::Context ctx;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--max-depth" && i + 1 < argc) {
      ctx.max_depth = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (a == "--tag-random") {
      ctx.tag_random = true;
    } else {
      pos.push_back(a);
    }
  }
  if (out.empty() || pos.empty()) return Usage();
  irt::rec::RecorderOptions opts;
  opts.producer = "irt-record-seed";
  opts.context = &ctx;
  irt::rec::Recorder rec(out, opts);
  const std::string& p = pos[0];
  int status = 0;
  try {
    if (p == "f" && pos.size() == 2) {
      rec.Run(seed::f, std::stod(pos[1]));
    } else if (p == "h" && pos.size() == 3) {
      rec.Run(seed::h, std::stod(pos[1]), std::stoll(pos[2]));
    } else if (p == "geom" && pos.size() == 4) {
      std::mt19937_64 rng(std::stoull(pos[3]));
      rec.Run([&](seed::Int n, seed::Real b) { return seed::geom(n, b, rng); }, std::stoll(pos[1]),
              std::stod(pos[2]));
    } else if (p == "fails" && pos.size() == 2) {
      rec.Run(seed::fails, std::stod(pos[1]));
    } else {
      return Usage();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "irt-record-seed: %s\n", e.what());
    status = 1;
  }
  irt::Status s = rec.Finish();
  if (!s.ok()) {
    std::fprintf(stderr, "irt-record-seed: %s\n", s.message().c_str());
    return 1;
  }
  return status;
}
