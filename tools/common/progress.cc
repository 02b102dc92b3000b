#include "common/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace irt::tools {

namespace {

// The clock is read at most once per this many nodes (and once per chunk,
// which is what the library counts in most passes).
constexpr uint64_t kPollEvery = 1u << 12;
// At most ten redraws a second: enough to see it move, little to write.
constexpr std::chrono::milliseconds kRedrawEvery(100);
constexpr int64_t kDefaultDelayMs = 1000;

std::string Rate(double per_second) {
  if (per_second < 1e3) return fmt::format("{:.0f}", per_second);
  if (per_second < 1e6) return fmt::format("{:.1f}k", per_second / 1e3);
  if (per_second < 1e9) return fmt::format("{:.1f}M", per_second / 1e6);
  return fmt::format("{:.1f}G", per_second / 1e9);
}

}  // namespace

int64_t ProgressDelayMs() {
  const char* text = std::getenv("IRT_PROGRESS_DELAY_MS");
  if (text == nullptr || text[0] == '\0') return kDefaultDelayMs;
  int64_t ms = 0;
  const char* end = text + std::strlen(text);
  auto [p, ec] = std::from_chars(text, end, ms);
  if (ec != std::errc() || p != end || ms < 0) return kDefaultDelayMs;
  return ms;
}

std::string FormatProgress(const Progress& p, double seconds) {
  std::string rate = Rate(seconds > 0 ? static_cast<double>(p.nodes()) / seconds : 0.0);
  double f = p.fraction();
  int percent = f < 0 ? 0 : static_cast<int>(std::floor(f * 100.0));
  if (p.total_bytes() != 0) {
    return fmt::format("{} nodes ({}%), {} nodes/s", p.nodes(), percent, rate);
  }
  if (p.total_nodes() != 0) {
    return fmt::format("{} of {} nodes ({}%), {} nodes/s", p.nodes(), p.total_nodes(), percent,
                       rate);
  }
  return fmt::format("{} nodes, {} nodes/s", p.nodes(), rate);
}

TerminalProgress::TerminalProgress(std::string name, std::FILE* out)
    : name_(std::move(name)),
      out_(out),
      start_(Clock::now()),
      delay_(std::chrono::milliseconds(ProgressDelayMs())) {
  PollAt(0);
}

TerminalProgress::~TerminalProgress() { Clear(); }

void TerminalProgress::OnPoll() {
  PollAt(nodes() + kPollEvery);
  Clock::time_point now = Clock::now();
  if (drawn_once_ ? now - last_draw_ >= kRedrawEvery : now - start_ >= delay_) Draw(now);
}

void TerminalProgress::Draw(Clock::time_point now) {
  double seconds = std::chrono::duration<double>(now - start_).count();
  std::string line = name_ + ": " + FormatProgress(*this, seconds);
  // A line wider than the terminal would wrap, and "\r" would then redraw
  // only its last part.
  struct winsize ws;
  if (ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && line.size() >= ws.ws_col) {
    line.resize(ws.ws_col - 1u);
  }
  std::fprintf(out_, "\r%s\x1b[K", line.c_str());
  std::fflush(out_);
  shown_ = true;
  drawn_once_ = true;
  last_draw_ = now;
}

void TerminalProgress::Stop() {
  Clear();
  PollAt(~uint64_t{0});
}

void TerminalProgress::Clear() {
  if (!shown_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  shown_ = false;
}

}  // namespace irt::tools
