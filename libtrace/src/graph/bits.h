// Internal: the bit set the analyses use to mark nodes (a slice's selected,
// context and referenced nodes; replay's changed nodes).
#ifndef IRT_SRC_GRAPH_BITS_H_
#define IRT_SRC_GRAPH_BITS_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "irt/trace.h"

namespace irt::internal {

// Inline population count (std::popcount is a library call without -mpopcnt).
inline uint64_t PopCount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return (x * 0x0101010101010101ull) >> 56;
}

/// A set of indices in [0, n), one bit each, whose storage comes from
/// calloc: large allocations are fresh zero pages, so only the words a walk
/// touches cost memory.
/// Tracks the range of words ever set, which bounds every scan.
class BitSet {
 public:
  BitSet() = default;
  explicit BitSet(uint64_t n) : n_(n), nwords_((n + 63) / 64) {
    if (nwords_ > 0) {
      data_ = static_cast<uint64_t*>(std::calloc(nwords_, sizeof(uint64_t)));
    }
  }
  BitSet(BitSet&& o) noexcept { *this = std::move(o); }
  BitSet& operator=(BitSet&& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(nwords_, o.nwords_);
    std::swap(data_, o.data_);
    std::swap(lo_, o.lo_);
    std::swap(hi_, o.hi_);
    return *this;
  }
  ~BitSet() { std::free(data_); }
  bool ok() const { return nwords_ == 0 || data_ != nullptr; }

  bool Test(uint64_t i) const { return i < n_ && ((data_[i >> 6] >> (i & 63)) & 1) != 0; }
  // Returns true when the bit was clear.
  bool Set(uint64_t i) {
    uint64_t w = i >> 6;
    uint64_t m = 1ull << (i & 63);
    bool was = (data_[w] & m) != 0;
    data_[w] |= m;
    if (w < lo_) lo_ = w;
    if (w + 1 > hi_) hi_ = w + 1;
    return !was;
  }
  void Clear(uint64_t i) { data_[i >> 6] &= ~(1ull << (i & 63)); }
  // Word w (< number of words); untouched words read as calloc's zero pages.
  uint64_t Word(uint64_t w) const { return data_[w]; }
  // First and one-past-last word ever set (lo > hi when empty).
  uint64_t lo_word() const { return lo_; }
  uint64_t hi_word() const { return hi_; }

  // Whether any bit in [lo, hi] is set, scanning down from hi (so it stops
  // early when a set bit is near hi).
  bool AnyIn(uint64_t lo, uint64_t hi) const {
    if (lo > hi || hi_ == 0) return false;
    uint64_t wlo = std::max(lo >> 6, lo_);
    uint64_t whi = std::min(hi >> 6, hi_ - 1);
    for (uint64_t w = whi + 1; w-- > wlo;) {
      uint64_t bits = data_[w];
      if (w == (hi >> 6)) bits &= ~0ull >> (63 - (hi & 63));
      if (w == (lo >> 6)) bits &= ~0ull << (lo & 63);
      if (bits != 0) return true;
      if (w == 0) break;
    }
    return false;
  }
  // The smallest set index >= i, or kNoNode.
  uint64_t NextSet(uint64_t i) const {
    if (i >= n_) return kNoNode;
    uint64_t w = i >> 6;
    if (w < lo_) {
      w = lo_;
      i = w * 64;
    }
    if (w >= hi_) return kNoNode;
    uint64_t bits = data_[w] & (~0ull << (i & 63));
    while (true) {
      if (bits != 0) return w * 64 + static_cast<uint64_t>(std::countr_zero(bits));
      if (++w >= hi_) return kNoNode;
      bits = data_[w];
    }
  }

 private:
  uint64_t n_ = 0;
  uint64_t nwords_ = 0;
  uint64_t* data_ = nullptr;
  uint64_t lo_ = ~0ull;
  uint64_t hi_ = 0;
};

}  // namespace irt::internal

#endif  // IRT_SRC_GRAPH_BITS_H_
