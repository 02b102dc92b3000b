// Values into a chunk's FlatBuffers tables (chunk_encoder.h).
#include "io/chunk_encoder.h"

#include <unordered_map>

#include "io/control_flow.h"
#include "io/packed.h"
#include "irt/trace.h"

namespace irt::internal {

uint32_t ValueEncoder::AddTensor(const Tensor& t) {
  auto shape = fbb_->CreateVector(t.shape);
  fbb_->ForceVectorAlignment(t.data.size(), 1, 8);
  auto data = fbb_->CreateVector(t.data.data(), t.data.size());
  payload_bytes_ += t.data.size() + t.shape.size() * 8;
  fb::TensorBuilder tb(*fbb_);
  tb.add_dtype(static_cast<fb::DType>(t.dtype));
  tb.add_shape(shape);
  tb.add_data(data);
  tensors_.push_back(tb.Finish());
  return static_cast<uint32_t>(tensors_.size() - 1);
}

fb::Value ValueEncoder::EncodeTuple(const Value& root) {
  struct Frame {
    const Value* v;
    size_t next = 0;
    std::vector<fb::Value> items;
  };
  std::vector<Frame> stack;
  stack.push_back(Frame{&root, 0, {}});
  fb::Value result;
  // Items that share a tuple (one object in memory) are encoded once: a
  // tuple's size on disk follows its distinct tuples, not its decoded size.
  std::unordered_map<const void*, fb::Value> done_tuples;
  while (!stack.empty()) {
    Frame& f = stack.back();
    const auto& items = f.v->tuple();
    if (f.next < items.size()) {
      const Value& item = items[f.next++];
      if (item.kind() == VKind::kTuple) {
        auto known = done_tuples.find(&item.tuple());
        if (known != done_tuples.end()) {
          f.items.push_back(known->second);
        } else {
          stack.push_back(Frame{&item, 0, {}});
        }
      } else {
        f.items.push_back(Encode(item));
      }
      continue;
    }
    fb::Value done(AddTuple(f.items), fb::VKind::Tuple);
    done_tuples.emplace(&items, done);
    stack.pop_back();
    if (stack.empty()) {
      result = done;
    } else {
      stack.back().items.push_back(done);
    }
  }
  return result;
}

void ValueEncoder::Clear() {
  strings_.clear();
  string_ids_.clear();
  tensors_.clear();
  tuples_.clear();
  tensor_ids_.Clear();
  shared_string_ids_.Clear();
  held_.clear();
  payload_bytes_ = 0;
}

flatbuffers::Offset<flatbuffers::Vector<const fb::Branch*>> EncodeBranches(
    flatbuffers::FlatBufferBuilder& fbb, const ControlFlow& facts) {
  std::vector<fb::Branch> v;
  v.reserve(facts.branches.size());
  for (const BranchFact& b : facts.branches) {
    v.emplace_back(b.block, b.pos, b.target, b.conditional ? b.condition : 0, EncodeBranchFlags(b));
  }
  return fbb.CreateVectorOfStructs(v);
}

void FinishChunk(flatbuffers::FlatBufferBuilder& fbb, const ValueEncoder& enc,
                 const ChunkParts& p) {
  // Format 1 stores the columns as they are; format 2 packs them.
  const bool packed = p.format_major >= 2;
  flatbuffers::Offset<flatbuffers::Vector<const fb::Node*>> v_nodes;
  flatbuffers::Offset<flatbuffers::Vector<uint32_t>> v_refs;
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> v_packed;
  if (packed) {
    std::vector<uint16_t> slots(p.classes->size());
    for (size_t i = 0; i < slots.size(); ++i) {
      slots[i] = static_cast<uint16_t>(ClassSlots((*p.classes)[i], p.operands->data()));
    }
    PackTables t{*p.classes, slots, *p.operands, *p.literals};
    thread_local GrowBuffer<uint8_t> bytes;
    size_t n = PackNodes(t, {reinterpret_cast<const NodeRec*>(p.nodes.data()), p.nodes.size()},
                         p.refs, &bytes);
    // Chunks are whole multiples of 8 bytes (schema/README.md §2): an
    // 8-aligned vector makes the builder pad the buffer to 8.
    fbb.ForceVectorAlignment(n, 1, 8);
    v_packed = fbb.CreateVector(bytes.data(), n);
  } else {
    v_nodes = fbb.CreateVectorOfStructs(p.nodes.data(), p.nodes.size());
    v_refs = fbb.CreateVector(p.refs.data(), p.refs.size());
  }
  auto v_classes = fbb.CreateVectorOfStructs(*p.classes);
  auto v_operands = fbb.CreateVector(*p.operands);
  auto v_literals = fbb.CreateVectorOfStructs(*p.literals);
  auto v_strings = fbb.CreateVector(enc.strings());
  auto v_tensors = fbb.CreateVector(enc.tensors());
  auto v_tuples = fbb.CreateVector(enc.tuples());
  auto v_meta = fbb.CreateVectorOfStructs(*p.meta);
  auto v_functions = fbb.CreateVector(*p.functions);
  flatbuffers::Offset<flatbuffers::Vector<const fb::Meta*>> v_tmeta;
  if (p.last) v_tmeta = fbb.CreateVectorOfStructs(*p.trace_meta);
  fb::ChunkBuilder cb(fbb);
  cb.add_format_major(p.format_major);
  cb.add_format_minor(p.format_minor);
  if (!p.producer.IsNull()) cb.add_producer(p.producer);
  cb.add_index(p.index);
  cb.add_base(p.base);
  cb.add_base_depth(p.base_depth);
  if (packed) {
    cb.add_node_count(static_cast<uint32_t>(p.nodes.size()));
    cb.add_packed(v_packed);
  } else {
    cb.add_nodes(v_nodes);
    cb.add_refs(v_refs);
  }
  cb.add_classes(v_classes);
  cb.add_operands(v_operands);
  cb.add_literals(v_literals);
  cb.add_strings(v_strings);
  cb.add_tensors(v_tensors);
  cb.add_tuples(v_tuples);
  cb.add_meta(v_meta);
  cb.add_functions(v_functions);
  if (p.last) {
    cb.add_last(true);
    cb.add_total_nodes(p.total_nodes);
    cb.add_trace_meta(v_tmeta);
  }
  fbb.FinishSizePrefixed(cb.Finish(), kFileIdentifier);
}

}  // namespace irt::internal
