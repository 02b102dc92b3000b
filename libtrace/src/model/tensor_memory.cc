// Tensor blocks: the storage of tensors of 2 MiB or more (TensorAllocator in
// irt/value.h). A gradient sweep over matrices spends much of its time in
// the kernel clearing the fresh 4 KiB pages of each new result; mapped on
// 2 MiB boundaries with MADV_HUGEPAGE, a block takes one fault per 2 MiB.
// A fresh mapping is zero-filled by the kernel, so a block is handed out
// zero-filled without writing it again. The blocks freed last are kept, up
// to kCacheBytes, for the next tensor of their size, so a loop over
// matrices reuses warm memory. The readers' and the gradient engine's large
// buffers (io/grow_buffer.h, the adjoint pages) are blocks too, handed out
// without clearing when they need none (AllocateTensorBlock's `zero`).
//
// Storage from kTensorPieceBytes up to a block's size comes from operator
// new, and the pieces freed last are kept too, up to kPieceCacheBytes, for
// the next tensor of exactly their size: the allocator would otherwise give
// them back to the kernel (glibc maps pieces of this size, or trims its
// heap under them), and each reuse would take fresh pages again. At most
// kPieceCacheCount pieces and kPieceCacheBytes are kept. They are
// handed out as they were left, like any memory from operator new.
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

#include "irt/value.h"

#if defined(__SANITIZE_ADDRESS__)
#define IRT_TENSOR_BLOCKS_FROM_NEW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IRT_TENSOR_BLOCKS_FROM_NEW 1
#endif
#endif

namespace irt::internal {
namespace {

#if !defined(IRT_TENSOR_BLOCKS_FROM_NEW)
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kCacheBytes = size_t{64} << 20;
constexpr int kCacheBlocks = 16;
// A few pieces: enough for the temporaries of one step of a sweep over
// matrices, little memory held when nothing uses them.
constexpr size_t kPieceCacheBytes = size_t{4} << 20;
constexpr int kPieceCacheCount = 8;

// Freed memory kept for reuse, oldest first: at most N entries, `bytes` in all.
template <int N>
struct Kept {
  std::mutex mu;
  void* ptr[N] = {};
  size_t size[N] = {};
  int count = 0;
  size_t bytes = 0;

  // With mu held: takes the newest entry of exactly `want` bytes, or nullptr.
  void* Take(size_t want) {
    for (int i = count - 1; i >= 0; --i) {
      if (size[i] != want) continue;
      void* p = ptr[i];
      Drop(i, 1);
      return p;
    }
    return nullptr;
  }
  // With mu held: removes `n` entries from entry `i` on.
  void Drop(int i, int n) {
    for (int j = i; j < i + n; ++j) bytes -= size[j];
    for (int j = i + n; j < count; ++j) {
      ptr[j - n] = ptr[j];
      size[j - n] = size[j];
    }
    count -= n;
  }
  size_t Bytes() {
    std::lock_guard<std::mutex> lock(mu);
    return bytes;
  }
  // With mu held: adds an entry (there must be room).
  void Put(void* p, size_t n) {
    ptr[count] = p;
    size[count] = n;
    ++count;
    bytes += n;
  }
};

// Never destroyed: tensors in static storage may be freed after they would be.
Kept<kCacheBlocks>& Blocks() {
  static auto* cache = new Kept<kCacheBlocks>;
  return *cache;
}
Kept<kPieceCacheCount>& Pieces() {
  static auto* cache = new Kept<kPieceCacheCount>;
  return *cache;
}

// The mapped size of a block of `bytes`: whole huge pages.
size_t MappedSize(size_t bytes) { return (bytes + kHugePage - 1) & ~(kHugePage - 1); }
#endif

}  // namespace

void* AllocateTensorBlock(size_t bytes, bool zero) {
#if defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  void* block = ::operator new(bytes);
  if (zero) std::memset(block, 0, bytes);
  return block;
#else
  if (bytes > SIZE_MAX / 2) throw std::bad_alloc();
  size_t size = MappedSize(bytes);
  auto& cache = Blocks();
  void* reused = nullptr;
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    reused = cache.Take(size);
  }
  if (reused != nullptr) {
    // Cleared outside the lock: warm memory, cheaper than a fresh mapping.
    if (zero) std::memset(reused, 0, bytes);
    return reused;
  }
  // Map one huge page more than needed and cut the mapping down to the
  // aligned part.
  void* raw =
      mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  uintptr_t at = reinterpret_cast<uintptr_t>(raw);
  uintptr_t start = (at + kHugePage - 1) & ~uintptr_t{kHugePage - 1};
  size_t head = start - at;
  if (head > 0) munmap(raw, head);
  if (kHugePage - head > 0) munmap(reinterpret_cast<void*>(start + size), kHugePage - head);
  void* block = reinterpret_cast<void*>(start);
#if defined(MADV_HUGEPAGE)
  madvise(block, size, MADV_HUGEPAGE);  // advice: without it the block still works
#endif
  return block;
#endif
}

size_t TensorBlockCapacity(size_t bytes) {
#if defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  return bytes;
#else
  return MappedSize(bytes);
#endif
}

void FreeTensorBlock(void* block, size_t bytes) noexcept {
#if defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  (void)bytes;
  ::operator delete(block);
#else
  size_t size = MappedSize(bytes);
  auto& cache = Blocks();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    if (cache.count < kCacheBlocks && cache.bytes + size <= kCacheBytes) {
      cache.Put(block, size);
      return;
    }
  }
  munmap(block, size);
#endif
}

void* AllocateTensorPiece(size_t bytes) {
#if !defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  auto& cache = Pieces();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    if (void* reused = cache.Take(bytes)) return reused;
  }
#endif
  return ::operator new(bytes);
}

void FreeTensorPiece(void* piece, size_t bytes) noexcept {
#if !defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  // Kept as the newest piece (the likeliest to be asked for again, and the
  // warmest); the oldest make room, and are given back outside the lock.
  void* evicted[kPieceCacheCount];
  int n_evicted = 0;
  {
    auto& cache = Pieces();
    std::lock_guard<std::mutex> lock(cache.mu);
    size_t kept = cache.bytes;
    while (n_evicted < cache.count &&
           (kept + bytes > kPieceCacheBytes || cache.count - n_evicted == kPieceCacheCount)) {
      kept -= cache.size[n_evicted];
      evicted[n_evicted] = cache.ptr[n_evicted];
      ++n_evicted;
    }
    cache.Drop(0, n_evicted);
    cache.Put(piece, bytes);
  }
  for (int i = 0; i < n_evicted; ++i) ::operator delete(evicted[i]);
#else
  (void)bytes;
  ::operator delete(piece);
#endif
}

#if defined(IRT_TENSOR_BLOCKS_FROM_NEW)
size_t CachedTensorPieceBytes() { return 0; }
size_t CachedTensorBlockBytes() { return 0; }
#else
size_t CachedTensorPieceBytes() { return Pieces().Bytes(); }
size_t CachedTensorBlockBytes() { return Blocks().Bytes(); }
#endif

}  // namespace irt::internal
