// Internal: the one checked reader between the file format and the
// analyses. A chunk is verified once, when it is first entered, by the same
// checker irt-check runs (internal::VerifyChunk: its tables and every one of
// its nodes); its node classes are then decoded into ClassFacts, and the
// node columns are read through plain pointers. So every accessor below is a
// load or two, inlined, with no check of its own: all were done on entry.
//
// Analyses (grad, replay, slice, diff, check, stats) read nodes only
// through this header and never see the FlatBuffers tables; NodeView (the
// public view in irt/trace.h) wraps the same windows.
#ifndef IRT_SRC_COLUMN_READER_H_
#define IRT_SRC_COLUMN_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/control_flow.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace irt::fb {
struct Chunk;
}  // namespace irt::fb

namespace irt::internal {

/// A Return or an Error: the nodes that close the innermost open call.
inline bool IsCloser(NodeKind k) { return k == NodeKind::kReturn || k == NodeKind::kError; }

/// The in-file layout of fb::Node and fb::Value (little-endian structs;
/// column_reader.cc asserts that the generated types match).
struct NodeRec {
  uint64_t value;
  uint32_t cls;
  uint32_t first_ref;
};
struct ValueRec {
  uint64_t bits;
  uint8_t vkind;
  uint8_t padding[7];
};

/// What a node class says, decoded once per chunk.
struct ClassFacts {
  NodeKind kind = NodeKind::kArgument;
  VKind vkind = VKind::kNone;
  uint8_t flags = 0;  // bit 0: a jump's condition (last operand); bit 1: taken when true
  uint16_t n_operands = 0;
  uint32_t first_operand = 0;  // index into the chunk's operand pool
  uint32_t n_refs = 0;         // reference operands (a closer's call link not counted)
  uint32_t block = 0, pos = 0, aux = 0, line = 0;
  uint16_t col = 0;
  bool is_branch = false;  // its location reads §b:&pos
  /// Index among the references of a jump's condition, -1 when the node is
  /// not a conditional jump or its condition is a literal.
  int32_t condition_ref = -1;
  uint32_t op_index = ~0u;  // into the chunk's strings; ~0u when none
  std::string_view op;      // "" when none

  bool closer() const { return IsCloser(kind); }
  /// Reference slots a node of this class holds: n_refs plus a closer's link.
  uint32_t slots() const { return n_refs + (closer() ? 1 : 0); }
  Location location() const { return Location{block, pos, is_branch, line, col}; }
};

/// The columns of one verified chunk. Owned by its Trace (or ChunkStream);
/// valid while it lives.
struct ChunkColumns {
  uint32_t index = 0;
  NodeId base = 0;  // global id of the chunk's first node
  uint32_t count = 0;
  uint32_t base_depth = 0;
  uint32_t end_depth = 0;
  bool last = false;
  uint64_t total_nodes = 0;  // as the final chunk states it
  const NodeRec* nodes = nullptr;
  const uint32_t* refs = nullptr;  // backward distances
  uint64_t n_refs = 0;
  const uint32_t* operands = nullptr;
  const ValueRec* literals = nullptr;
  uint32_t n_tensors = 0;
  bool has_meta = false;
  std::vector<ClassFacts> classes;
  const fb::Chunk* chunk = nullptr;  // for the out-of-line decoders below

  std::span<const NodeRec> node_span() const { return {nodes, count}; }
  std::span<const uint32_t> ref_span() const { return {refs, n_refs}; }
  /// Operand j of a class: 0 for the next reference, k >= 1 for literal k - 1.
  uint32_t operand_code(const ClassFacts& k, uint32_t j) const {
    return operands[k.first_operand + j];
  }
  /// A literal's value (code from operand_code, >= 1).
  Value literal(uint32_t code) const;
  const ValueRec& literal_rec(uint32_t code) const { return literals[code - 1]; }
  /// A value stored in this chunk.
  Value Decode(uint64_t bits, VKind kind) const;
  /// Whether `bits` of kind kTensor name a tensor of f64 or f32 elements.
  bool FloatTensor(uint64_t bits) const;
  /// The number of items of tuple `bits` (of kind kTuple), without decoding it.
  uint32_t tuple_size(uint64_t bits) const;
  /// The element type and shape of tensor `bits` (< n_tensors).
  DType tensor_dtype(uint64_t bits) const;
  std::vector<int64_t> tensor_shape(uint64_t bits) const;
  /// The elements of tensor `bits` (< n_tensors), in the chunk.
  std::span<const uint8_t> tensor_data(uint64_t bits) const;
  /// The functions whose IR the chunk carries, with their control-flow
  /// facts (from the IR text for a 1.0 chunk; none when it has neither).
  struct Function {
    std::string_view name, ir;
    std::optional<ControlFlow> facts;
  };
  std::vector<Function> Functions() const;
  /// The metadata of node `local`, in the order written.
  std::vector<MetaEntry> Meta(uint32_t local) const;
  /// Trace-level metadata (on the final chunk).
  std::vector<MetaEntry> TraceMeta() const;
  /// The producer named in the chunk, and the format version.
  std::string_view producer_name() const;
  std::string_view producer_version() const;
  uint16_t format_major() const;
  uint16_t format_minor() const;
};

struct ChunkFacts;
/// Decodes the columns of a chunk that internal::VerifyChunk accepted, with
/// the facts it learnt (a format-2 chunk's nodes are in them, which must
/// then outlive `out`).
void BuildColumns(const fb::Chunk* chunk, const ChunkInfo& info, const ChunkFacts& facts,
                  ChunkColumns* out);

/// One node of a verified chunk: a pointer and two numbers, cheap to copy.
class RawNode {
 public:
  RawNode() = default;
  RawNode(const ChunkColumns* c, uint32_t local)
      : c_(c), rec_(&c->nodes[local]), cls_(&c->classes[rec_->cls]), id_(c->base + local) {}

  NodeId id() const { return id_; }
  const ChunkColumns& chunk() const { return *c_; }
  uint32_t chunk_index() const { return c_->index; }
  uint32_t local() const { return static_cast<uint32_t>(id_ - c_->base); }
  /// The class index within the chunk (for per-class side tables).
  uint32_t class_index() const { return rec_->cls; }
  const ClassFacts& cls() const { return *cls_; }

  NodeKind kind() const { return cls_->kind; }
  VKind vkind() const { return cls_->vkind; }
  uint64_t bits() const { return rec_->value; }
  std::string_view op() const { return cls_->op; }
  uint32_t block() const { return cls_->block; }
  uint32_t pos() const { return cls_->pos; }
  uint32_t aux() const { return cls_->aux; }
  uint8_t flags() const { return cls_->flags; }
  bool has_condition() const { return (cls_->flags & 1) != 0; }
  Location location() const { return cls_->location(); }
  uint32_t num_operands() const { return cls_->n_operands; }
  uint32_t operand_code(uint32_t j) const { return c_->operand_code(*cls_, j); }
  /// Reference operands (a closer's call link is not one).
  uint32_t num_refs() const { return cls_->n_refs; }
  /// Target of reference operand k (< num_refs()).
  NodeId ref(uint32_t k) const { return id_ - c_->refs[rec_->first_ref + k]; }
  /// The call marker a Return/Error closes.
  NodeId closes() const { return id_ - c_->refs[rec_->first_ref + cls_->n_refs]; }
  int condition_ref() const { return cls_->condition_ref; }
  Value value() const { return c_->Decode(rec_->value, cls_->vkind); }
  std::vector<MetaEntry> meta() const {
    return c_->has_meta ? c_->Meta(local()) : std::vector<MetaEntry>{};
  }

 private:
  const ChunkColumns* c_ = nullptr;
  const NodeRec* rec_ = nullptr;
  const ClassFacts* cls_ = nullptr;
  NodeId id_ = 0;
};

/// Random access to the nodes of a Trace. A few chunk windows are cached;
/// a node of one of them costs a compare and a few loads.
class ColumnReader {
 public:
  explicit ColumnReader(const Trace& t) : t_(t) {}

  const Trace& trace() const { return t_; }

  /// Reads node `id` when its chunk is one of the cached windows (a
  /// compare and a few loads); false otherwise, and for a window whose
  /// columns were given back since (Trace::ReleaseColumns).
  bool Cached(NodeId id, RawNode* n) {
    const ChunkColumns* w = win_[mru_];
    if (w == nullptr || id - w->base >= w->count || w->nodes == nullptr) {
      w = nullptr;
      for (uint32_t k = 0; k < kWindows; ++k) {
        const ChunkColumns* c = win_[k];
        if (c != nullptr && id - c->base < c->count && c->nodes != nullptr) {
          w = c;
          mru_ = k;
          break;
        }
      }
      if (w == nullptr) return false;
    }
    *n = RawNode(w, static_cast<uint32_t>(id - w->base));
    return true;
  }
  /// Reads node `id`, entering (and on first use verifying) its chunk.
  Status Read(NodeId id, RawNode* n) {
    if (Cached(id, n)) return Status::Ok();
    return ReadEntering(id, n);
  }
  /// Read, for a node whose chunk is not cached.
  Status ReadEntering(NodeId id, RawNode* n);
  Result<RawNode> Get(NodeId id) {
    RawNode n;
    IRT_RETURN_IF_ERROR(Read(id, &n));
    return n;
  }
  /// The columns of chunk `ci`, verifying it on first use.
  Result<const ChunkColumns*> Chunk(uint32_t ci) const;

  /// The marker a closer's link lands on, checked to be a call marker.
  Result<NodeId> MarkerOf(const RawNode& closer);

  /// "name: chunk C, node N: what".
  Status Bad(NodeId id, const std::string& what) const;

 private:
  static constexpr uint32_t kWindows = 4;
  const Trace& t_;
  const ChunkColumns* win_[kWindows] = {};
  uint32_t mru_ = 0, next_ = 0;
};

/// The columns of chunk `ci` of a trace (verified on first use). Errors are
/// those of Trace::VerifyChunk.
Result<const ChunkColumns*> ColumnsOf(const Trace& t, uint32_t ci);

/// "chunk C, node N: message".
std::string At(uint64_t chunk, NodeId node, const std::string& message);

}  // namespace irt::internal

#endif  // IRT_SRC_COLUMN_READER_H_
