// ChunkStream (irt/trace.h): sequential access to the chunks of a file or a
// pipe, with memory bounded by one chunk, each verified as it is read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "io/bytesource.h"
#include "io/chunk.h"
#include "io/column_reader.h"
#include "irt/trace.h"
#include "irtrace_generated.h"

namespace irt {

using internal::ChunkFacts;
using internal::ChunkHeader;
using internal::DisplayName;
using internal::FrameChunk;

struct ChunkStream::Impl {
  std::string name;
  int fd = -1;
  bool owned_fd = false;
  std::unique_ptr<internal::ByteSource> src;  // decompresses a zstd input
  std::vector<uint8_t> buf;
  uint64_t offset = 0;
  uint64_t number = 0;
  NodeId base = 0;
  bool done = false;
  uint64_t file_size = 0;  // of a regular file, 0 for a pipe
  Progress* progress = nullptr;
  ChunkInfo info;
  ChunkFacts facts;
  internal::ChunkColumns columns;

  ~Impl() {
    if (owned_fd && fd >= 0) close(fd);
  }

  // Reads exactly n bytes into buf at `at`, growing it as data arrives (so a
  // hostile size prefix cannot make us allocate what is not there). Returns
  // the number of bytes read.
  Result<size_t> ReadFully(size_t at, size_t n) {
    size_t got = 0;
    while (got < n) {
      size_t step = std::min<size_t>(n - got, 1 << 20);
      if (buf.size() < at + got + step) buf.resize(at + got + step);
      IRT_ASSIGN_OR_RETURN(size_t r, src->Read(buf.data() + at + got, step));
      if (r == 0) break;
      got += r;
    }
    return got;
  }
};

ChunkStream::ChunkStream() : impl_(new Impl) {}
ChunkStream::ChunkStream(ChunkStream&&) noexcept = default;
ChunkStream& ChunkStream::operator=(ChunkStream&&) noexcept = default;
ChunkStream::~ChunkStream() = default;

const std::string& ChunkStream::name() const { return impl_->name; }
const ChunkInfo& ChunkStream::info() const { return impl_->info; }
uint64_t ChunkStream::bytes_read() const { return impl_->offset; }
std::span<const uint8_t> ChunkStream::chunk_bytes() const {
  return {impl_->buf.data(), static_cast<size_t>(impl_->info.size + 4)};
}

Result<ChunkStream> ChunkStream::Open(const std::string& path, Progress* progress) {
  return OpenAs(path, DisplayName(path), progress);
}

Result<ChunkStream> ChunkStream::OpenAs(const std::string& path, const std::string& name,
                                        Progress* progress) {
  ChunkStream s;
  Impl& m = *s.impl_;
  m.name = name;
  m.progress = progress;
  int fd = STDIN_FILENO;
  if (path != "-") {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return IoError(m.name + ": cannot open: " + strerror(errno));
    m.owned_fd = true;
  }
  m.fd = fd;
  m.src = std::make_unique<internal::ByteSource>(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) return IoError(m.name + ": cannot stat: " + strerror(errno));
  if (S_ISDIR(st.st_mode)) return IoError(m.name + ": is a directory");
  if (S_ISREG(st.st_mode) && st.st_size == 0) {
    return DataError(m.name + ": empty input, not a trace");
  }
  if (S_ISREG(st.st_mode)) m.file_size = static_cast<uint64_t>(st.st_size);
  if (progress != nullptr && m.file_size != 0) {
    // The bytes left to read, unless they are compressed (then their count
    // says nothing of how much of the trace is left). Counted at once, so
    // that a caller that opens a file for two passes before the first has
    // the whole total from the start.
    off_t at = lseek(fd, 0, SEEK_CUR);
    uint8_t magic[4];
    if (at >= 0 && static_cast<uint64_t>(at) < m.file_size &&
        pread(fd, magic, sizeof(magic), at) == static_cast<ssize_t>(sizeof(magic)) &&
        !internal::IsZstdMagic(magic)) {
      progress->AddTotal(0, m.file_size - static_cast<uint64_t>(at));
    }
  }
  // Regular files are read like pipes, into one reused buffer: memory stays
  // bounded by the largest chunk (a mapping would count every page touched).
  return s;
}

Result<const internal::ChunkColumns*> ChunkStream::Next() {
  Impl& m = *impl_;
  if (m.done) return static_cast<const internal::ChunkColumns*>(nullptr);
  uint64_t len = 0, have = 0, need = 12;
  ChunkHeader h;
  std::string where = "chunk " + std::to_string(m.number) + " at byte " + std::to_string(m.offset);
  // The buffer grows only as bytes arrive, and the chunk's framing and header
  // are checked as soon as they are in, so a size prefix that claims more
  // than is there costs nothing.
  for (bool ended = false;;) {
    if (have < need) {
      auto got = m.ReadFully(have, need - have);
      if (!got) {
        m.done = true;
        return Status(got.error().code(), m.name + ": " + where + ": " + got.error().message());
      }
      have += *got;
      ended = have < need;
    }
    if (have == 0) {
      m.done = true;
      if (m.number == 0) return DataError(m.name + ": empty input, not a trace");
      return DataError(m.name + ": trace is incomplete: no final chunk after " +
                       std::to_string(m.number) + " chunks (the writer did not finish)");
    }
    Status s = FrameChunk(m.buf.data(), have, ended, m.offset, m.number, m.base, &len, &h, &need);
    if (!s.ok()) {
      m.done = true;
      return Status(s.code(), m.name + ": " + s.message());
    }
    if (need == 0) break;
    // A plain regular file says at once whether the claimed size is there.
    if (len != 0 && m.file_size != 0 && !m.src->compressed() && m.offset + 4 + len > m.file_size) {
      m.done = true;
      return DataError(m.name + ": " + where + " is truncated: it needs " + std::to_string(len) +
                       " bytes, " + std::to_string(m.file_size - m.offset - 4) + " remain");
    }
    // Read on in steps of up to 1 MiB (at least what the header needs).
    if (len != 0) need = std::min<uint64_t>(4 + len, std::max<uint64_t>(need, have + (1 << 20)));
  }
  const uint8_t* p = m.buf.data();
  Status vs = internal::VerifyChunk(p, len + 4, &m.facts);
  if (!vs.ok()) {
    m.done = true;
    return DataError(m.name + ": " +
                     internal::ChunkError(m.number, m.offset, m.facts, vs.message()));
  }
  m.info.offset = m.offset;
  m.info.size = len;
  m.info.index = h.index;
  m.info.base = h.base;
  m.info.num_nodes = h.num_nodes;
  m.info.base_depth = h.base_depth;
  m.info.last = h.last;
  m.offset += 4 + len;
  m.base += h.num_nodes;
  ++m.number;
  if (m.progress != nullptr) m.progress->Add(h.num_nodes, 4 + len);
  if (h.last) {
    m.done = true;
    uint8_t extra;
    Result<size_t> more = m.src->Read(&extra, 1);
    if (!more) return more.error().Prefixed(m.name + ": after the final chunk");
    if (*more > 0) return DataError(m.name + ": data after the final chunk");
  }
  internal::BuildColumns(fb::GetSizePrefixedChunk(p), m.info, m.facts, &m.columns);
  return &m.columns;
}

}  // namespace irt
