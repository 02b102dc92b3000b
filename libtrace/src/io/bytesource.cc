#include "io/bytesource.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>

namespace irt::internal {

bool IsZstdMagic(const uint8_t* p) {
  if (p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD) return true;
  return (p[0] & 0xF0) == 0x50 && p[1] == 0x2A && p[2] == 0x4D && p[3] == 0x18;
}

ByteSource::ByteSource(int fd) : fd_(fd) {}

ByteSource::~ByteSource() { ZSTD_freeDCtx(dctx_); }

Result<size_t> ByteSource::FillRaw() {
  if (in_eof_) return size_t{0};
  if (in_pos_ == in_len_) in_pos_ = in_len_ = 0;
  for (;;) {
    ssize_t r = read(fd_, in_.get() + in_len_, in_cap_ - in_len_);
    if (r < 0) {
      if (errno == EINTR) continue;
      return IoError(std::string("read failed: ") + strerror(errno));
    }
    if (r == 0) in_eof_ = true;
    in_len_ += static_cast<size_t>(r);
    return static_cast<size_t>(r);
  }
}

Result<size_t> ByteSource::Read(void* dst, size_t n) {
  if (!pending_.ok()) return pending_;
  if (!started_) {
    started_ = true;
    in_cap_ = std::max<size_t>(ZSTD_DStreamInSize(), 4);
    in_.reset(new uint8_t[in_cap_]);
    // Up to 4 bytes to tell a zstd frame from a trace.
    while (in_len_ < 4 && !in_eof_) IRT_RETURN_IF_ERROR(FillRaw().status());
    if (in_len_ >= 4 && IsZstdMagic(in_.get())) {
      zstd_ = true;
      dctx_ = ZSTD_createDCtx();
      if (dctx_ == nullptr) return IoError("cannot set up zstd decompression");
    }
  }
  uint8_t* out = static_cast<uint8_t*>(dst);
  if (!zstd_) {
    size_t got = std::min(n, in_len_ - in_pos_);
    memcpy(out, in_.get() + in_pos_, got);
    in_pos_ += got;
    while (got < n) {
      ssize_t r = read(fd_, out + got, n - got);
      if (r < 0) {
        if (errno == EINTR) continue;
        return IoError(std::string("read failed: ") + strerror(errno));
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    return got;
  }
  ZSTD_outBuffer zo{out, n, 0};
  while (zo.pos < zo.size) {
    if (in_pos_ == in_len_ && !in_eof_) {
      Result<size_t> r = FillRaw();
      if (!r) {
        pending_ = r.error();
        break;
      }
    }
    ZSTD_inBuffer zi{in_.get(), in_len_, in_pos_};
    size_t before = zo.pos, consumed_from = in_pos_;
    size_t ret = ZSTD_decompressStream(dctx_, &zo, &zi);
    in_pos_ = zi.pos;
    if (ZSTD_isError(ret)) {
      pending_ = DataError("corrupted zstd data after " + std::to_string(out_total_ + zo.pos) +
                           " decompressed bytes: " + ZSTD_getErrorName(ret));
      break;
    }
    // A call that moved nothing says nothing about the frame (after a
    // finished frame it would announce the next one).
    bool moved = zo.pos != before || in_pos_ != consumed_from;
    if (moved) frame_left_ = ret;
    if (in_eof_ && in_pos_ == in_len_ && !moved) {
      // All input read and nothing more comes out: a clean end only
      // between frames.
      if (frame_left_ != 0) {
        truncated_ = true;
        pending_ = DataError("compressed input ends inside a zstd frame (truncated), after " +
                             std::to_string(out_total_ + zo.pos) + " decompressed bytes");
      }
      break;
    }
  }
  out_total_ += zo.pos;
  // The bytes that came out before a failure are good as far as zstd can
  // tell (a frame's checksum is only checked at its end): hand them out,
  // and the error with the next call.
  if (zo.pos == 0 && !pending_.ok()) return pending_;
  return zo.pos;
}

}  // namespace irt::internal
