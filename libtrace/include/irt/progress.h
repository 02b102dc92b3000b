// Progress of long work: a counter that libtrace's long passes advance (per
// chunk read, verified, written or swept) and a hook that a program
// overrides to show it. The library only counts and calls the hook; it
// never prints or reads the clock itself.
#ifndef IRT_PROGRESS_H_
#define IRT_PROGRESS_H_

#include <cstdint>

namespace irt {

/// Counts the nodes (and bytes) that a long operation has done, out of
/// totals that may be unknown (0). Add() costs two additions and one
/// comparison; when the node count reaches the mark set with PollAt(), it
/// calls OnPoll(), where a subclass reads the clock and shows the figures.
/// A plain Progress counts and never polls. Not thread-safe.
class Progress {
 public:
  Progress() = default;
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  virtual ~Progress() = default;

  /// `nodes` (and `bytes`) more done.
  void Add(uint64_t nodes, uint64_t bytes = 0) {
    nodes_ += nodes;
    bytes_ += bytes;
    if (nodes_ >= next_poll_) [[unlikely]] {
      OnPoll();
    }
  }
  /// More work to do: a tool that reads two traces adds both; a pass over
  /// a trace that has been read adds its nodes again.
  void AddTotal(uint64_t nodes, uint64_t bytes = 0) {
    total_nodes_ += nodes;
    total_bytes_ += bytes;
  }

  uint64_t nodes() const { return nodes_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t total_nodes() const { return total_nodes_; }
  uint64_t total_bytes() const { return total_bytes_; }
  /// The part done, in [0, 1]: by bytes when their total is known, else by
  /// nodes; negative when neither total is known.
  double fraction() const {
    auto part = [](uint64_t done, uint64_t total) {
      return done >= total ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
    };
    if (total_bytes_ != 0) return part(bytes_, total_bytes_);
    if (total_nodes_ != 0) return part(nodes_, total_nodes_);
    return -1.0;
  }

 protected:
  /// Called from Add() once nodes() reaches the mark of PollAt().
  virtual void OnPoll() {}
  /// Calls OnPoll() again once nodes() reaches `nodes` (0: at the next Add).
  void PollAt(uint64_t nodes) { next_poll_ = nodes; }

 private:
  uint64_t nodes_ = 0, bytes_ = 0;
  uint64_t total_nodes_ = 0, total_bytes_ = 0;
  uint64_t next_poll_ = ~uint64_t{0};
};

}  // namespace irt

#endif  // IRT_PROGRESS_H_
