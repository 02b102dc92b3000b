// The body of the text fuzzer, shared by the libFuzzer target and by the
// unit test that replays its seed corpus and every crash ever found.
#ifndef IRT_TESTS_FUZZ_TEXT_FUZZ_BODY_H_
#define IRT_TESTS_FUZZ_TEXT_FUZZ_BODY_H_

#include <cstddef>
#include <cstdint>

namespace irt::fuzz {

/// Runs one input through the text a user hands the tools. The first byte
/// chooses the reader ('0' + k, modulo 5), the rest is its text:
///   0  an IR module (irt-trace): parsed; each of its first functions run
///      under a step and depth limit, recorded (a complete trace, valid by
///      the checker, when the run succeeds or fails at run time) and
///      evaluated without recording (the same outcome and value); then
///      differentiated with the default rules;
///   1  differentiation rules (irt-grad --rules): parsed; then used for
///      both modes on two fixed traces (scalar control flow, tensors);
///   2  a value literal (arguments, --set, --seed): parsed; what
///      FormatValue prints of it reads back as the same value;
///   3  command-line specs: a node path (irt-print --at), a replay change
///      (irt-replay --set, applied to a fixed trace: its output is valid),
///      rand values (irt-trace --rand);
///   4  a .npy file (ReadNpy, through a memfd).
/// Every failure must be an error Status: a crash, a hang, a sanitizer
/// report, unbounded memory or a broken property above is a bug (the
/// properties abort with a message on standard error).
void RunText(const uint8_t* data, size_t size);

}  // namespace irt::fuzz

#endif  // IRT_TESTS_FUZZ_TEXT_FUZZ_BODY_H_
