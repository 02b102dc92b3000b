// The checked column reader: decodes a verified chunk's classes once and
// answers everything else from the raw columns (column_reader.h).
#include "io/column_reader.h"

#include <cstddef>

#include "io/chunk.h"
#include "io/control_flow.h"
#include "irtrace_generated.h"

namespace irt::internal {

// The analyses read the node and literal columns through NodeRec and
// ValueRec; they must be the generated structs' exact layout.
static_assert(FLATBUFFERS_LITTLEENDIAN, "the column reader reads little-endian structs in place");
static_assert(sizeof(NodeRec) == sizeof(fb::Node) && alignof(NodeRec) == alignof(fb::Node));
static_assert(sizeof(ValueRec) == sizeof(fb::Value) && alignof(ValueRec) == alignof(fb::Value));
static_assert(offsetof(NodeRec, cls) == 8 && offsetof(NodeRec, first_ref) == 12);
static_assert(offsetof(ValueRec, vkind) == 8);

void BuildColumns(const fb::Chunk* c, const ChunkInfo& info, const ChunkFacts& facts,
                  ChunkColumns* out) {
  const NodeColumn col = NodesOf(c, facts);
  out->index = static_cast<uint32_t>(info.index);
  out->base = info.base;
  out->count = col.count;
  out->base_depth = info.base_depth;
  out->end_depth = facts.end_depth;
  out->last = info.last;
  out->total_nodes = c->total_nodes();
  out->chunk = c;
  out->nodes = col.nodes;
  out->refs = col.refs;
  out->n_refs = col.n_refs;
  out->operands = c->operands() ? c->operands()->data() : nullptr;
  out->literals =
      c->literals() ? reinterpret_cast<const ValueRec*>(c->literals()->Data()) : nullptr;
  out->n_tensors = c->tensors() ? c->tensors()->size() : 0;
  out->has_meta = c->meta() != nullptr && c->meta()->size() > 0;
  uint32_t n = c->classes() ? c->classes()->size() : 0;
  out->classes.assign(n, ClassFacts{});
  for (uint32_t i = 0; i < n; ++i) {
    const fb::NodeClass* fc = c->classes()->Get(i);
    ClassFacts& k = out->classes[i];
    k.kind = static_cast<NodeKind>(fc->kind());
    k.vkind = static_cast<VKind>(fc->vkind());
    k.flags = fc->flags();
    k.n_operands = fc->n_operands();
    k.first_operand = fc->first_operand();
    k.block = fc->block();
    k.pos = fc->pos();
    k.aux = fc->aux();
    k.line = fc->line();
    k.col = fc->col();
    // An Error node's aux is 1 when it failed at a branch (schema/README.md §3).
    k.is_branch = k.kind == NodeKind::kJump || k.kind == NodeKind::kReturn ||
                  (k.kind == NodeKind::kError && k.aux == 1);
    k.op_index = fc->op();
    if (k.op_index != ~0u) k.op = c->strings()->Get(k.op_index)->string_view();
    uint32_t refs = 0;
    for (uint32_t j = 0; j < k.n_operands; ++j) {
      if (out->operands[k.first_operand + j] == 0) ++refs;
    }
    k.n_refs = refs;
    if (k.kind == NodeKind::kJump && (k.flags & 1) != 0 && k.n_operands > 0 &&
        out->operands[k.first_operand + k.n_operands - 1u] == 0) {
      k.condition_ref = static_cast<int32_t>(refs) - 1;
    }
  }
}

Value ChunkColumns::literal(uint32_t code) const {
  return DecodeValue(chunk, *chunk->literals()->Get(code - 1));
}

Value ChunkColumns::Decode(uint64_t bits, VKind kind) const {
  return DecodeValue(chunk, bits, static_cast<fb::VKind>(kind));
}

bool ChunkColumns::FloatTensor(uint64_t bits) const {
  if (bits >= n_tensors) return false;
  fb::DType t = chunk->tensors()->Get(static_cast<uint32_t>(bits))->dtype();
  return t == fb::DType::F64 || t == fb::DType::F32;
}

uint32_t ChunkColumns::tuple_size(uint64_t bits) const {
  const fb::Tuple* t = chunk->tuples()->Get(static_cast<uint32_t>(bits));
  return t->items() ? t->items()->size() : 0;
}

DType ChunkColumns::tensor_dtype(uint64_t bits) const {
  return static_cast<DType>(chunk->tensors()->Get(static_cast<uint32_t>(bits))->dtype());
}

std::vector<int64_t> ChunkColumns::tensor_shape(uint64_t bits) const {
  const fb::Tensor* t = chunk->tensors()->Get(static_cast<uint32_t>(bits));
  std::vector<int64_t> shape;
  if (t->shape()) shape.assign(t->shape()->begin(), t->shape()->end());
  return shape;
}

std::span<const uint8_t> ChunkColumns::tensor_data(uint64_t bits) const {
  const fb::Tensor* t = chunk->tensors()->Get(static_cast<uint32_t>(bits));
  if (!t->data()) return {};
  return {t->data()->data(), t->data()->size()};
}

std::vector<ChunkColumns::Function> ChunkColumns::Functions() const {
  std::vector<Function> out;
  if (!chunk->functions()) return out;
  for (const fb::FunctionIR* f : *chunk->functions()) {
    out.push_back({chunk->strings()->Get(f->name())->string_view(),
                   f->ir() ? f->ir()->string_view() : std::string_view(), FactsOfEntry(chunk, f)});
  }
  return out;
}

std::vector<MetaEntry> ChunkColumns::Meta(uint32_t local) const {
  std::vector<MetaEntry> out;
  const auto* meta = chunk->meta();
  if (!meta || meta->size() == 0) return out;
  // Sorted by node: binary search for the first entry of this node.
  uint32_t lo = 0, hi = meta->size();
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (meta->Get(mid)->node() < local) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (uint32_t i = lo; i < meta->size() && meta->Get(i)->node() == local; ++i) {
    const fb::Meta* m = meta->Get(i);
    out.push_back({chunk->strings()->Get(m->key())->string_view(), DecodeValue(chunk, m->value())});
  }
  return out;
}

std::vector<MetaEntry> ChunkColumns::TraceMeta() const {
  std::vector<MetaEntry> out;
  if (!chunk->trace_meta()) return out;
  for (const fb::Meta* m : *chunk->trace_meta()) {
    out.push_back({chunk->strings()->Get(m->key())->string_view(), DecodeValue(chunk, m->value())});
  }
  return out;
}

std::string_view ChunkColumns::producer_name() const {
  const fb::Producer* p = chunk->producer();
  return p && p->name() ? p->name()->string_view() : "";
}

std::string_view ChunkColumns::producer_version() const {
  const fb::Producer* p = chunk->producer();
  return p && p->version() ? p->version()->string_view() : "";
}

uint16_t ChunkColumns::format_major() const { return chunk->format_major(); }
uint16_t ChunkColumns::format_minor() const { return chunk->format_minor(); }

Result<const ChunkColumns*> ColumnReader::Chunk(uint32_t ci) const { return ColumnsOf(t_, ci); }

Status ColumnReader::ReadEntering(NodeId id, RawNode* n) {
  if (id >= t_.size()) {
    return NotFound(t_.name() + ": node " + std::to_string(id) + " out of range (trace has " +
                    std::to_string(t_.size()) + " nodes)");
  }
  IRT_ASSIGN_OR_RETURN(const ChunkColumns* c, ColumnsOf(t_, t_.chunk_of(id)));
  next_ = (next_ + 1) % kWindows;
  win_[next_] = c;
  mru_ = next_;
  *n = RawNode(c, static_cast<uint32_t>(id - c->base));
  return Status::Ok();
}

Result<NodeId> ColumnReader::MarkerOf(const RawNode& closer) {
  NodeId m = closer.closes();
  RawNode mv;
  IRT_RETURN_IF_ERROR(Read(m, &mv));
  if (mv.kind() != NodeKind::kCall) {
    return Bad(closer.id(), "closes node " + std::to_string(m) + ", which is not a call marker");
  }
  return m;
}

Status ColumnReader::Bad(NodeId id, const std::string& what) const {
  return DataError(t_.name() + ": " + At(t_.chunk_of(id), id, what));
}

Result<const ChunkColumns*> ColumnsOf(const Trace& t, uint32_t ci) { return t.columns(ci); }

}  // namespace irt::internal
