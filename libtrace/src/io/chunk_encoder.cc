// Values into a chunk's FlatBuffers tables (chunk_encoder.h).
#include "io/chunk_encoder.h"

namespace irt::internal {

uint32_t ValueEncoder::AddTensor(const Tensor& t) {
  auto shape = fbb_->CreateVector(t.shape);
  fbb_->ForceVectorAlignment(t.data.size(), 1, 8);
  auto data = fbb_->CreateVector(t.data);
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
  while (!stack.empty()) {
    Frame& f = stack.back();
    const auto& items = f.v->tuple();
    if (f.next < items.size()) {
      const Value& item = items[f.next++];
      if (item.kind() == VKind::kTuple) {
        stack.push_back(Frame{&item, 0, {}});
      } else {
        f.items.push_back(Encode(item));
      }
      continue;
    }
    fb::Value done(AddTuple(f.items), fb::VKind::Tuple);
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
  payload_bytes_ = 0;
}

}  // namespace irt::internal
