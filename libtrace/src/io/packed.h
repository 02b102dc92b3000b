// Internal: the packed node column of a format-2 chunk (schema/README.md
// §4.3). A format-1 chunk stores every node as a 16-byte struct and every
// reference as a 4-byte distance; a format-2 chunk stores one byte string
// that this codec turns into exactly those columns and back, so that every
// reader past the decoder sees the same NodeRec and distance arrays.
//
// Per node: a varint header (class << 2 | mode), then one zigzag varint per
// reference slot (the distance minus the previous distance in the same slot
// of the same class in this chunk), then the value as the mode and the
// class's value kind say (mode 0: written; 1: the previous value of the
// class; 2: a block argument's copy of its jump's operand).
#ifndef IRT_SRC_IO_PACKED_H_
#define IRT_SRC_IO_PACKED_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "io/column_reader.h"
#include "io/grow_buffer.h"
#include "irt/status.h"
#include "irtrace_generated.h"

namespace irt::internal {

/// Bounds of a format-2 chunk, so that decoding allocates at most 128 MiB
/// whatever the chunk claims: nodes (16 bytes each once decoded) and
/// reference slots (4 bytes each).
inline constexpr uint32_t kMaxPackedNodes = 1u << 22;
inline constexpr uint32_t kMaxPackedRefs = 1u << 24;

/// The chunk tables a node's encoding depends on: classes, their reference
/// slots (references plus a closer's link, as VerifyChunk counts them), the
/// operand pool and the literals. Checked against each other before use.
struct PackTables {
  std::span<const fb::NodeClass> classes;
  std::span<const uint16_t> slots;
  std::span<const uint32_t> operands;
  std::span<const fb::Value> literals;
};

/// Reference slots of a node of class `k`: its reference operands (code 0
/// in the pool) plus a closer's link to its call marker. The operands must
/// be in range.
inline uint32_t ClassSlots(const fb::NodeClass& k, const uint32_t* operands) {
  uint32_t n = 0;
  for (uint32_t j = 0; j < k.n_operands(); ++j) n += operands[k.first_operand() + j] == 0 ? 1 : 0;
  return n + (k.kind() == fb::Kind::Return || k.kind() == fb::Kind::Error ? 1 : 0);
}

/// Encodes nodes and their distances (refs[first_ref ...], slots per
/// class) into the start of `buffer` (grown to the worst case when smaller,
/// never shrunk, never cleared: only the bytes written are touched) and
/// returns the number of bytes written.
size_t PackNodes(const PackTables& t, std::span<const NodeRec> nodes,
                 std::span<const uint32_t> refs, GrowBuffer<uint8_t>* buffer);

/// The distances a packed column of `packed_size` bytes may decode to (each
/// takes a byte at least): the room UnpackNodes needs for them.
inline uint64_t PackedRefRoom(size_t packed_size) {
  return packed_size < kMaxPackedRefs ? packed_size : kMaxPackedRefs;
}

/// Decodes `count` nodes from `packed` into `nodes` (room for `count`) and
/// their distances into `refs` (room for PackedRefRoom(packed.size())),
/// `*n_refs` of them. The tables must have passed VerifyChunk's table
/// checks. Fails on truncation, trailing bytes, an unknown class or mode,
/// a distance out of 32 bits, a value that cannot be derived, or the bounds
/// above; `*failed` is then the node at fault (chunk-local), or ~0u for the
/// column as a whole. Values and distances are not otherwise checked:
/// CheckNodes does that on the result.
Status UnpackNodes(const PackTables& t, std::span<const uint8_t> packed, uint32_t count,
                   NodeRec* nodes, uint32_t* refs, uint64_t* n_refs, uint32_t* failed);

/// Marks the calling thread as one that decodes chunks for another thread
/// to read (a Trace's verifier): UnpackNodes then takes its output lines
/// for writing ahead of its stores, as the other core last read them.
void DecodeForAnotherThread();

}  // namespace irt::internal

#endif  // IRT_SRC_IO_PACKED_H_
