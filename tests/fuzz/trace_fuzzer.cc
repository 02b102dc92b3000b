// libFuzzer target over the trace reader, the call-tree queries, the
// printers, the checker and the tools' analyses, with a structure-aware
// mutator (trace_mutator.h). Run from a build with -DIRT_FUZZ=ON:
//   bin/trace_fuzzer -dict=tests/fuzz/trace.dict NEW_DIR tests/fuzz/corpus
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "trace_fuzz_body.h"
#include "trace_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The printers write to standard output; libFuzzer reports on stderr.
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, STDOUT_FILENO);
    close(null);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  irt::fuzz::RunOne(data, size);
  return 0;
}

// One mutation in five is libFuzzer's own (it knows the dictionary and the
// comparisons it saw); the rest work at the format's level.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  if (seed % 5 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::vector<uint8_t> out = irt::fuzz::MutateTrace({data, size}, seed, max_size, LLVMFuzzerMutate);
  if (out.size() > max_size) out.resize(max_size);
  if (!out.empty()) std::memcpy(data, out.data(), out.size());
  return out.size();
}
