// Internal: a copy of one verified chunk with some of its values changed,
// for irt-replay (and MutableTrace). The copy keeps every index of the old
// chunk valid, so the rest of the trace still refers to it unchanged.
#ifndef IRT_SRC_IO_CHUNK_REBUILD_H_
#define IRT_SRC_IO_CHUNK_REBUILD_H_

#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "io/column_reader.h"
#include "irt/status.h"
#include "irt/value.h"
#include "irtrace_generated.h"

namespace irt::internal {

/// Edits of one chunk: new node values, new literal operands of the root
/// call marker (its arguments), and truncation for a prefix.
struct ChunkEdit {
  std::vector<std::pair<uint32_t, Value>> values;         // local node, sorted
  std::vector<std::pair<uint32_t, Value>> root_operands;  // operand index of node 0
  uint32_t keep = ~0u;                                    // nodes kept
  // New values of existing metadata: (local node, key) and trace-level keys.
  std::vector<std::tuple<uint32_t, std::string, Value>> meta;
  std::vector<std::pair<std::string, Value>> trace_meta;
  bool rebuild() const {
    return !values.empty() || !root_operands.empty() || keep != ~0u || !meta.empty() ||
           !trace_meta.empty();
  }
};

/// A rebuilt chunk: its bytes, and its node and reference columns (a
/// format-2 chunk's bytes hold them only packed).
struct Rebuilt {
  std::vector<uint8_t> bytes;
  std::vector<NodeRec> nodes;
  std::vector<uint32_t> refs;
};

/// Copies a verified chunk, whose node and reference columns are `nodes`
/// and `refs` (ChunkColumns'), into a new size-prefixed FlatBuffer with the
/// edits applied, in format `format_major` (0: the chunk's own format).
/// Everything is copied index for index; new strings, tensors, tuples,
/// literals, operands and classes are appended after the old ones.
/// kUnsupported when the copy would pass the chunk size limit or a
/// format-2 chunk's bounds.
Result<Rebuilt> RebuildChunk(const fb::Chunk* chunk, std::span<const NodeRec> nodes,
                             std::span<const uint32_t> refs, const ChunkEdit& edit,
                             uint16_t format_major = 0);
/// The same for a chunk rebuilt before.
Result<Rebuilt> RebuildChunk(const Rebuilt& chunk, const ChunkEdit& edit);

/// The root table of a rebuilt chunk.
const fb::Chunk* RebuiltRoot(const Rebuilt& chunk);

/// The value of node `local` of a rebuilt chunk.
Value RebuiltValue(const Rebuilt& chunk, uint32_t local);

}  // namespace irt::internal

#endif  // IRT_SRC_IO_CHUNK_REBUILD_H_
