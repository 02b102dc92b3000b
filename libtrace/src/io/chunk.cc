// The table half of the checker: a chunk's framing and header, read from
// its first bytes, and VerifyChunk over its tables (a format-2 chunk's
// packed column decoded on the way); its nodes are checked in
// chunk_nodes.cc.
#include "io/chunk.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>

#include "io/control_flow.h"
#include "io/packed.h"
#include "irt/value.h"

namespace irt::internal {

namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return flatbuffers::EndianScalar(v);
}

// Bounds-checked access to a table's scalar and offset fields of a buffer of
// `len` bytes of which only the first `avail` may have arrived. A method that
// returns false either found an offset out of bounds (need() == 0) or needs
// bytes that have not arrived yet (need() is how many).
class RawTable {
 public:
  // The table at `table` and its vtable must lie within the first `limit`
  // bytes (at most len).
  bool Init(const uint8_t* buf, size_t len, size_t avail, size_t table, size_t limit) {
    buf_ = buf;
    len_ = len;
    avail_ = avail;
    if (table + 4 > limit || !Arrived(table, 4)) return false;
    int64_t vt = static_cast<int64_t>(table) - Load<int32_t>(buf + table);
    if (vt < 0 || static_cast<size_t>(vt) + 4 > limit || !Arrived(static_cast<size_t>(vt), 4)) {
      return false;
    }
    vt_ = static_cast<size_t>(vt);
    vt_size_ = Load<uint16_t>(buf + vt_);
    table_size_ = Load<uint16_t>(buf + vt_ + 2);
    if (vt_size_ < 4 || vt_ + vt_size_ > limit || table + table_size_ > limit) return false;
    if (!Arrived(vt_, vt_size_) || !Arrived(table, table_size_)) return false;
    table_ = table;
    return true;
  }
  // Offset of field `id` within the table, 0 if absent; false if out of bounds.
  bool Field(int id, size_t size, size_t* at) const {
    size_t slot = 4 + 2 * static_cast<size_t>(id);
    *at = 0;
    if (slot + 2 > vt_size_) return true;
    uint16_t off = Load<uint16_t>(buf_ + vt_ + slot);
    if (off == 0) return true;
    if (off + size > table_size_) return false;
    *at = table_ + off;
    return true;
  }
  template <typename T>
  bool Scalar(int id, T* out) const {
    size_t at;
    if (!Field(id, sizeof(T), &at)) return false;
    if (at != 0) *out = Load<T>(buf_ + at);
    return true;
  }
  // Number of elements of a vector field (of elements of `elem` bytes).
  bool VectorLength(int id, size_t elem, uint64_t* n) {
    size_t at;
    *n = 0;
    if (!Field(id, 4, &at)) return false;
    if (at == 0) return true;
    uint64_t vec = at + static_cast<uint64_t>(Load<uint32_t>(buf_ + at));
    if (vec + 4 > len_ || !Arrived(vec, 4)) return false;
    uint64_t count = Load<uint32_t>(buf_ + vec);
    if (vec + 4 + count * elem > len_) return false;
    *n = count;
    return true;
  }
  size_t need() const { return need_; }

 private:
  // Whether bytes [at, at + n) (within len) have arrived; records the need.
  bool Arrived(uint64_t at, uint64_t n) {
    if (at + n <= avail_) return true;
    need_ = static_cast<size_t>(at + n);
    return false;
  }
  const uint8_t* buf_ = nullptr;
  size_t len_ = 0, avail_ = 0, vt_ = 0, table_ = 0, need_ = 0;
  uint16_t vt_size_ = 0, table_size_ = 0;
};

constexpr int kMaxVKind = static_cast<int>(fb::VKind::MAX);
constexpr int kMaxKind = static_cast<int>(fb::Kind::MAX);

// Appended to "unknown ..." when the chunk's minor version is newer than the
// reader's: a newer minor may append enum values (schema/README.md §2).
std::string NewerMinor(const fb::Chunk* c) {
  const uint16_t known = c->format_major() == 1 ? kFormat1Minor : kFormatMinor;
  if (c->format_minor() <= known) return "";
  return " (the file is format " + std::to_string(c->format_major()) + "." +
         std::to_string(c->format_minor()) + ", newer than this reader's " +
         std::to_string(c->format_major()) + "." + std::to_string(known) +
         "; a newer irtrace is needed)";
}

// The control-flow facts of a FunctionIR entry (format 1.1), one pass over
// its branches.
Status CheckFunctionFacts(const fb::FunctionIR* f) {
  uint64_t n = f->branches() ? f->branches()->size() : 0;
  std::string bad = BranchRules::CheckCounts(f->blocks(), n);
  if (!bad.empty()) return DataError(bad);
  BranchRules rules(f->blocks());
  for (uint64_t i = 0; i < n; ++i) {
    const fb::Branch* b = f->branches()->Get(static_cast<flatbuffers::uoffset_t>(i));
    bad = CheckBranchFlags(*b);
    if (!bad.empty()) return DataError("branch " + std::to_string(i) + ": " + bad);
    bad = rules.Next(i, DecodeBranch(*b));
    if (!bad.empty()) return DataError(bad);
  }
  return Status::Ok();
}

}  // namespace

std::string At(uint64_t chunk, NodeId node, const std::string& message) {
  return "chunk " + std::to_string(chunk) + ", node " + std::to_string(node) + ": " + message;
}

size_t ElementSize(fb::DType t) {
  switch (t) {
    case fb::DType::F64:
    case fb::DType::I64:
      return 8;
    case fb::DType::F32:
    case fb::DType::I32:
      return 4;
    case fb::DType::Bool:
      return 1;
  }
  return 0;
}

Status ReadChunkHeader(const uint8_t* buf, size_t len, ChunkHeader* out) {
  size_t need = 0;
  return ReadChunkHeader(buf, len, len, out, &need);
}

Status ReadChunkHeader(const uint8_t* buf, size_t len, size_t avail, ChunkHeader* out,
                       size_t* need) {
  *need = 0;
  if (len < 12) return DataError("chunk of " + std::to_string(len) + " bytes is too small");
  if (avail < 8) {
    *need = 8;
    return Status::Ok();
  }
  if (!flatbuffers::BufferHasIdentifier(buf, kFileIdentifier, false)) {
    return DataError("not an irtrace chunk (file identifier is not \"IRTC\")");
  }
  RawTable t;
  // The root table and its vtable lie within the chunk's first
  // kMaxRootBytes (schema/README.md §2), so that a chunk is judged by its
  // first bytes, whatever size it claims.
  if (!t.Init(buf, len, avail, Load<uint32_t>(buf), std::min<size_t>(len, kMaxRootBytes))) {
    *need = t.need();
    if (*need != 0) return Status::Ok();
    return DataError("chunk root table out of bounds");
  }
  ChunkHeader h;
  bool ok = t.Scalar(0, &h.format_major) && t.Scalar(1, &h.format_minor) && t.Scalar(3, &h.index) &&
            t.Scalar(4, &h.base) && t.Scalar(5, &h.base_depth);
  uint8_t last = 0;
  ok = ok && t.Scalar(16, &last);
  if (!ok) return DataError("chunk header fields out of bounds");
  h.last = last != 0;
  h.fields_read = true;
  *out = h;  // all but num_nodes, which may lie further on
  uint32_t packed_count = 0;
  bool counted = h.format_major >= 2 ? t.Scalar(19, &packed_count)
                                     : t.VectorLength(6, sizeof(fb::Node), &h.num_nodes);
  if (h.format_major >= 2) h.num_nodes = packed_count;
  if (!counted) {
    *need = t.need();
    if (*need != 0) return Status::Ok();
    return DataError("chunk header fields out of bounds");
  }
  *out = h;
  return Status::Ok();
}

Status CheckValue(const fb::Chunk* c, const fb::Value& v, size_t tuple_limit) {
  auto kind = static_cast<int>(v.vkind());
  if (kind > kMaxVKind)
    return DataError("unknown value kind " + std::to_string(kind) + NewerMinor(c));
  uint64_t bits = v.bits();
  auto size = [](auto* vec) -> uint64_t { return vec ? vec->size() : 0; };
  switch (v.vkind()) {
    case fb::VKind::Bool:
      if (bits > 1) return DataError("boolean value " + std::to_string(bits) + " is not 0 or 1");
      break;
    case fb::VKind::F32:
      if (bits >> 32 != 0) return DataError("Float32 value with its high 32 bits set");
      break;
    case fb::VKind::String:
    case fb::VKind::Function:
      if (bits >= size(c->strings())) {
        return DataError("string " + std::to_string(bits) + " out of range (chunk has " +
                         std::to_string(size(c->strings())) + ")");
      }
      break;
    case fb::VKind::Tensor:
      if (bits >= size(c->tensors())) {
        return DataError("tensor " + std::to_string(bits) + " out of range (chunk has " +
                         std::to_string(size(c->tensors())) + ")");
      }
      break;
    case fb::VKind::Tuple:
      if (bits >= tuple_limit) {
        return DataError("tuple " + std::to_string(bits) + " out of range (limit " +
                         std::to_string(tuple_limit) + ")");
      }
      break;
    default:
      break;
  }
  return Status::Ok();
}

Status UnpackChunk(const fb::Chunk* c, const ChunkFacts& facts, NodeRec* nodes, uint32_t* refs,
                   uint64_t* n_refs, uint32_t* failed) {
  PackTables t;
  if (c->classes()) {
    t.classes = {reinterpret_cast<const fb::NodeClass*>(c->classes()->Data()),
                 c->classes()->size()};
  }
  t.slots = facts.class_refs;
  if (c->operands()) t.operands = {c->operands()->data(), c->operands()->size()};
  if (c->literals()) {
    t.literals = {reinterpret_cast<const fb::Value*>(c->literals()->Data()), c->literals()->size()};
  }
  std::span<const uint8_t> packed;
  if (c->packed()) packed = {c->packed()->data(), c->packed()->size()};
  return UnpackNodes(t, packed, c->node_count(), nodes, refs, n_refs, failed);
}

namespace {

// Room for a chunk's `count` nodes and, after them, the distances its
// packed column may decode to, in one buffer.
struct ColumnRoom {
  NodeRec* nodes;
  uint32_t* refs;
};
ColumnRoom ColumnsIn(GrowBuffer<NodeRec>* buffer, const fb::Chunk* c) {
  const uint32_t count = c->node_count();
  const uint64_t refs = PackedRefRoom(c->packed() ? c->packed()->size() : 0);
  // Both bounded (kMaxPackedNodes, kMaxPackedRefs): 128 MiB at most.
  NodeRec* nodes =
      buffer->Reserve(count + (refs * sizeof(uint32_t) + sizeof(NodeRec) - 1) / sizeof(NodeRec));
  return {nodes, reinterpret_cast<uint32_t*>(nodes + count)};
}

}  // namespace

Status RedecodeChunk(const fb::Chunk* c, ChunkFacts* facts) {
  uint32_t failed = ~0u;
  uint64_t n_refs = 0;
  const uint32_t count = c->node_count();
  const ColumnRoom room = ColumnsIn(&facts->columns, c);
  NodeRec* nodes = room.nodes;
  Status s = UnpackChunk(c, *facts, nodes, room.refs, &n_refs, &failed);
  if (s.ok() && (count != facts->decoded_count || n_refs != facts->decoded_n_refs)) {
    s = DataError("changed");
  }
  if (!s.ok()) return DataError("the chunk changed after it was checked (the file was modified)");
  facts->decoded_nodes = nodes;
  facts->decoded_refs = room.refs;
  return Status::Ok();
}

Status VerifyChunk(const uint8_t* prefixed, size_t total, ChunkFacts* facts) {
  facts->failed_node = kNoNode;
  flatbuffers::Verifier::Options vo;
  vo.max_depth = 16;
  vo.max_tables = total / 4 + 16;
  vo.check_alignment = true;
  flatbuffers::Verifier verifier(prefixed, total, vo);
  if (!fb::VerifySizePrefixedChunkBuffer(verifier)) {
    return DataError("chunk fails FlatBuffers verification");
  }
  const fb::Chunk* c = fb::GetSizePrefixedChunk(prefixed);
  // The verifier checks the 4-byte alignment of vector headers only; vectors
  // of 8-byte structs and scalars must be 8-aligned to be read at all.
  auto aligned = [](const auto* vec) {
    return vec == nullptr || vec->size() == 0 || reinterpret_cast<uintptr_t>(vec->Data()) % 8 == 0;
  };
  if (!aligned(c->nodes()) || !aligned(c->literals()) || !aligned(c->meta()) ||
      !aligned(c->trace_meta())) {
    return DataError("a vector of 8-byte structs is misaligned");
  }
  for (uint64_t i = 0; c->tuples() && i < c->tuples()->size(); ++i) {
    if (!aligned(c->tuples()->Get(i)->items())) {
      return DataError("tuple " + std::to_string(i) + ": items are misaligned");
    }
  }
  for (uint64_t i = 0; c->tensors() && i < c->tensors()->size(); ++i) {
    if (!aligned(c->tensors()->Get(i)->shape()) || !aligned(c->tensors()->Get(i)->data())) {
      return DataError("tensor " + std::to_string(i) + ": shape or data misaligned");
    }
  }
  if (c->producer() == nullptr || c->producer()->name() == nullptr) {
    return DataError("no producer (every chunk names the program that wrote it)");
  }
  auto size = [](auto* vec) -> uint64_t { return vec ? vec->size() : 0; };
  uint64_t n_strings = size(c->strings());
  uint64_t n_operands = size(c->operands());
  uint64_t n_literals = size(c->literals());
  uint64_t n_tuples = size(c->tuples());
  // Literals.
  for (uint64_t i = 0; i < n_literals; ++i) {
    Status s = CheckValue(c, *c->literals()->Get(i), n_tuples);
    if (!s.ok()) return s.Prefixed("literal " + std::to_string(i));
  }
  // Operand pool.
  for (uint64_t i = 0; i < n_operands; ++i) {
    uint32_t o = c->operands()->Get(i);
    if (o > n_literals) {
      return DataError("operand " + std::to_string(i) + " names literal " + std::to_string(o) +
                       " of " + std::to_string(n_literals));
    }
  }
  // Classes.
  facts->class_refs.clear();
  for (uint64_t i = 0; c->classes() && i < c->classes()->size(); ++i) {
    const fb::NodeClass* k = c->classes()->Get(i);
    std::string where = "class " + std::to_string(i);
    if (static_cast<int>(k->kind()) > kMaxKind) {
      return DataError(where + ": unknown node kind " +
                       std::to_string(static_cast<int>(k->kind())) + NewerMinor(c));
    }
    if (static_cast<int>(k->vkind()) > kMaxVKind) {
      return DataError(where + ": unknown value kind " +
                       std::to_string(static_cast<int>(k->vkind())) + NewerMinor(c));
    }
    if (k->kind() == fb::Kind::Return && k->vkind() == fb::VKind::None) {
      return DataError(where + ": a return without a value");
    }
    if (k->op() != ~0u && k->op() >= n_strings) {
      return DataError(where + ": name " + std::to_string(k->op()) + " out of range");
    }
    if (static_cast<uint64_t>(k->first_operand()) + k->n_operands() > n_operands) {
      return DataError(where + ": operands out of range");
    }
    if (k->flags() > 3) return DataError(where + ": unknown flags");
    if ((k->flags() & 1) && (k->kind() != fb::Kind::Jump || k->n_operands() == 0)) {
      return DataError(where + ": a condition on a node that is not a jump with operands");
    }
    if (k->flags() == 2) return DataError(where + ": flags bit 1 without a condition (bit 0)");
    switch (k->kind()) {
      case fb::Kind::Call:
        if (k->vkind() != fb::VKind::None)
          return DataError(where + ": a call marker carries a value");
        break;
      case fb::Kind::Jump:
        if (k->vkind() != fb::VKind::None) return DataError(where + ": a jump carries a value");
        if (k->aux() == 0) return DataError(where + ": a jump without a target block");
        break;
      case fb::Kind::Return:
        if (k->n_operands() != 1) {
          return DataError(where + ": a return has " + std::to_string(k->n_operands()) +
                           " operands instead of 1");
        }
        break;
      case fb::Kind::Error:
        if (k->vkind() != fb::VKind::None) return DataError(where + ": an error carries a value");
        break;
      case fb::Kind::Argument:
        if (k->aux() != 0 &&
            (k->n_operands() != 1 || c->operands()->Get(k->first_operand()) != 0)) {
          return DataError(where + ": a block argument must reference the jump that set it");
        }
        break;
      default:
        break;
    }
    const uint32_t slots = ClassSlots(*k, c->operands() ? c->operands()->data() : nullptr);
    if (slots > 0xFFFF) return DataError(where + ": more than 65535 references");
    facts->class_refs.push_back(static_cast<uint16_t>(slots));
  }
  // The node column: in place (format 1) or packed (format 2).
  facts->packed = c->format_major() >= 2;
  facts->decoded_nodes = nullptr;
  facts->decoded_refs = nullptr;
  facts->decoded_count = 0;
  facts->decoded_n_refs = 0;
  if (facts->packed) {
    if (c->nodes() != nullptr || c->refs() != nullptr) {
      return DataError("a format-2 chunk with format-1 node or reference columns");
    }
    const uint32_t count = c->node_count();
    // Bounded before anything is allocated (UnpackNodes checks it again).
    const size_t packed_size = c->packed() ? c->packed()->size() : 0;
    if (count > packed_size || count > kMaxPackedNodes) {
      return DataError("packed column: " + std::to_string(count) + " nodes in " +
                       std::to_string(packed_size) + " bytes (at most one node per byte, " +
                       std::to_string(kMaxPackedNodes) + " per chunk)");
    }
    NodeRec* nodes;
    uint32_t* refs;
    if (facts->arena != nullptr) {
      // The distances go to a scratch buffer first: the arena keeps only
      // as many as the column holds.
      thread_local GrowBuffer<uint32_t> scratch;
      nodes = static_cast<NodeRec*>(facts->arena->Allocate(sizeof(NodeRec) * count));
      refs = scratch.Reserve(PackedRefRoom(packed_size));
    } else {
      const ColumnRoom room = ColumnsIn(&facts->columns, c);
      nodes = room.nodes;
      refs = room.refs;
    }
    uint32_t failed = ~0u;
    uint64_t n_refs = 0;
    Status s = UnpackChunk(c, *facts, nodes, refs, &n_refs, &failed);
    if (!s.ok()) {
      if (failed != ~0u) facts->failed_node = c->base() + failed;
      return s;
    }
    const uint32_t* ref_col = refs;
    if (facts->arena != nullptr) {
      auto* kept = static_cast<uint32_t*>(facts->arena->Allocate(sizeof(uint32_t) * n_refs));
      if (n_refs != 0) memcpy(kept, refs, sizeof(uint32_t) * n_refs);
      ref_col = kept;
    }
    facts->decoded_nodes = nodes;
    facts->decoded_count = count;
    facts->decoded_refs = ref_col;
    facts->decoded_n_refs = n_refs;
  } else if (c->packed() != nullptr || c->node_count() != 0) {
    return DataError("a format-1 chunk with a packed node column (format 2)");
  }
  // Tensors.
  std::vector<uint64_t> tensor_numel(size(c->tensors()));
  for (uint64_t i = 0; i < size(c->tensors()); ++i) {
    const fb::Tensor* t = c->tensors()->Get(i);
    std::string where = "tensor " + std::to_string(i);
    size_t es = ElementSize(t->dtype());
    if (es == 0) return DataError(where + ": unknown dtype");
    uint64_t numel = 1;
    if (t->shape()) {
      if (t->shape()->size() > kMaxTensorDims) {
        return DataError(where + ": more than " + std::to_string(kMaxTensorDims) + " dimensions");
      }
      for (int64_t d : *t->shape()) {
        if (d < 0) return DataError(where + ": negative dimension");
        if (d != 0 && numel > (1ull << 62) / static_cast<uint64_t>(d)) {
          return DataError(where + ": shape too large");
        }
        numel *= static_cast<uint64_t>(d);
      }
    }
    uint64_t have = t->data() ? t->data()->size() : 0;
    if (numel > (1ull << 62) / es || numel * es != have) {
      return DataError(where + ": " + std::to_string(have) + " data bytes for " +
                       std::to_string(numel) + " elements");
    }
    if (numel > static_cast<uint64_t>(kMaxTensorElements)) {
      return DataError(where + ": " + std::to_string(numel) + " elements, more than " +
                       std::to_string(kMaxTensorElements));
    }
    if (t->dtype() == fb::DType::Bool) {
      for (uint64_t j = 0; j < have; ++j) {
        if (t->data()->Get(static_cast<uint32_t>(j)) > 1) {
          return DataError(where + ": Bool element " + std::to_string(j) + " is not 0 or 1");
        }
      }
    }
    tensor_numel[i] = numel;
  }
  // Tuples: items refer to lower tuples only; bounded nesting and decoded
  // size. Items may share lower tuples, so a small table can describe a
  // value of exponential size: the decoded size of each tuple is computed
  // from those of the lower ones, one pass over the items.
  std::vector<uint8_t> depth(n_tuples, 1);
  std::vector<uint64_t> decoded(n_tuples, 0);
  for (uint64_t i = 0; i < n_tuples; ++i) {
    const fb::Tuple* t = c->tuples()->Get(i);
    if (!t->items()) continue;
    uint64_t total = 0;
    for (uint32_t j = 0; j < t->items()->size(); ++j) {
      const fb::Value* v = t->items()->Get(j);
      Status s = CheckValue(c, *v, i);
      if (!s.ok()) return s.Prefixed("tuple " + std::to_string(i));
      uint64_t item = 1;
      if (v->vkind() == fb::VKind::Tuple) {
        depth[i] = std::max<uint8_t>(depth[i], depth[v->bits()] + 1);
        if (depth[i] > kMaxTupleDepth) {
          return DataError("tuple " + std::to_string(i) + ": nested deeper than " +
                           std::to_string(kMaxTupleDepth));
        }
        item = std::max<uint64_t>(decoded[v->bits()], 1);
      } else if (v->vkind() == fb::VKind::Tensor) {
        item = std::max<uint64_t>(tensor_numel[v->bits()], 1);
      }
      // Every term is at most kMaxDecodedSize, so the sum cannot overflow.
      total += item;
      if (total > kMaxDecodedSize) {
        return DataError("tuple " + std::to_string(i) + ": decodes to more than " +
                         std::to_string(kMaxDecodedSize) + " values and tensor elements");
      }
    }
    decoded[i] = total;
  }
  // Metadata.
  uint64_t n_nodes = NodesOf(c, *facts).count;
  for (uint64_t i = 0; i < size(c->meta()); ++i) {
    const fb::Meta* m = c->meta()->Get(i);
    std::string where = "metadata " + std::to_string(i);
    if (m->node() >= n_nodes) return DataError(where + ": node out of range");
    if (i > 0 && c->meta()->Get(i - 1)->node() > m->node()) {
      return DataError(where + ": not sorted by node");
    }
    if (m->key() >= n_strings) return DataError(where + ": key out of range");
    Status s = CheckValue(c, m->value(), n_tuples);
    if (!s.ok()) return s.Prefixed(where);
  }
  // A key occurs at most once per node: the keys of each node's run, sorted.
  std::vector<uint32_t> keys;
  for (uint64_t i = 0; i < size(c->meta());) {
    uint32_t node = c->meta()->Get(i)->node();
    keys.clear();
    for (; i < size(c->meta()) && c->meta()->Get(i)->node() == node; ++i) {
      keys.push_back(c->meta()->Get(i)->key());
    }
    std::sort(keys.begin(), keys.end());
    auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) {
      return DataError("metadata of local node " + std::to_string(node) + ": key '" +
                       c->strings()->Get(*dup)->str() + "' occurs twice");
    }
  }
  for (uint64_t i = 0; i < size(c->trace_meta()); ++i) {
    const fb::Meta* m = c->trace_meta()->Get(i);
    if (m->key() >= n_strings)
      return DataError("trace metadata " + std::to_string(i) + ": key out of range");
    Status s = CheckValue(c, m->value(), n_tuples);
    if (!s.ok()) return s.Prefixed("trace metadata " + std::to_string(i));
  }
  for (uint64_t i = 0; i < size(c->functions()); ++i) {
    const fb::FunctionIR* f = c->functions()->Get(i);
    if (f->name() >= n_strings)
      return DataError("function " + std::to_string(i) + ": name out of range");
    Status s = CheckFunctionFacts(f);
    if (!s.ok()) {
      return s.Prefixed("function " + std::to_string(i) + " ('" +
                        DisplayString(c->strings()->Get(f->name())->string_view()) +
                        "'): control flow");
    }
  }
  return CheckNodes(c, facts);
}

std::string DisplayName(const std::string& path) {
  return path == "-" ? "<stdin>" : "'" + path + "'";
}

namespace {

uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

}  // namespace

Status FrameChunk(const uint8_t* p, uint64_t avail, bool ended, uint64_t off, uint64_t number,
                  NodeId base, uint64_t* len_out, ChunkHeader* h, uint64_t* need) {
  *need = 0;
  std::string where = "chunk " + std::to_string(number) + " at byte " + std::to_string(off);
  uint64_t left = avail;
  if (left >= 12 && memcmp(p + 8, kFileIdentifier, 4) != 0) {
    if (number == 0) return DataError("not an irtrace trace (no \"IRTC\" file identifier)");
    return DataError(where + ": bad file identifier (corrupted or not a trace)");
  }
  if (left < 12 && !ended) {
    *need = 12;
    return Status::Ok();
  }
  if (number == 0 && left < 12) return DataError("not an irtrace trace (too short)");
  if (left < 4) {
    return DataError("truncated: " + std::to_string(left) + " stray bytes after chunk " +
                     std::to_string(number == 0 ? 0 : number - 1));
  }
  uint64_t len = LoadU32(p);
  if (len < 12 || len > kMaxChunkBytes || (len + 4) % 8 != 0) {
    if (number == 0 && left < 12) return DataError("not an irtrace trace (too short)");
    return DataError(where + ": size prefix " + std::to_string(len) + " is not a chunk size");
  }
  *len_out = len;
  if (ended && len > left - 4) {
    return DataError(where + " is truncated: it needs " + std::to_string(len) + " bytes, " +
                     std::to_string(left - 4) + " remain");
  }
  size_t header_need = 0;
  Status s = internal::ReadChunkHeader(p + 4, len, std::min(len, left - 4), h, &header_need);
  if (!s.ok()) return s.Prefixed(where);
  if (h->fields_read) {
    if (h->format_major > kFormatMajor) {
      return Unsupported("format version " + std::to_string(h->format_major) + "." +
                         std::to_string(h->format_minor) + " is newer than this reader's " +
                         std::to_string(kFormatMajor) + "." + std::to_string(kFormatMinor) +
                         "; a newer irtrace is needed");
    }
    if (h->format_major == 0) return DataError(where + ": format version 0 is not a release");
    if (h->index != number) {
      return DataError(where + ": numbered " + std::to_string(h->index) + ", expected " +
                       std::to_string(number) + " (chunks lost or reordered)");
    }
    if (h->base != base) {
      return DataError(where + ": starts at node " + std::to_string(h->base) + ", expected " +
                       std::to_string(base));
    }
  }
  if (header_need != 0) {
    *need = 4 + header_need;
  } else if (len > left - 4) {
    *need = 4 + len;
  }
  return Status::Ok();
}

}  // namespace irt::internal
