// The body of the trace fuzzer, shared by the libFuzzer target and by the
// unit test that replays the seed corpus and every crash ever found.
#ifndef IRT_TESTS_FUZZ_TRACE_FUZZ_BODY_H_
#define IRT_TESTS_FUZZ_TRACE_FUZZ_BODY_H_

#include <cstddef>
#include <cstdint>

namespace irt::fuzz {

/// Runs one input through the reader (Trace::FromBytes), a bounded walk of
/// the call tree with every per-node query, both printers (to standard
/// output, which the caller points at /dev/null), and the complete checker
/// over a memfd (the mmap path) and, for inputs that fit, a pipe (the
/// streaming path). Every failure must be an error Status: a crash, a hang,
/// a sanitizer report or unbounded memory is a bug in libtrace. On traces of
/// at most a few thousand nodes it also runs the tools' analyses: gradients
/// (reverse and forward, default rules), slices, diffs (against itself and
/// a mutated copy), a replay with changed arguments, statistics and dot.
void RunOne(const uint8_t* data, size_t size);

}  // namespace irt::fuzz

#endif  // IRT_TESTS_FUZZ_TRACE_FUZZ_BODY_H_
