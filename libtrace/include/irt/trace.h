// Reading traces: the chunk index of a mapped file (or of standard input,
// spooled to an unlinked temporary file), lazy per-chunk verification, and
// node views. Every index read from the file is checked before it is used;
// a view is only handed out for a node whose own indices are in range.
#ifndef IRT_TRACE_H_
#define IRT_TRACE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/progress.h"
#include "irt/status.h"
#include "irt/value.h"

namespace irt {

namespace internal {
struct ChunkColumns;  // libtrace's column reader (opaque outside libtrace)
class RawNode;
}  // namespace internal

/// The newest format version this library reads and the one it writes by
/// default. It reads formats 1.0 and 1.1 as well, and writes 1.1 on request
/// (WriterOptions::format_major, irt-convert).
inline constexpr uint16_t kFormatMajor = 2;
inline constexpr uint16_t kFormatMinor = 0;
/// The last minor version of format 1.
inline constexpr uint16_t kFormat1Minor = 1;
inline constexpr char kFileIdentifier[] = "IRTC";
/// Largest chunk a reader accepts (and a writer produces).
inline constexpr uint64_t kMaxChunkBytes = (1ull << 31) - 64;

/// Global node index: position in execution order over the whole trace.
using NodeId = uint64_t;
inline constexpr NodeId kNoNode = ~0ull;

/// Mirrors fb::Kind.
enum class NodeKind : uint8_t {
  kArgument = 0,
  kConstant = 1,
  kPrimitive = 2,
  kCall = 3,
  kSpecial = 4,
  kJump = 5,
  kReturn = 6,
  kError = 7,
};
inline constexpr int kNumNodeKinds = 8;
std::string_view NodeKindName(NodeKind k);  // "Argument", "Constant", ...

/// Where a node came from in the IR.
struct Location {
  uint32_t block = 0;
  uint32_t pos = 0;
  bool is_branch = false;  // §b:&pos (Jump, Return, Error at a branch) vs §b:%pos
  uint32_t line = 0;
  uint16_t col = 0;
};

/// One operand of a node: a reference to an earlier node or a literal.
struct Operand {
  bool is_ref = false;
  NodeId ref = kNoNode;
  Value literal;
};

/// A tensor value where the trace holds it: its elements are not copied.
/// Valid while its Trace lives.
struct TensorView {
  DType dtype = DType::kF64;
  std::vector<int64_t> shape;     // row-major (C order); empty = 0-dimensional
  std::span<const uint8_t> data;  // little-endian elements
};

struct MetaEntry {
  std::string_view key;
  Value value;
};

class Trace;

/// A checked view of one node. Valid while its Trace lives (a chunk whose
/// decoded columns a gradient's passes gave back is decoded again when the
/// view is read).
class NodeView {
 public:
  NodeView() = default;
  /// Made by Trace::node (and by libtrace's column reader, whose windows
  /// hold the chunk's columns; every node of them has been checked).
  NodeView(const internal::ChunkColumns* columns, uint32_t local, NodeId id,
           const Trace* trace = nullptr)
      : columns_(columns), trace_(trace), local_(local), id_(id) {}
  NodeId id() const { return id_; }
  NodeKind kind() const;
  VKind vkind() const;
  /// Raw Value.bits of the node's value.
  uint64_t bits() const;
  /// The decoded value (copies tensor data); kNone for jumps and markers.
  Value value() const;
  /// The value of a node whose value is a tensor, in place (no copy);
  /// nullopt for any other value.
  std::optional<TensorView> tensor() const;
  /// Primitive, callee or special name; "" when the node has none.
  std::string_view op() const;
  Location location() const;
  size_t num_operands() const;
  Operand operand(size_t i) const;
  /// Reference operands only, in operand order.
  std::vector<NodeId> refs() const;
  /// Jump: target block, whether it has a condition, and the condition value
  /// for which it is taken.
  uint32_t jump_target() const;
  bool has_condition() const;
  bool taken_when() const;
  /// Argument: 0 for a function argument, k for block argument #k.
  uint32_t block_arg_index() const;
  /// Return/Error: the Call marker the node closes.
  NodeId closes() const;
  /// The node's metadata, in the order written.
  std::vector<MetaEntry> meta() const;
  /// One metadata value by key.
  std::optional<Value> meta(std::string_view key) const;

 private:
  internal::RawNode Raw() const;
  const internal::ChunkColumns* columns_ = nullptr;
  const Trace* trace_ = nullptr;  // to decode given-back columns again
  uint32_t local_ = 0;
  NodeId id_ = 0;
};

/// Where one chunk lies and what it holds.
struct ChunkInfo {
  uint64_t offset = 0;  // of its size prefix in the file
  uint64_t size = 0;    // bytes after the prefix
  uint64_t index = 0;
  NodeId base = 0;
  uint64_t num_nodes = 0;
  uint32_t base_depth = 0;
  bool last = false;
};

struct OpenOptions {
  /// Accept a trace whose writer did not finish (no final chunk, or a
  /// truncated last chunk): the complete chunks are read.
  bool allow_partial = false;
  /// If given (it must outlive the Trace), counts the nodes of each chunk
  /// when it is verified, out of a total of the trace's nodes.
  Progress* progress = nullptr;
};

/// A trace opened for random access. Not thread-safe (chunks are verified
/// lazily, on first use).
class Trace {
 public:
  /// Maps `path`; "-" reads standard input (spooled to an unlinked temporary
  /// file unless it is a regular file). Hops the chunk prefixes, checking
  /// framing, identifiers and versions. Errors: kIoError, kDataError,
  /// kUnsupported (newer major version), messages prefixed with the path
  /// ("<stdin>" for "-").
  static Result<Trace> Open(const std::string& path, const OpenOptions& options = {});
  /// Same over bytes owned by the caller (they must outlive the Trace).
  static Result<Trace> FromBytes(const uint8_t* data, size_t size, std::string name,
                                 const OpenOptions& options = {});

  Trace(Trace&&) noexcept;
  Trace& operator=(Trace&&) noexcept;
  ~Trace();

  const std::string& name() const;
  uint64_t size() const { return num_nodes_; }
  uint64_t file_bytes() const;
  /// True when the final chunk is present.
  bool complete() const;
  const std::vector<ChunkInfo>& chunks() const;
  uint16_t format_major() const;
  uint16_t format_minor() const;
  std::string_view producer_name() const;
  std::string_view producer_version() const;
  /// Trace-level metadata (from the final chunk).
  std::vector<MetaEntry> trace_meta() const;

  /// A checked view of node `id`: verifies its chunk on first use and the
  /// node's own indices. Errors name the chunk and node.
  Result<NodeView> node(NodeId id) const;
  /// The chunk holding node `id`.
  uint32_t chunk_of(NodeId id) const;
  /// Verifies chunk `i` (FlatBuffers verifier plus every chunk-local table).
  Status VerifyChunk(uint32_t i) const;
  /// For a reader that will read every chunk in order: verifies them ahead
  /// of it, in order, on a second thread (when the machine has two cores and
  /// the trace two chunks), so that checking and decoding a chunk overlap
  /// with the caller's work on the one before. VerifyChunk then verifies
  /// the chunk it is asked for itself when the second thread has not
  /// started on it, and while it waits for it verifies a later one nobody
  /// has started; results and errors are those of verifying on the
  /// caller's thread alone.
  void VerifyAhead() const;
  /// The IR text of a function, looked up in the chunk holding `near` first.
  std::optional<std::string_view> FunctionIR(std::string_view name, NodeId near) const;

  /// The decoded columns of chunk `i`, verified on first use (the type is
  /// internal to libtrace), decoded again if they were released. Errors:
  /// those of VerifyChunk, or a released chunk whose file changed since.
  Result<const internal::ChunkColumns*> columns(uint32_t i) const;
  /// For a reader that visits a large format-2 trace more than once and can
  /// let go of chunks (the gradient's passes): the chunks verified from now
  /// on are decoded into buffers that ReleaseColumns takes back for reuse,
  /// so that memory is bounded by the chunks held, not the trace. Call
  /// before VerifyAhead, which then runs only a few chunks ahead of the
  /// chunks asked for. Internal to libtrace.
  void UseTransientColumns() const;
  /// Lets go of the decoded columns of chunk `i` (pointers into them become
  /// invalid; columns(i) decodes them again). Returns the bytes given back,
  /// or 0 when the chunk holds none that can be (format 1, decoded before
  /// UseTransientColumns, or opening or closing calls and not yet checked
  /// against the chunks before it).
  uint64_t ReleaseColumns(uint32_t i) const;
  /// For a reader of transient columns that goes on to read chunks from
  /// the last down (the reverse sweep), and is now at chunk `at`: the
  /// verifier thread of VerifyAhead, once done, decodes released chunks
  /// again a few below it, so that columns() finds them ready. Internal to
  /// libtrace.
  void DecodeBehind(uint32_t at) const;
  /// The bytes of chunk `i`, its size prefix included (valid while the Trace lives).
  std::span<const uint8_t> chunk_bytes(uint32_t i) const;
  /// OpenOptions::progress (nullptr when none), for the passes over the
  /// trace that take long after its chunks have been verified.
  Progress* progress() const;

 private:
  Trace();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t num_nodes_ = 0;
};

/// Sequential access to chunks with memory bounded by two chunks: reads a
/// file or a pipe chunk by chunk, each verified before it is returned, the
/// next one read ahead and verified on a second thread meanwhile (on a
/// machine with two cores). For streaming tools.
class ChunkStream {
 public:
  /// `progress`, if given, counts each chunk's nodes and bytes as it is
  /// read, out of the file's size (added to the total here, when the file
  /// is a regular file and not compressed).
  static Result<ChunkStream> Open(const std::string& path, Progress* progress = nullptr);
  /// Same, naming the input `name` in errors (a reader of a spooled copy of
  /// standard input calls it "<stdin>").
  static Result<ChunkStream> OpenAs(const std::string& path, const std::string& name,
                                    Progress* progress = nullptr);
  ChunkStream(ChunkStream&&) noexcept;
  ChunkStream& operator=(ChunkStream&&) noexcept;
  ~ChunkStream();
  /// Reads and verifies the next chunk (framing, identifier, version,
  /// FlatBuffers verifier, chunk-local tables, every node). Returns its
  /// columns (internal to libtrace), or nullptr at a clean end of input.
  /// The pointer is valid until the next call.
  Result<const internal::ChunkColumns*> Next();
  const std::string& name() const;
  /// Info about the chunk returned last.
  const ChunkInfo& info() const;
  /// The bytes of the chunk returned last, its size prefix included (valid
  /// until the next call).
  std::span<const uint8_t> chunk_bytes() const;
  uint64_t bytes_read() const;

 private:
  ChunkStream();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace irt

#endif  // IRT_TRACE_H_
