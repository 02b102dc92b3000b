// The progress line the tools draw on stderr while long work runs: the
// nodes done, their rate and, when the total is known, the part done. It
// appears only once the work has run for a while (IRT_PROGRESS_DELAY_MS,
// default 1000), is redrawn at most ten times a second in place ("\r", the
// text, then clear to the end of the line) and is erased before anything
// else is written to stderr and at the end. Cli decides whether there is
// one at all: stderr a terminal, TERM not "dumb", no -q, no --no-progress.
#ifndef IRT_TOOLS_COMMON_PROGRESS_H_
#define IRT_TOOLS_COMMON_PROGRESS_H_

#include <chrono>
#include <cstdio>
#include <string>

#include "irt/progress.h"

namespace irt::tools {

/// Milliseconds before the line first appears: IRT_PROGRESS_DELAY_MS when it
/// is set to decimal digits, 1000 otherwise.
int64_t ProgressDelayMs();

/// The line's text after "name: ", for `p` after `seconds`: "1234 of 5678
/// nodes (21%), 4.2M nodes/s" (a total of nodes), "1234 nodes (21%), ..."
/// (a total of bytes: the part of the file read) or "1234 nodes, ..." (no
/// total).
std::string FormatProgress(const Progress& p, double seconds);

class TerminalProgress : public Progress {
 public:
  /// Draws on `out` (a terminal), each line starting "name: ".
  TerminalProgress(std::string name, std::FILE* out);
  ~TerminalProgress() override;
  /// Erases the line if it is shown; the next poll may draw it again.
  void Clear();
  /// Erases the line for good: for when the tool starts writing its own
  /// text to the same terminal.
  void Stop();

 protected:
  void OnPoll() override;

 private:
  using Clock = std::chrono::steady_clock;
  void Draw(Clock::time_point now);
  std::string name_;
  std::FILE* out_;
  Clock::time_point start_;
  Clock::time_point last_draw_;
  Clock::duration delay_;
  bool shown_ = false;
  bool drawn_once_ = false;
};

}  // namespace irt::tools

#endif  // IRT_TOOLS_COMMON_PROGRESS_H_
