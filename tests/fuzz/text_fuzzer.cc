// libFuzzer target over the text the tools read: IR modules, rules, value
// literals, command-line specs and .npy files (text_fuzz_body.h). Run from
// a build with -DIRT_FUZZ=ON:
//   bin/text_fuzzer -dict=tests/fuzz/text.dict NEW_DIR tests/fuzz/text-corpus
#include <cstddef>
#include <cstdint>

#include "text_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  irt::fuzz::RunText(data, size);
  return 0;
}
