// A structure-aware mutator for trace files, shared by the libFuzzer target
// (LLVMFuzzerCustomMutator) and the hostile-input campaign (trace_mutate).
//
// It walks the chunk framing of its input (decompressing a zstd stream
// first, and recompressing the result most of the time), and mutates at the
// format's level: chunk size prefixes and framing, the header fields of a
// chunk, vector lengths, node references, class fields, literal and tuple
// values, tensor shapes, metadata and strings. Field offsets come from the
// generated FlatBuffers accessors on a verified, aligned copy of a chunk;
// some mutations decode a chunk into plain data, edit it and encode it again
// (longer shapes, tuple chains, long or hostile strings, reordered
// metadata). An input that has no chunk to work on gets byte mutations.
#ifndef IRT_TESTS_FUZZ_TRACE_MUTATOR_H_
#define IRT_TESTS_FUZZ_TRACE_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace irt::fuzz {

/// Mutates `size` bytes at `data` in place (capacity `max_size`) and returns
/// the new size, like libFuzzer's LLVMFuzzerMutate.
using ByteMutator = std::function<size_t(uint8_t* data, size_t size, size_t max_size)>;

/// Returns a mutated copy of `in` of at most `max_size` bytes. The same
/// (`in`, `seed`) gives the same output. `bytes`, if set, does the byte-level
/// mutations; otherwise a small built-in one does.
std::vector<uint8_t> MutateTrace(std::span<const uint8_t> in, uint64_t seed, size_t max_size,
                                 const ByteMutator& bytes = {});

}  // namespace irt::fuzz

#endif  // IRT_TESTS_FUZZ_TRACE_MUTATOR_H_
