// Internal: values into one chunk's FlatBuffers tables (strings, tensors,
// tuples), shared by the streaming TraceWriter and by the rebuild of an
// edited chunk (chunk_rebuild.h), so that both encode a value the same way.
#ifndef IRT_SRC_IO_CHUNK_ENCODER_H_
#define IRT_SRC_IO_CHUNK_ENCODER_H_

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/grow_buffer.h"
#include "irt/control_flow.h"
#include "irt/value.h"
#include "irtrace_generated.h"

namespace irt::internal {

/// The allocator of a chunk's FlatBufferBuilder: from GrowBuffer's 1 MiB
/// on, its buffer is a huge-page block (a fault per 2 MiB on first touch,
/// not per 4 KiB), like the other large buffers. Stateless:
/// ChunkBuilderAllocator() is the one instance.
class BlockBuilderAllocator final : public flatbuffers::Allocator {
 public:
  uint8_t* allocate(size_t size) override {
    if (size >= GrowBuffer<uint8_t>::kBlockBytes) {
      return static_cast<uint8_t*>(AllocateTensorBlock(size, /*zero=*/false));
    }
    return new uint8_t[size];
  }
  void deallocate(uint8_t* p, size_t size) override {
    if (size >= GrowBuffer<uint8_t>::kBlockBytes) {
      FreeTensorBlock(p, size);
    } else {
      delete[] p;
    }
  }
};
inline flatbuffers::Allocator* ChunkBuilderAllocator() {
  static BlockBuilderAllocator a;
  return &a;
}

/// Ids by object address, for the values a chunk shares: open addressing
/// in one array (no allocation per entry, as a node-based map makes on
/// every insertion), emptied for each chunk.
class AddressIds {
 public:
  /// The id slot of `key`, and whether the key was absent (then the slot
  /// holds 0 for the caller to set).
  std::pair<uint32_t*, bool> TryEmplace(const void* key) {
    if (2 * (used_ + 1) > slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.key == key) return {&s.id, false};
      if (s.key == nullptr) {
        s.key = key;
        s.id = 0;
        ++used_;
        return {&s.id, true};
      }
    }
  }
  void Clear() {
    if (used_ != 0) std::fill(slots_.begin(), slots_.end(), Slot{});
    used_ = 0;
  }

 private:
  struct Slot {
    const void* key = nullptr;
    uint32_t id = 0;
  };
  static size_t Hash(const void* key) {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull >>
                               32);
  }
  void Grow() {
    std::vector<Slot> old(std::max<size_t>(64, 2 * slots_.size()));
    old.swap(slots_);
    used_ = 0;
    for (const Slot& s : old) {
      if (s.key != nullptr) *TryEmplace(s.key).first = s.id;
    }
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

/// Encodes values into the tables of the chunk being built in `fbb`.
/// Strings are interned; tuples are encoded iteratively in post-order, so
/// that an item always refers to a lower tuple index.
class ValueEncoder {
 public:
  explicit ValueEncoder(flatbuffers::FlatBufferBuilder* fbb) : fbb_(fbb) {}

  /// The index of `s` in the string table, adding it when new.
  uint32_t Intern(std::string_view s) {
    auto it = string_ids_.find(s);
    if (it != string_ids_.end()) return it->second;
    return AddString(s);
  }
  /// Appends `s` even when it is already there (a copied table keeps its
  /// indices); Intern finds the first copy.
  uint32_t AddString(std::string_view s) {
    uint32_t id = static_cast<uint32_t>(strings_.size());
    strings_.push_back(fbb_->CreateString(s.data(), s.size()));
    string_ids_.emplace(std::string(s), id);
    return id;
  }
  uint32_t AddTensor(const Tensor& t);
  /// Appends a tuple whose items are already encoded.
  uint32_t AddTuple(const std::vector<fb::Value>& items) {
    tuples_.push_back(fb::CreateTuple(*fbb_, fbb_->CreateVectorOfStructs(items)));
    return static_cast<uint32_t>(tuples_.size() - 1);
  }

  fb::Value Encode(const Value& v) {
    switch (v.kind()) {
      case VKind::kString:
      case VKind::kFunction: {
        // A string many nodes share (a function's name, passed as %1 at
        // every call) is looked up by the object once per chunk.
        auto [id, fresh] = shared_string_ids_.TryEmplace(&v.str());
        if (fresh) {
          *id = Intern(v.str());
          held_.push_back(v);
        }
        return fb::Value(*id, static_cast<fb::VKind>(v.kind()));
      }
      case VKind::kTensor: {
        // A tensor many nodes share (an argument passed down a call chain)
        // is written once per chunk.
        auto [id, fresh] = tensor_ids_.TryEmplace(&v.tensor());
        if (fresh) {
          *id = AddTensor(v.tensor());
          held_.push_back(v);
        }
        return fb::Value(*id, fb::VKind::Tensor);
      }
      case VKind::kTuple:
        return EncodeTuple(v);
      default:
        return fb::Value(v.bits(), static_cast<fb::VKind>(v.kind()));
    }
  }

  const std::vector<flatbuffers::Offset<flatbuffers::String>>& strings() const { return strings_; }
  const std::vector<flatbuffers::Offset<fb::Tensor>>& tensors() const { return tensors_; }
  const std::vector<flatbuffers::Offset<fb::Tuple>>& tuples() const { return tuples_; }
  /// Tensor bytes (data and shapes) added since the last Clear.
  uint64_t payload_bytes() const { return payload_bytes_; }
  /// Forgets the tables, for the next chunk (after fbb's Clear).
  void Clear();

 private:
  fb::Value EncodeTuple(const Value& root);

  flatbuffers::FlatBufferBuilder* fbb_;
  std::vector<flatbuffers::Offset<flatbuffers::String>> strings_;
  // Looked up by string_view, without a std::string per lookup.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> string_ids_;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors_;
  std::vector<flatbuffers::Offset<fb::Tuple>> tuples_;
  // The tensors Encode added to this chunk, by the object their values
  // share; `held_` keeps those objects alive until Clear, so that no other
  // tensor (or string) can take one's address meanwhile.
  AddressIds tensor_ids_;
  // The same for the strings of String and Function values.
  AddressIds shared_string_ids_;
  std::vector<Value> held_;
  uint64_t payload_bytes_ = 0;
};

/// The columns and header fields of one chunk, as the writer and the chunk
/// rebuild hold them before they are finished into a buffer.
struct ChunkParts {
  uint16_t format_major = 0;
  uint16_t format_minor = 0;
  flatbuffers::Offset<fb::Producer> producer;  // null: none
  uint64_t index = 0;
  uint64_t base = 0;
  uint32_t base_depth = 0;
  std::span<const fb::Node> nodes;
  std::span<const uint32_t> refs;
  const std::vector<fb::NodeClass>* classes = nullptr;
  const std::vector<uint32_t>* operands = nullptr;
  const std::vector<fb::Value>* literals = nullptr;
  const std::vector<fb::Meta>* meta = nullptr;
  const std::vector<flatbuffers::Offset<fb::FunctionIR>>* functions = nullptr;
  /// The final chunk: its trace metadata and the trace's node count.
  bool last = false;
  const std::vector<fb::Meta>* trace_meta = nullptr;
  uint64_t total_nodes = 0;
};

/// A function's control-flow facts as the chunk stores them (sorted as
/// given).
flatbuffers::Offset<flatbuffers::Vector<const fb::Branch*>> EncodeBranches(
    flatbuffers::FlatBufferBuilder& fbb, const ControlFlow& facts);

/// Finishes `parts` and the tables of `enc` into `fbb` as one size-prefixed
/// chunk; the bytes are fbb's buffer.
void FinishChunk(flatbuffers::FlatBufferBuilder& fbb, const ValueEncoder& enc,
                 const ChunkParts& parts);

}  // namespace irt::internal

#endif  // IRT_SRC_IO_CHUNK_ENCODER_H_
