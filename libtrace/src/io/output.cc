#include "irt/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <thread>

#include "io/tempfile.h"

namespace irt {

namespace {

// Level 3 (zstd's default): W1's 172 MB trace becomes 25 MB in about 0.3 s.
constexpr int kZstdLevel = 3;

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix.data(), suffix.size()) == 0;
}

// The regular file a rename is about to replace, held open so that the
// rename drops only its name; -1 when there is none worth holding (small,
// not a regular file, or linked elsewhere too).
int HoldReplaced(const std::string& path) {
  constexpr off_t kWorthHolding = off_t{1} << 20;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
      st.st_size < kWorthHolding) {
    close(fd);
    return -1;
  }
  return fd;
}

// Closing the last reference to a replaced file is when the kernel frees
// its pages, which takes time in proportion to its size. A thread of its
// own does that beside the caller (or the process's exit does, if it
// comes first).
void ReleaseReplaced(int fd) {
  if (fd < 0) return;
  try {
    std::thread([fd] { close(fd); }).detach();
  } catch (...) {
    close(fd);
  }
}

}  // namespace

Result<std::unique_ptr<Output>> Output::Open(const std::string& path) {
  std::unique_ptr<Output> out(new Output());
  out->path_ = path;
  if (path != "-" && EndsWith(path, ".zst")) {
    out->zctx_ = ZSTD_createCCtx();
    if (out->zctx_ == nullptr) return IoError("'" + path + "': cannot set up zstd compression");
    ZSTD_CCtx_setParameter(out->zctx_, ZSTD_c_compressionLevel, kZstdLevel);
    ZSTD_CCtx_setParameter(out->zctx_, ZSTD_c_checksumFlag, 1);
    // Compression runs beside the producer (a no-op where libzstd has no threads).
    ZSTD_CCtx_setParameter(out->zctx_, ZSTD_c_nbWorkers, 1);
    out->zbuf_size_ = ZSTD_CStreamOutSize();
    out->zbuf_.reset(new char[out->zbuf_size_]);
  }
  if (path == "-") {
    out->fd_ = STDOUT_FILENO;
    out->is_stdout_ = true;
    return out;
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return IoError("'" + path + "': is a directory");
  }
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A FIFO or a device (/dev/null): write into it; there is nothing to
    // replace atomically.
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return IoError("'" + path + "': cannot open: " + strerror(errno));
    out->fd_ = fd;
    out->direct_ = true;
    return out;
  }
  // The temporary is registered for removal should a signal end the
  // process before Commit() or the destructor does.
  IRT_ASSIGN_OR_RETURN(out->fd_, internal::CreateTempNextTo(path, &out->tmp_path_));
  return out;
}

std::unique_ptr<Output> Output::Memory() {
  std::unique_ptr<Output> out(new Output());
  out->path_ = "<memory>";
  out->in_memory_ = true;
  return out;
}

Output::~Output() {
  ZSTD_freeCCtx(zctx_);
  if (!is_stdout_ && fd_ >= 0) {
    close(fd_);
    if (!committed_ && !direct_) {
      unlink(tmp_path_.c_str());
      internal::UnregisterTemp(tmp_path_);
    }
  }
}

void Output::Write(std::string_view s) { Write(s.data(), s.size()); }

void Output::Write(const void* data, size_t n) {
  if (err_ != 0 || n == 0) return;
  const char* p = static_cast<const char*>(data);
  if (len_ + n <= sizeof(buf_)) {
    memcpy(buf_ + len_, p, n);
    len_ += n;
    return;
  }
  Flush();
  if (n >= sizeof(buf_)) {
    Emit(p, n, false);
    return;
  }
  memcpy(buf_, p, n);
  len_ = n;
}

void Output::Flush() {
  Emit(buf_, len_, false);
  len_ = 0;
}

void Output::Emit(const char* p, size_t n, bool end) {
  if (zctx_ == nullptr) {
    WriteRaw(p, n);
    return;
  }
  ZSTD_inBuffer in{p, n, 0};
  ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_continue;
  for (;;) {
    if (err_ != 0) return;
    ZSTD_outBuffer zo{zbuf_.get(), zbuf_size_, 0};
    size_t left = ZSTD_compressStream2(zctx_, &zo, &in, mode);
    if (ZSTD_isError(left)) {
      err_ = EIO;
      return;
    }
    WriteRaw(zbuf_.get(), zo.pos);
    if (end ? left == 0 : in.pos == in.size) return;
  }
}

void Output::WriteRaw(const char* p, size_t n) {
  if (in_memory_) {
    memory_.append(p, n);
    written_ += n;
    return;
  }
  while (n > 0 && err_ == 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      err_ = errno;
      break;
    }
    p += w;
    n -= static_cast<size_t>(w);
    written_ += static_cast<uint64_t>(w);
  }
}

bool Output::IsTerminal() const { return !in_memory_ && isatty(fd_) != 0; }

Status Output::Commit() {
  Flush();
  if (zctx_ != nullptr && !committed_) Emit(nullptr, 0, true);
  std::string name = is_stdout_ ? "<stdout>" : "'" + path_ + "'";
  if (err_ != 0) return IoError(name + ": write failed: " + strerror(err_));
  if (is_stdout_ || committed_ || in_memory_) return Status::Ok();
  if (direct_) {
    int rc = close(fd_);
    fd_ = -1;
    committed_ = true;
    if (rc != 0) return IoError(name + ": write failed: " + strerror(errno));
    return Status::Ok();
  }
  if (close(fd_) != 0) {
    fd_ = -1;
    unlink(tmp_path_.c_str());
    internal::UnregisterTemp(tmp_path_);
    return IoError(name + ": write failed: " + strerror(errno));
  }
  fd_ = -1;
  int replaced = HoldReplaced(path_);
  if (rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    if (replaced >= 0) close(replaced);
    unlink(tmp_path_.c_str());
    internal::UnregisterTemp(tmp_path_);
    return IoError(name + ": cannot rename into place: " + strerror(e));
  }
  // A signal between the rename and here finds no temporary to remove.
  internal::UnregisterTemp(tmp_path_);
  committed_ = true;
  ReleaseReplaced(replaced);
  return Status::Ok();
}

}  // namespace irt
