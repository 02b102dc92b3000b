// Buffered output to stdout or to a file that appears atomically: written to
// a temporary file next to the target and renamed over it only on Commit(),
// so a tool that fails leaves no half-written output behind.
#ifndef IRT_OUTPUT_H_
#define IRT_OUTPUT_H_

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "irt/status.h"

struct ZSTD_CCtx_s;

namespace irt {

class Output {
 public:
  /// "-" means standard output. A FIFO or device is written in place.
  /// Otherwise creates "<path>.tmpXXXXXX" next to path; Commit() renames it
  /// to path, destruction without Commit() removes it, and so does SIGINT,
  /// SIGTERM, SIGHUP or SIGABRT (the process then dies of that signal). A path ending in
  /// ".zst" is written zstd-compressed (one frame; every reader of this
  /// library decompresses it transparently).
  static Result<std::unique_ptr<Output>> Open(const std::string& path);
  /// An output that keeps what is written in memory (memory()).
  static std::unique_ptr<Output> Memory();
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void Write(std::string_view s);
  void Write(const void* data, size_t n);
  void Put(char c) {
    if (len_ == sizeof(buf_)) Flush();
    buf_[len_++] = c;
  }
  Output& operator<<(std::string_view s) {
    Write(s);
    return *this;
  }
  /// Pushes buffered bytes to the file descriptor. Errors are sticky.
  void Flush();
  /// Flushes, closes and (for files) renames into place. Returns the first
  /// write error (kIoError); when the reader went away, reader_gone() says so.
  Status Commit();
  /// True when the target is a terminal (binary output is refused there).
  bool IsTerminal() const;
  const std::string& path() const { return path_; }
  /// Whether a write error has happened already (callers may stop early).
  bool failed() const { return err_ != 0; }
  /// Whether writing failed because the reading end of a pipe or FIFO was
  /// closed (EPIPE, as with `| head`): not worth a message, since whoever
  /// reads has what it wanted.
  bool reader_gone() const { return err_ == EPIPE; }
  /// Bytes written to the file descriptor (after compression).
  uint64_t bytes_written() const { return written_; }
  bool compressed() const { return zctx_ != nullptr; }
  /// What a Memory() output holds.
  const std::string& memory() const { return memory_; }

 private:
  Output() = default;
  void WriteRaw(const char* p, size_t n);
  // Passes n bytes on, compressed if this output compresses; `end` ends the
  // compressed frame.
  void Emit(const char* p, size_t n, bool end);
  int fd_ = -1;
  bool is_stdout_ = false;
  bool direct_ = false;  // a FIFO or device, written in place
  bool in_memory_ = false;
  std::string memory_;
  bool committed_ = false;
  int err_ = 0;
  uint64_t written_ = 0;
  std::string path_, tmp_path_;
  size_t len_ = 0;
  ::ZSTD_CCtx_s* zctx_ = nullptr;
  std::unique_ptr<char[]> zbuf_;
  size_t zbuf_size_ = 0;
  char buf_[1 << 16];
};

}  // namespace irt

#endif  // IRT_OUTPUT_H_
