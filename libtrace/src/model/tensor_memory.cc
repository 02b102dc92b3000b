// Tensor blocks: the storage of tensors of 2 MiB or more (TensorAllocator in
// irt/value.h). A gradient sweep over matrices spends much of its time in
// the kernel clearing the fresh 4 KiB pages of each new result; mapped on
// 2 MiB boundaries with MADV_HUGEPAGE, a block takes one fault per 2 MiB.
// A fresh mapping is zero-filled by the kernel, so a block is handed out
// zero-filled without writing it again. The blocks freed last are kept, up
// to kCacheBytes, for the next tensor of their size, so a loop over
// matrices reuses warm memory.
//
// Storage from kTensorCacheBytes up to a block's size comes from operator
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

struct BlockCache {
  std::mutex mu;
  void* block[kCacheBlocks] = {};
  size_t size[kCacheBlocks] = {};
  int count = 0;
  size_t bytes = 0;
};

// Never destroyed: tensors in static storage may be freed after it would be.
BlockCache& Cache() {
  static BlockCache* cache = new BlockCache;
  return *cache;
}

// The mapped size of a block of `bytes`: whole huge pages.
size_t MappedSize(size_t bytes) { return (bytes + kHugePage - 1) & ~(kHugePage - 1); }

// A few pieces: enough for the temporaries of one step of a sweep over
// matrices, little memory held when nothing uses them.
constexpr size_t kPieceCacheBytes = size_t{4} << 20;
constexpr int kPieceCacheCount = 8;

struct PieceCache {
  std::mutex mu;
  void* piece[kPieceCacheCount] = {};
  size_t size[kPieceCacheCount] = {};
  int count = 0;
  size_t bytes = 0;
};

PieceCache& Pieces() {
  static PieceCache* cache = new PieceCache;
  return *cache;
}
#endif

}  // namespace

void* AllocateTensorBlock(size_t bytes) {
#if defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  void* block = ::operator new(bytes);
  std::memset(block, 0, bytes);
  return block;
#else
  if (bytes > SIZE_MAX / 2) throw std::bad_alloc();
  size_t size = MappedSize(bytes);
  BlockCache& cache = Cache();
  void* reused = nullptr;
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    for (int i = cache.count - 1; i >= 0; --i) {
      if (cache.size[i] != size) continue;
      reused = cache.block[i];
      cache.bytes -= size;
      --cache.count;
      for (int j = i; j < cache.count; ++j) {
        cache.block[j] = cache.block[j + 1];
        cache.size[j] = cache.size[j + 1];
      }
      break;
    }
  }
  if (reused != nullptr) {
    // Cleared outside the lock: warm memory, cheaper than a fresh mapping.
    std::memset(reused, 0, bytes);
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

void FreeTensorBlock(void* block, size_t bytes) noexcept {
#if defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  (void)bytes;
  ::operator delete(block);
#else
  size_t size = MappedSize(bytes);
  BlockCache& cache = Cache();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    if (cache.count < kCacheBlocks && cache.bytes + size <= kCacheBytes) {
      cache.block[cache.count] = block;
      cache.size[cache.count] = size;
      ++cache.count;
      cache.bytes += size;
      return;
    }
  }
  munmap(block, size);
#endif
}

void* AllocateTensorPiece(size_t bytes) {
#if !defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  PieceCache& cache = Pieces();
  std::lock_guard<std::mutex> lock(cache.mu);
  for (int i = cache.count - 1; i >= 0; --i) {
    if (cache.size[i] != bytes) continue;
    void* reused = cache.piece[i];
    cache.bytes -= bytes;
    --cache.count;
    for (int j = i; j < cache.count; ++j) {
      cache.piece[j] = cache.piece[j + 1];
      cache.size[j] = cache.size[j + 1];
    }
    return reused;
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
    PieceCache& cache = Pieces();
    std::lock_guard<std::mutex> lock(cache.mu);
    int drop = 0;
    size_t kept = cache.bytes;
    while (drop < cache.count &&
           (kept + bytes > kPieceCacheBytes || cache.count - drop == kPieceCacheCount)) {
      kept -= cache.size[drop];
      evicted[n_evicted++] = cache.piece[drop++];
    }
    for (int j = drop; j < cache.count; ++j) {
      cache.piece[j - drop] = cache.piece[j];
      cache.size[j - drop] = cache.size[j];
    }
    cache.count -= drop;
    cache.bytes = kept;
    cache.piece[cache.count] = piece;
    cache.size[cache.count] = bytes;
    ++cache.count;
    cache.bytes += bytes;
  }
  for (int i = 0; i < n_evicted; ++i) ::operator delete(evicted[i]);
#else
  (void)bytes;
  ::operator delete(piece);
#endif
}

size_t CachedTensorPieceBytes() {
#if defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  return 0;
#else
  PieceCache& cache = Pieces();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.bytes;
#endif
}

size_t CachedTensorBlockBytes() {
#if defined(IRT_TENSOR_BLOCKS_FROM_NEW)
  return 0;
#else
  BlockCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.bytes;
#endif
}

}  // namespace irt::internal
