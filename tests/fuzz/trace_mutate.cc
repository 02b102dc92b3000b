// trace_mutate: the fuzzer's structure-aware mutator as a command, for the
// hostile-input campaign (tests/fuzz/campaign.py).
//
//   trace_mutate SEED IN OUT [MAX_BYTES]
//
// writes to OUT a mutation of the trace file IN chosen by the integer SEED
// (the same SEED and IN give the same OUT), at most MAX_BYTES long (default
// 1 MiB).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "trace_mutator.h"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: trace_mutate SEED IN OUT [MAX_BYTES]\n");
    return 2;
  }
  uint64_t seed = std::strtoull(argv[1], nullptr, 0);
  size_t max_size = argc == 5 ? std::strtoull(argv[4], nullptr, 0) : size_t{1} << 20;
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "trace_mutate: error: cannot read '%s'\n", argv[2]);
    return 1;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  std::vector<uint8_t> out = irt::fuzz::MutateTrace(bytes, seed, max_size);
  std::FILE* f = std::fopen(argv[3], "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "trace_mutate: error: cannot write '%s'\n", argv[3]);
    return 1;
  }
  bool ok = out.empty() || std::fwrite(out.data(), 1, out.size(), f) == out.size();
  if (std::fclose(f) != 0 || !ok) {
    std::fprintf(stderr, "trace_mutate: error: cannot write '%s'\n", argv[3]);
    return 1;
  }
  return 0;
}
