// Internal: GrowBuffer, the reusable buffers of the readers and passes.
#ifndef IRT_SRC_IO_GROW_BUFFER_H_
#define IRT_SRC_IO_GROW_BUFFER_H_

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>

#include "irt/value.h"

namespace irt::internal {

/// Uninitialised storage that only grows: a decode target reused from chunk
/// to chunk, never zero-filled (only the memory written is touched), or a
/// large bit set. From kBlockBytes on it is a tensor block.
template <typename T>
class GrowBuffer {
 public:
  /// 1 MiB, a chunk of 65536 decoded nodes: a block wastes at most half of
  /// its memory, and its first touch takes a page fault per 2 MiB instead
  /// of one per 4 KiB (on a virtual machine each costs microseconds).
  static constexpr size_t kBlockBytes = kTensorBlockBytes / 2;
  GrowBuffer() = default;
  GrowBuffer(GrowBuffer&& o) noexcept : data_(o.data_), cap_(o.cap_), block_(o.block_) {
    o.data_ = nullptr;
    o.cap_ = 0;
  }
  GrowBuffer& operator=(GrowBuffer&& o) noexcept {
    if (this != &o) {
      Free();
      data_ = o.data_;
      cap_ = o.cap_;
      block_ = o.block_;
      o.data_ = nullptr;
      o.cap_ = 0;
    }
    return *this;
  }
  GrowBuffer(const GrowBuffer&) = delete;
  GrowBuffer& operator=(const GrowBuffer&) = delete;
  ~GrowBuffer() { Free(); }
  /// Room for `n` elements (n * sizeof(T) must not overflow); a block from
  /// `block_from` bytes on.
  T* Reserve(size_t n, size_t block_from = kBlockBytes) {
    if (cap_ < n) {
      Free();
      const size_t bytes = n * sizeof(T);
      block_ = bytes >= block_from;
      if (block_) {
        // All of the block: a later chunk a little larger fits in it too.
        data_ = static_cast<T*>(AllocateTensorBlock(bytes, /*zero=*/false));
        cap_ = TensorBlockCapacity(bytes) / sizeof(T);
      } else {
        data_ = static_cast<T*>(::operator new(bytes));
        cap_ = n;
      }
    }
    return data_;
  }
  /// Room for `n` elements, all zero; a block from 256 KiB on (a bit set
  /// of 2^21 nodes), since it is touched whole at once.
  T* Zeroed(size_t n) {
    T* p = Reserve(n, kBlockBytes / 4);
    if (n != 0) std::memset(static_cast<void*>(p), 0, n * sizeof(T));
    return p;
  }
  T* data() const { return data_; }
  /// The elements it has room for.
  size_t capacity() const { return cap_; }

 private:
  static_assert(std::is_trivially_copyable_v<T>);
  void Free() noexcept {
    if (data_ == nullptr) return;
    if (block_) {
      FreeTensorBlock(data_, cap_ * sizeof(T));
    } else {
      ::operator delete(data_);
    }
    data_ = nullptr;
    cap_ = 0;
  }
  T* data_ = nullptr;
  size_t cap_ = 0;
  bool block_ = false;
};

}  // namespace irt::internal

#endif  // IRT_SRC_IO_GROW_BUFFER_H_
