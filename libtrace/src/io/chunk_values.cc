// Values of a checked chunk decoded into irt::Value (chunk.h).
#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/chunk.h"
#include "irt/value.h"

namespace irt::internal {

namespace {

// Tuples decode once per top-level value: an item that refers to a tuple
// already decoded shares it (a Value copy), so a tuple whose items share
// lower tuples costs memory in the number of distinct tuples, not in its
// decoded size (up to kMaxDecodedSize).
Value Decode(const fb::Chunk* c, uint64_t bits, fb::VKind kind,
             std::unordered_map<uint64_t, Value>* tuples) {
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
      if (t->data() && t->data()->size() > 0) {
        out.data.resize(t->data()->size());
        std::memcpy(out.data.data(), t->data()->data(), out.data.size());
      }
      return Value::MakeTensor(std::move(out));
    }
    case fb::VKind::Tuple: {
      auto known = tuples->find(bits);
      if (known != tuples->end()) return known->second;
      // Nesting is bounded by kMaxTupleDepth (checked in VerifyChunk).
      const fb::Tuple* t = c->tuples()->Get(bits);
      std::vector<Value> items;
      if (t->items()) {
        items.reserve(t->items()->size());
        for (uint32_t j = 0; j < t->items()->size(); ++j) {
          const fb::Value* item = t->items()->Get(j);
          items.push_back(Decode(c, item->bits(), item->vkind(), tuples));
        }
      }
      Value v = Value::MakeTuple(std::move(items));
      tuples->emplace(bits, v);
      return v;
    }
  }
  return Value();
}

}  // namespace

Value DecodeValue(const fb::Chunk* c, uint64_t bits, fb::VKind kind) {
  if (kind != fb::VKind::Tuple) return Decode(c, bits, kind, nullptr);  // tuples only use it
  std::unordered_map<uint64_t, Value> tuples;
  return Decode(c, bits, kind, &tuples);
}

Value DecodeValue(const fb::Chunk* c, const fb::Value& v) {
  return DecodeValue(c, v.bits(), v.vkind());
}

}  // namespace irt::internal
