// Reading a trace's bytes from a file descriptor, decompressing them when
// they are zstd-compressed (a trace written to "*.zst", or piped through
// zstd(1)). Internal to libtrace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "irt/status.h"

struct ZSTD_DCtx_s;

namespace irt::internal {

/// Whether `p` (at least 4 bytes) starts a zstd frame: a compressed frame
/// (magic 0xFD2FB528) or a skippable one (0x184D2A50 to 0x184D2A5F), both
/// little-endian (RFC 8878).
bool IsZstdMagic(const uint8_t* p);

class ByteSource {
 public:
  /// Reads from `fd` (not owned). Error messages are bare ("compressed
  /// input ends inside a zstd frame ..."): the caller says where.
  explicit ByteSource(int fd);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  /// Reads up to n bytes into dst; fewer only at the end of the input
  /// (0: the end). A compressed input that ends inside a frame, or is
  /// corrupted, is a kDataError naming the decompressed offset; every byte
  /// decompressed before the damage is returned first (a truncated stream
  /// gives all it holds, then the error), so the complete chunks of a
  /// stream whose writer died can be read.
  Result<size_t> Read(void* dst, size_t n);
  /// Whether the input turned out to be zstd-compressed (known after the
  /// first Read).
  bool compressed() const { return zstd_; }
  /// Whether Read failed because the compressed input ends inside a frame.
  bool truncated() const { return truncated_; }

 private:
  Result<size_t> FillRaw();  // more raw input into in_; 0 at its end
  int fd_;
  bool started_ = false;
  bool truncated_ = false;
  Status pending_;  // an error to report once the bytes before it are read
  bool zstd_ = false;
  bool in_eof_ = false;
  size_t frame_left_ = 0;  // zstd's hint: nonzero while a frame is open
  uint64_t out_total_ = 0;
  std::unique_ptr<uint8_t[]> in_;
  size_t in_cap_ = 0, in_pos_ = 0, in_len_ = 0;
  ::ZSTD_DCtx_s* dctx_ = nullptr;
};

}  // namespace irt::internal
