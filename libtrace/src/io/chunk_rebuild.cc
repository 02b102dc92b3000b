// The rebuild of an edited chunk (chunk_rebuild.h): every table copied,
// the edits' values encoded by the writer's ValueEncoder.
#include "io/chunk_rebuild.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include "io/chunk.h"
#include "io/chunk_encoder.h"
#include "io/control_flow.h"
#include "io/packed.h"
#include "irtrace_generated.h"

namespace irt::internal {

namespace {

// Copies a FlatBuffers vector of structs (whose iterators yield pointers).
template <typename T>
std::vector<T> CopyStructs(const flatbuffers::Vector<const T*>* v) {
  std::vector<T> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (const T* p : *v) out.push_back(*p);
  return out;
}

// Copies a verified chunk into a new FlatBuffer with the edits applied.
// Everything is copied index for index, so every index of the old chunk
// stays valid; new strings, tensors, tuples, literals, operands and classes
// are appended after the old ones.
class ChunkBuilder {
 public:
  ChunkBuilder(const fb::Chunk* c, std::span<const NodeRec> nodes, std::span<const uint32_t> refs)
      : c_(c), nodes_(nodes), refs_(refs), fbb_(1 << 16, ChunkBuilderAllocator()), enc_(&fbb_) {}

  Result<Rebuilt> Build(const ChunkEdit& e, uint16_t format_major) {
    const fb::Chunk* c = c_;
    // Strings, tensors, tuples, functions, producer: copied in order.
    if (c->strings()) {
      for (const flatbuffers::String* s : *c->strings()) {
        enc_.AddString(s->string_view());
      }
    }
    if (c->tensors()) {
      for (const fb::Tensor* t : *c->tensors()) {
        Tensor copy;
        copy.dtype = static_cast<DType>(t->dtype());
        if (t->shape()) copy.shape.assign(t->shape()->begin(), t->shape()->end());
        if (t->data()) copy.data.assign(t->data()->begin(), t->data()->end());
        enc_.AddTensor(copy);
      }
    }
    if (c->tuples()) {
      for (const fb::Tuple* t : *c->tuples()) {
        enc_.AddTuple(CopyStructs(t->items()));
      }
    }
    std::vector<flatbuffers::Offset<fb::FunctionIR>> functions;
    if (c->functions()) {
      for (const fb::FunctionIR* f : *c->functions()) {
        auto ir = f->ir() ? fbb_.CreateString(f->ir()->data(), f->ir()->size())
                          : flatbuffers::Offset<flatbuffers::String>();
        // The facts as a reader sees them: stored (format 1.1 and later) or
        // parsed from a 1.0 chunk's IR text, so that a 1.0 chunk converted
        // to a later format keeps them.
        std::optional<ControlFlow> facts = FactsOfEntry(c, f);
        flatbuffers::Offset<flatbuffers::Vector<const fb::Branch*>> branches;
        uint32_t blocks = 0;
        if (facts) {
          blocks = facts->blocks;
          branches = EncodeBranches(fbb_, *facts);
        }
        functions.push_back(fb::CreateFunctionIR(fbb_, f->name(), ir, blocks, branches));
      }
    }
    flatbuffers::Offset<fb::Producer> producer;
    if (c->producer()) {
      const fb::Producer* p = c->producer();
      auto name = p->name() ? fbb_.CreateString(p->name()->data(), p->name()->size())
                            : flatbuffers::Offset<flatbuffers::String>();
      auto version = p->version() ? fbb_.CreateString(p->version()->data(), p->version()->size())
                                  : flatbuffers::Offset<flatbuffers::String>();
      producer = fb::CreateProducer(fbb_, name, version);
    }
    // Columns.
    std::vector<NodeRec> nodes(nodes_.begin(), nodes_.end());
    std::vector<fb::NodeClass> classes = CopyStructs(c->classes());
    std::vector<uint32_t> operands;
    if (c->operands()) operands.assign(c->operands()->begin(), c->operands()->end());
    std::vector<fb::Value> literals = CopyStructs(c->literals());
    std::vector<uint32_t> refs(refs_.begin(), refs_.end());
    std::vector<fb::Meta> meta = CopyStructs(c->meta());

    // The root marker's arguments: a copy of its class with new literals.
    if (!e.root_operands.empty() && !nodes.empty()) {
      fb::NodeClass k = classes[nodes[0].cls];
      uint32_t first = static_cast<uint32_t>(operands.size());
      for (uint32_t j = 0; j < k.n_operands(); ++j) {
        uint32_t o = operands[k.first_operand() + j];
        for (const auto& [idx, v] : e.root_operands) {
          if (idx == j && o != 0) {
            literals.push_back(enc_.Encode(v));
            o = static_cast<uint32_t>(literals.size());
          }
        }
        operands.push_back(o);
      }
      classes.emplace_back(k.op(), k.block(), k.pos(), k.aux(), first, k.line(), k.col(),
                           k.n_operands(), k.kind(), k.vkind(), k.flags());
      nodes[0].cls = static_cast<uint32_t>(classes.size() - 1);
    }
    // New node values; a value of another kind gets a copy of its class.
    std::map<std::pair<uint32_t, uint8_t>, uint32_t> reclassed;
    for (const auto& [local, v] : e.values) {
      if (local >= nodes.size()) return Internal("replay: edit of a node outside its chunk");
      fb::Value enc = enc_.Encode(v);
      uint32_t cls = nodes[local].cls;
      if (classes[cls].vkind() != enc.vkind()) {
        auto key = std::make_pair(cls, static_cast<uint8_t>(enc.vkind()));
        auto it = reclassed.find(key);
        if (it == reclassed.end()) {
          const fb::NodeClass k = classes[cls];
          classes.emplace_back(k.op(), k.block(), k.pos(), k.aux(), k.first_operand(), k.line(),
                               k.col(), k.n_operands(), k.kind(), enc.vkind(), k.flags());
          it = reclassed.emplace(key, static_cast<uint32_t>(classes.size() - 1)).first;
        }
        cls = it->second;
      }
      nodes[local].value = enc.bits();
      nodes[local].cls = cls;
    }
    bool truncated = e.keep != ~0u && e.keep < nodes.size();
    if (truncated) {
      nodes.resize(e.keep);
      meta.erase(std::remove_if(meta.begin(), meta.end(),
                                [&](const fb::Meta& m) { return m.node() >= e.keep; }),
                 meta.end());
    }
    auto key_of = [&](uint32_t k) -> std::string_view {
      return k < c->strings()->size() ? c->strings()->Get(k)->string_view() : std::string_view();
    };
    for (fb::Meta& m : meta) {
      for (const auto& [node, key, v] : e.meta) {
        if (m.node() == node && key_of(m.key()) == key)
          m = fb::Meta(enc_.Encode(v), m.node(), m.key());
      }
    }
    std::vector<fb::Meta> tmeta;
    bool last = c->last() && !truncated && e.keep == ~0u;
    if (last) tmeta = CopyStructs(c->trace_meta());
    for (fb::Meta& m : tmeta) {
      for (const auto& [key, v] : e.trace_meta) {
        if (key_of(m.key()) == key) m = fb::Meta(enc_.Encode(v), m.node(), m.key());
      }
    }

    ChunkParts parts;
    // An edit keeps the chunk's version; a conversion writes the newest
    // minor version of the major asked for.
    parts.format_major = format_major != 0 ? format_major : c->format_major();
    parts.format_minor = format_major == 0         ? c->format_minor()
                         : parts.format_major == 1 ? kFormat1Minor
                                                   : kFormatMinor;
    if (parts.format_major >= 2 &&
        (nodes.size() > kMaxPackedNodes || refs.size() > kMaxPackedRefs)) {
      return Unsupported(
          "chunk " + std::to_string(c->index()) + " holds " + std::to_string(nodes.size()) +
          " nodes and " + std::to_string(refs.size()) + " references, more than format 2 allows (" +
          std::to_string(kMaxPackedNodes) + " and " + std::to_string(kMaxPackedRefs) + ")");
    }
    parts.producer = producer;
    parts.index = c->index();
    parts.base = c->base();
    parts.base_depth = c->base_depth();
    parts.nodes = {reinterpret_cast<const fb::Node*>(nodes.data()), nodes.size()};
    parts.refs = refs;
    parts.classes = &classes;
    parts.operands = &operands;
    parts.literals = &literals;
    parts.meta = &meta;
    parts.functions = &functions;
    parts.last = last;
    parts.trace_meta = &tmeta;
    parts.total_nodes = c->total_nodes();
    FinishChunk(fbb_, enc_, parts);
    if (fbb_.GetSize() > kMaxChunkBytes) {
      return Unsupported("chunk " + std::to_string(c->index()) +
                         " would be larger than a chunk may be after the replay");
    }
    Rebuilt out;
    out.bytes.assign(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
    out.nodes = std::move(nodes);
    out.refs = std::move(refs);
    return out;
  }

 private:
  const fb::Chunk* c_;
  std::span<const NodeRec> nodes_;
  std::span<const uint32_t> refs_;
  flatbuffers::FlatBufferBuilder fbb_;
  ValueEncoder enc_;
};

}  // namespace

Result<Rebuilt> RebuildChunk(const fb::Chunk* chunk, std::span<const NodeRec> nodes,
                             std::span<const uint32_t> refs, const ChunkEdit& edit,
                             uint16_t format_major) {
  return ChunkBuilder(chunk, nodes, refs).Build(edit, format_major);
}

Result<Rebuilt> RebuildChunk(const Rebuilt& chunk, const ChunkEdit& edit) {
  return RebuildChunk(RebuiltRoot(chunk), chunk.nodes, chunk.refs, edit);
}

const fb::Chunk* RebuiltRoot(const Rebuilt& chunk) {
  return fb::GetSizePrefixedChunk(chunk.bytes.data());
}

Value RebuiltValue(const Rebuilt& chunk, uint32_t local) {
  const fb::Chunk* c = RebuiltRoot(chunk);
  const NodeRec& n = chunk.nodes[local];
  return DecodeValue(c, n.value, c->classes()->Get(n.cls)->vkind());
}

}  // namespace irt::internal
