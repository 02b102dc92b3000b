#include "chunk.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>

namespace irt::internal {

namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return flatbuffers::EndianScalar(v);
}

// Bounds-checked access to a table's scalar and offset fields.
class RawTable {
 public:
  bool Init(const uint8_t* buf, size_t len, size_t table) {
    buf_ = buf;
    len_ = len;
    if (table + 4 > len) return false;
    int64_t vt = static_cast<int64_t>(table) - Load<int32_t>(buf + table);
    if (vt < 0 || static_cast<size_t>(vt) + 4 > len) return false;
    vt_ = static_cast<size_t>(vt);
    vt_size_ = Load<uint16_t>(buf + vt_);
    table_size_ = Load<uint16_t>(buf + vt_ + 2);
    if (vt_size_ < 4 || vt_ + vt_size_ > len || table + table_size_ > len) return false;
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
  bool VectorLength(int id, size_t elem, uint64_t* n) const {
    size_t at;
    *n = 0;
    if (!Field(id, 4, &at)) return false;
    if (at == 0) return true;
    uint64_t vec = at + static_cast<uint64_t>(Load<uint32_t>(buf_ + at));
    if (vec + 4 > len_) return false;
    uint64_t count = Load<uint32_t>(buf_ + vec);
    if (vec + 4 + count * elem > len_) return false;
    *n = count;
    return true;
  }

 private:
  const uint8_t* buf_ = nullptr;
  size_t len_ = 0, vt_ = 0, table_ = 0;
  uint16_t vt_size_ = 0, table_size_ = 0;
};

constexpr int kMaxVKind = static_cast<int>(fb::VKind::MAX);
constexpr int kMaxKind = static_cast<int>(fb::Kind::MAX);

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
  if (len < 12) return DataError("chunk of " + std::to_string(len) + " bytes is too small");
  if (!flatbuffers::BufferHasIdentifier(buf, kFileIdentifier, false)) {
    return DataError("not an irtrace chunk (file identifier is not \"IRTC\")");
  }
  RawTable t;
  if (!t.Init(buf, len, Load<uint32_t>(buf))) return DataError("chunk root table out of bounds");
  ChunkHeader h;
  bool ok = t.Scalar(0, &h.format_major) && t.Scalar(1, &h.format_minor) && t.Scalar(3, &h.index) &&
            t.Scalar(4, &h.base) && t.Scalar(5, &h.base_depth) &&
            t.VectorLength(6, sizeof(fb::Node), &h.num_nodes);
  uint8_t last = 0;
  ok = ok && t.Scalar(16, &last);
  if (!ok) return DataError("chunk header fields out of bounds");
  h.last = last != 0;
  *out = h;
  return Status::Ok();
}

Status CheckValue(const fb::Chunk* c, const fb::Value& v, size_t tuple_limit) {
  auto kind = static_cast<int>(v.vkind());
  if (kind > kMaxVKind) return DataError("unknown value kind " + std::to_string(kind));
  uint64_t bits = v.bits();
  auto size = [](auto* vec) -> uint64_t { return vec ? vec->size() : 0; };
  switch (v.vkind()) {
    case fb::VKind::Bool:
      if (bits > 1) return DataError("boolean value " + std::to_string(bits) + " is not 0 or 1");
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

Status VerifyChunk(const uint8_t* prefixed, size_t total, ChunkFacts* facts) {
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
                       std::to_string(static_cast<int>(k->kind())));
    }
    if (static_cast<int>(k->vkind()) > kMaxVKind) {
      return DataError(where + ": unknown value kind " +
                       std::to_string(static_cast<int>(k->vkind())));
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
    uint32_t refs = 0;
    for (uint32_t j = 0; j < k->n_operands(); ++j) {
      if (c->operands()->Get(k->first_operand() + j) == 0) ++refs;
    }
    if (k->kind() == fb::Kind::Return || k->kind() == fb::Kind::Error) ++refs;
    facts->class_refs.push_back(static_cast<uint16_t>(refs));
  }
  // Tensors.
  for (uint64_t i = 0; i < size(c->tensors()); ++i) {
    const fb::Tensor* t = c->tensors()->Get(i);
    std::string where = "tensor " + std::to_string(i);
    size_t es = ElementSize(t->dtype());
    if (es == 0) return DataError(where + ": unknown dtype");
    uint64_t numel = 1;
    if (t->shape()) {
      if (t->shape()->size() > 32) return DataError(where + ": more than 32 dimensions");
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
  }
  // Tuples: items refer to lower tuples only; bounded nesting.
  std::vector<uint8_t> depth(n_tuples, 1);
  for (uint64_t i = 0; i < n_tuples; ++i) {
    const fb::Tuple* t = c->tuples()->Get(i);
    if (!t->items()) continue;
    for (uint32_t j = 0; j < t->items()->size(); ++j) {
      const fb::Value* v = t->items()->Get(j);
      Status s = CheckValue(c, *v, i);
      if (!s.ok()) return s.Prefixed("tuple " + std::to_string(i));
      if (v->vkind() == fb::VKind::Tuple) {
        depth[i] = std::max<uint8_t>(depth[i], depth[v->bits()] + 1);
        if (depth[i] > kMaxTupleDepth) {
          return DataError("tuple " + std::to_string(i) + ": nested deeper than " +
                           std::to_string(kMaxTupleDepth));
        }
      }
    }
  }
  // Metadata.
  uint64_t n_nodes = size(c->nodes());
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
  }
  return Status::Ok();
}

Status CheckNode(const fb::Chunk* c, const ChunkFacts& facts, uint32_t local, NodeId id) {
  const fb::Node* n = c->nodes()->Get(local);
  if (n->cls() >= facts.class_refs.size()) {
    return DataError("class " + std::to_string(n->cls()) + " out of range (chunk has " +
                     std::to_string(facts.class_refs.size()) + ")");
  }
  const fb::NodeClass* k = c->classes()->Get(n->cls());
  uint64_t n_refs = facts.class_refs[n->cls()];
  uint64_t pool = c->refs() ? c->refs()->size() : 0;
  if (static_cast<uint64_t>(n->first_ref()) + n_refs > pool) {
    return DataError("references out of range");
  }
  for (uint64_t j = 0; j < n_refs; ++j) {
    uint32_t d = c->refs()->Get(n->first_ref() + j);
    if (d == 0) return DataError("reference " + std::to_string(j + 1) + " points to itself");
    if (d > id) {
      return DataError("reference " + std::to_string(j + 1) + " points before the first node");
    }
  }
  fb::Value v(n->value(), k->vkind());
  Status s = CheckValue(c, v, c->tuples() ? c->tuples()->size() : 0);
  if (!s.ok()) return s;
  return Status::Ok();
}

Value DecodeValue(const fb::Chunk* c, uint64_t bits, fb::VKind kind) {
  switch (kind) {
    case fb::VKind::None:
    case fb::VKind::Nothing:
    case fb::VKind::Bool:
    case fb::VKind::I64:
    case fb::VKind::F64:
    case fb::VKind::F32:
      return Value::FromBits(static_cast<VKind>(kind), bits);
    case fb::VKind::String:
      return Value::String(c->strings()->Get(bits)->str());
    case fb::VKind::Function:
      return Value::Function(c->strings()->Get(bits)->str());
    case fb::VKind::Tensor: {
      const fb::Tensor* t = c->tensors()->Get(bits);
      Tensor out;
      out.dtype = static_cast<DType>(t->dtype());
      if (t->shape()) out.shape.assign(t->shape()->begin(), t->shape()->end());
      if (t->data()) out.data.assign(t->data()->begin(), t->data()->end());
      return Value::MakeTensor(std::move(out));
    }
    case fb::VKind::Tuple: {
      // Nesting is bounded by kMaxTupleDepth (checked in VerifyChunk).
      const fb::Tuple* t = c->tuples()->Get(bits);
      std::vector<Value> items;
      if (t->items()) {
        for (uint32_t j = 0; j < t->items()->size(); ++j) {
          items.push_back(DecodeValue(c, *t->items()->Get(j)));
        }
      }
      return Value::MakeTuple(std::move(items));
    }
  }
  return Value();
}

Value DecodeValue(const fb::Chunk* c, const fb::Value& v) {
  return DecodeValue(c, v.bits(), v.vkind());
}

}  // namespace irt::internal
