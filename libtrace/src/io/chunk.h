// Internal: framing and verification of one chunk, shared by Trace (random
// access), ChunkStream (sequential) and the checker.
#ifndef IRT_SRC_CHUNK_H_
#define IRT_SRC_CHUNK_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "io/column_reader.h"
#include "io/packed.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irtrace_generated.h"

namespace irt::internal {

/// The few header fields read from a chunk before it is verified, with
/// every offset bounds-checked by hand (cheap enough to do for every chunk
/// when a file is opened).
struct ChunkHeader {
  uint16_t format_major = 0, format_minor = 0;
  uint64_t index = 0;
  uint64_t base = 0;
  uint32_t base_depth = 0;
  uint64_t num_nodes = 0;
  bool last = false;
  bool fields_read = false;  // all of the above but num_nodes have been read
};

/// A chunk's root table and its vtable lie within its first 64 KiB
/// (FlatBuffers builders put them first).
inline constexpr size_t kMaxRootBytes = 64 << 10;

/// `buf` points just after the size prefix; `len` is the prefix value.
/// Checks the identifier and reads the header. Errors are bare messages
/// ("bad file identifier ...") for the caller to locate.
Status ReadChunkHeader(const uint8_t* buf, size_t len, ChunkHeader* out);

/// The same for a chunk of which only the first `avail` bytes (after the
/// prefix) have arrived, so that a chunk can be refused before the rest of
/// it is read: an error as soon as the bytes at hand rule the chunk out; ok
/// with `*need` = 0 when the header is read; ok with `*need` > `avail` when
/// reading it needs the first `*need` bytes (`out` then holds whatever was
/// read: all fields but `num_nodes` once the root table has arrived).
Status ReadChunkHeader(const uint8_t* buf, size_t len, size_t avail, ChunkHeader* out,
                       size_t* need);

/// Memory for decoded format-2 columns, freed with the arena (a Trace's):
/// large blocks, on huge pages where the system allows, so that decoding
/// costs few page faults. Past kMemoryBytes, blocks are pages of an
/// unlinked file in $TMPDIR, which the kernel may write out and drop as it
/// does the pages of a mapped format-1 file: a trace read whole holds at
/// most kMemoryBytes of memory that only it can free.
class DecodeArena {
 public:
  static constexpr uint64_t kMemoryBytes = uint64_t{128} << 20;
  explicit DecodeArena(uint64_t memory_bytes = kMemoryBytes) : memory_limit_(memory_bytes) {}
  DecodeArena(const DecodeArena&) = delete;
  DecodeArena& operator=(const DecodeArena&) = delete;
  ~DecodeArena();
  /// `bytes` of uninitialised memory, 16-byte aligned. Throws
  /// std::bad_alloc when neither memory nor the file can hold them.
  /// Thread-safe (both threads of Trace::VerifyAhead decode chunks).
  void* Allocate(size_t bytes);
  /// The first block when the first request fits in it (a small trace).
  static constexpr size_t kSmallBlock = size_t{64} << 10;

 private:
  struct Block {
    uint8_t* base;
    size_t size, used;
    enum Where : uint8_t { kHeap, kTensorBlock, kFile } where;
  };
  std::mutex mu_;
  std::vector<Block> blocks_;
  uint64_t memory_limit_;
  uint64_t memory_bytes_ = 0;  // in anonymous blocks
  int fd_ = -1;                // the file of the other blocks, once made
  uint64_t file_bytes_ = 0;
};

/// What verification learns about a chunk that node access needs.
struct ChunkFacts {
  std::vector<uint16_t> class_refs;  // dynamic references per node of each class
  /// Calls open after the chunk's last node (base_depth + opened - closed):
  /// the next chunk's base_depth, or 0 after the final chunk.
  uint32_t end_depth = 0;
  /// When verification fails at a node: that node, for "chunk C, node N: ...".
  NodeId failed_node = kNoNode;
  /// A format-2 chunk's node and reference columns, decoded from its packed
  /// column (io/packed.h), for a format-1 chunk read in place: in `arena`
  /// when one is given (a Trace keeps every chunk it verifies), else in
  /// `columns` (reused from chunk to chunk by a ChunkStream).
  bool packed = false;
  DecodeArena* arena = nullptr;
  const NodeRec* decoded_nodes = nullptr;
  uint32_t decoded_count = 0;
  const uint32_t* decoded_refs = nullptr;
  uint64_t decoded_n_refs = 0;
  /// The nodes, then the room for their distances (ColumnsIn): one buffer,
  /// so that a chunk of 2^16 nodes decodes into one huge page, not two.
  GrowBuffer<NodeRec> columns;
  /// Decoded into `columns` (no arena) for a reader that releases
  /// and re-decodes chunks (RedecodeChunk).
  bool transient = false;
};

/// The node and reference columns of a chunk whose tables VerifyChunk has
/// checked: in the chunk (format 1) or decoded into `facts` (format 2).
struct NodeColumn {
  const NodeRec* nodes = nullptr;
  uint32_t count = 0;
  const uint32_t* refs = nullptr;
  uint64_t n_refs = 0;
};
NodeColumn NodesOf(const fb::Chunk* chunk, const ChunkFacts& facts);

/// How a path is named in messages: 'path', or <stdin> for "-".
std::string DisplayName(const std::string& path);

/// Checks the framing of the chunk at `p` and reads its header, from the
/// first `avail` bytes of it (size prefix included) that are at hand. `ended`
/// says that no bytes follow those (the input's end); otherwise an ok return
/// with *need != 0 asks for the first *need bytes, after checking all that the
/// bytes at hand allow (so a hostile chunk is refused before it is read).
/// *len_out is the size prefix once it is known to be valid. `off` is the
/// chunk's byte offset (for messages), `number` the expected chunk number and
/// `base` the expected first node.
Status FrameChunk(const uint8_t* p, uint64_t avail, bool ended, uint64_t off, uint64_t number,
                  NodeId base, uint64_t* len_out, ChunkHeader* h, uint64_t* need);

/// Runs the FlatBuffers verifier and checks every chunk-local table: class
/// kinds, value kinds and ranges, operand pools, literals, tensors (dtype,
/// shape, data size), tuples (items refer to lower indices, nesting depth at
/// most kMaxTupleDepth, decoded size at most kMaxDecodedSize), metadata
/// (node and key ranges, sorted), functions. Then checks every node
/// (CheckNode, plus the call structure and the references within the
/// chunk: CheckNodes). `prefixed` points at the size prefix; `total` = 4 +
/// prefix value.
Status VerifyChunk(const uint8_t* prefixed, size_t total, ChunkFacts* facts);

/// Decodes the packed column of a format-2 chunk whose tables VerifyChunk
/// checked (with `facts`) into `nodes` (room for node_count) and `refs`
/// (room for PackedRefRoom of its packed column).
Status UnpackChunk(const fb::Chunk* c, const ChunkFacts& facts, NodeRec* nodes, uint32_t* refs,
                   uint64_t* n_refs, uint32_t* failed);

/// Decodes again, into facts' own buffers, a transient format-2 chunk that
/// VerifyChunk accepted and whose columns were then released (Trace's
/// ReleaseColumns). The decoder is safe on any bytes; a chunk whose bytes
/// changed since it was checked (a mapped file modified while it is read)
/// fails when its counts change, and is otherwise trusted as a format-1
/// chunk's columns, read in place, are.
Status RedecodeChunk(const fb::Chunk* c, ChunkFacts* facts);

inline constexpr int kMaxTupleDepth = 64;

/// The most a tuple may decode to, counting every scalar, string, function
/// or empty-tuple leaf as 1 and every tensor as its number of elements
/// (schema/README.md §6). Tuples share items by index, so without this
/// bound 30 tuples of two items each could describe 2^30 leaves.
inline constexpr uint64_t kMaxDecodedSize = uint64_t{1} << 24;

/// Checks node `local` of a verified chunk: class index, reference range,
/// backward distances (1 <= d <= id), value index ranges.
Status CheckNode(const fb::Chunk* chunk, const ChunkFacts& facts, uint32_t local, NodeId id);

/// Checks every node of a chunk whose tables VerifyChunk has checked, as
/// schema/README.md §8 lists: CheckNode's indices; the call structure (the
/// root marker first, closers linking to the innermost open call, no node
/// outside the root call, at most base_depth calls closed that opened in
/// earlier chunks); and every reference to a node of the same chunk (not to
/// a call marker, not to a jump except a block argument's to the last jump
/// of its own call, not into a call that has closed). Sets facts->end_depth.
Status CheckNodes(const fb::Chunk* chunk, ChunkFacts* facts);

/// The calls open across chunks. Fed every verified chunk in order, it
/// checks what a chunk alone cannot: that a closer of a call opened in an
/// earlier chunk links to the innermost open marker. Used by CheckTrace and
/// by Trace,
/// which feeds it the chunks as they are verified in order.
class CallStack {
 public:
  /// Whether Feed reads the nodes of `chunk` (whether any of its classes
  /// opens or closes a call): a chunk it does not read may give back its
  /// columns before it is fed (Trace::ReleaseColumns).
  static bool Reads(const ChunkColumns& chunk);
  /// On an error, *failed_node is the closer at fault.
  Status Feed(const ChunkColumns& chunk, NodeId* failed_node);
  size_t depth() const { return open_.size(); }
  /// The marker of the innermost open call (depth() > 0).
  NodeId innermost() const { return open_.back(); }
  uint64_t calls() const { return calls_; }
  uint64_t max_depth() const { return max_depth_; }

 private:
  // Markers of the open calls, outermost first (deep: GrowStack).
  std::vector<NodeId, TensorAllocator<NodeId>> open_;
  uint64_t calls_ = 0;
  uint64_t max_depth_ = 0;
};

/// What a reader of a ChunkStream checks beyond each chunk (which the
/// stream verifies): that each chunk starts at the call depth the chunks
/// before it leave, the closers of calls opened in earlier chunks
/// (CallStack), and the final chunk (CheckFinalChunk). Feed it every chunk
/// in order; errors are whole messages naming the stream.
class StreamCheck {
 public:
  explicit StreamCheck(std::string name) : name_(std::move(name)) {}
  Status Feed(const ChunkColumns& chunk, const ChunkInfo& info);
  /// After the last chunk: an error if no final chunk came.
  Status Finish() const;
  const CallStack& calls() const { return calls_; }
  NodeId nodes() const { return nodes_; }
  bool complete() const { return complete_; }

 private:
  std::string name_;
  CallStack calls_;
  NodeId nodes_ = 0;
  bool complete_ = false;
};

/// The checks of a stream's final chunk that need the chunks before it:
/// `total_nodes` equals `nodes` (all chunks'), and no call is left open.
/// Bare messages ("chunk C: ..."), for the caller to prefix with the name.
Status CheckFinalChunk(const ChunkColumns& chunk, NodeId nodes, const CallStack& calls);

/// The message of a failed VerifyChunk: "chunk C, node N: what" when it
/// failed at a node, else "chunk C at byte B: what".
std::string ChunkError(uint64_t chunk, uint64_t byte, const ChunkFacts& facts,
                       const std::string& what);

/// Checks a Value struct against the chunk's tables.
Status CheckValue(const fb::Chunk* chunk, const fb::Value& v, size_t tuple_limit);

/// Decodes a value of a verified chunk.
Value DecodeValue(const fb::Chunk* chunk, const fb::Value& v);
Value DecodeValue(const fb::Chunk* chunk, uint64_t bits, fb::VKind kind);

/// "chunk C, node N: message".
std::string At(uint64_t chunk, NodeId node, const std::string& message);

/// Size of one dtype element, 0 for unknown.
size_t ElementSize(fb::DType t);

}  // namespace irt::internal

#endif  // IRT_SRC_CHUNK_H_
