// libFuzzer target over the trace reader, the call-tree queries, the
// printers and the checker. Run from a build with -DIRT_FUZZ=ON:
//   bin/trace_fuzzer -dict=tests/fuzz/trace.dict NEW_DIR tests/fuzz/corpus
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "trace_fuzz_body.h"

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
