// Internal: a copy of one verified chunk with some of its values changed,
// for irt-replay (and MutableTrace). The copy keeps every index of the old
// chunk valid, so the rest of the trace still refers to it unchanged.
#ifndef IRT_SRC_IO_CHUNK_REBUILD_H_
#define IRT_SRC_IO_CHUNK_REBUILD_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "irt/status.h"
#include "irt/value.h"

namespace irt::fb {
struct Chunk;
}  // namespace irt::fb

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

/// Copies a verified chunk into a new size-prefixed FlatBuffer with the
/// edits applied. Everything is copied index for index; new strings,
/// tensors, tuples, literals, operands and classes are appended after the
/// old ones. kUnsupported when the copy would pass the chunk size limit.
Result<std::vector<uint8_t>> RebuildChunk(const fb::Chunk* chunk, const ChunkEdit& edit);

/// The chunk of bytes RebuildChunk returned.
const fb::Chunk* RebuiltChunk(const std::vector<uint8_t>& bytes);

/// The value of node `local` of a rebuilt chunk.
Value RebuiltValue(const std::vector<uint8_t>& bytes, uint32_t local);

}  // namespace irt::internal

#endif  // IRT_SRC_IO_CHUNK_REBUILD_H_
