// ChunkStream (irt/trace.h): sequential access to the chunks of a file or a
// pipe, with memory bounded by two chunks, each verified as it is read (the
// next one on a second thread while this one is verified here).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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
  // One chunk as read: its bytes, the checker's facts and its columns.
  struct Slot {
    std::vector<uint8_t> buf;
    ChunkFacts facts;
    internal::ChunkColumns columns;
    ChunkInfo info;
    uint64_t number = 0;      // its position in the input
    uint64_t end_offset = 0;  // bytes read through it
    Status status;            // why it cannot be returned
  };

  std::string name;
  int fd = -1;
  bool owned_fd = false;
  std::unique_ptr<internal::ByteSource> src;  // decompresses a zstd input
  uint64_t offset = 0;
  uint64_t number = 0;
  NodeId base = 0;
  bool done = false;
  uint64_t file_size = 0;  // of a regular file, 0 for a pipe
  Progress* progress = nullptr;
  // Two chunks at a time on two cores: Next reads chunk k into slots[0]
  // and k + 1 into slots[1], verifies k while the worker thread verifies
  // k + 1, returns k, and returns k + 1 on the next call.
  Slot slots[2];
  Slot* cur = &slots[0];
  bool ahead = false;    // read and verify two chunks at a time
  bool pending = false;  // slots[1] holds the next chunk, handed to the worker
  std::thread worker;
  std::mutex mu;
  std::condition_variable cv;
  bool job = false, quit = false;

  ~Impl() {
    if (worker.joinable()) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !job; });
        quit = true;
      }
      cv.notify_all();
      worker.join();
    }
    if (owned_fd && fd >= 0) close(fd);
  }

  // Reads exactly n bytes into buf at `at`, growing it as data arrives (so a
  // hostile size prefix cannot make us allocate what is not there). Returns
  // the number of bytes read.
  Result<size_t> ReadFully(std::vector<uint8_t>& buf, size_t at, size_t n) {
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

  // Reads the next chunk into `s` and checks its framing; at the final
  // chunk, that nothing follows it. Any error ends the stream.
  Status Read(Slot& s);
  // Checks the chunk in `s` and all its nodes (internal::VerifyChunk).
  Status Verify(Slot& s) {
    Status vs = internal::VerifyChunk(s.buf.data(), s.info.size + 4, &s.facts);
    if (vs.ok()) return vs;
    return DataError(name + ": " +
                     internal::ChunkError(s.number, s.info.offset, s.facts, vs.message()));
  }
  // Hands out a verified chunk.
  const internal::ChunkColumns* Give(Slot& s) {
    cur = &s;
    if (progress != nullptr) progress->Add(s.info.num_nodes, 4 + s.info.size);
    internal::BuildColumns(fb::GetSizePrefixedChunk(s.buf.data()), s.info, s.facts, &s.columns);
    return &s.columns;
  }
  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return job || quit; });
      if (!job) return;
      lock.unlock();
      Status st;
      try {
        st = Verify(slots[1]);
      } catch (const std::bad_alloc&) {
        st = IoError(name + ": out of memory verifying chunk " + std::to_string(slots[1].number));
      }
      lock.lock();
      slots[1].status = std::move(st);
      job = false;
      cv.notify_all();
    }
  }
  // Waits for the worker's verification of slots[1].
  void Collect() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !job; });
  }
};

ChunkStream::ChunkStream() : impl_(new Impl) {}
ChunkStream::ChunkStream(ChunkStream&&) noexcept = default;
ChunkStream& ChunkStream::operator=(ChunkStream&&) noexcept = default;
ChunkStream::~ChunkStream() = default;

const std::string& ChunkStream::name() const { return impl_->name; }
const ChunkInfo& ChunkStream::info() const { return impl_->cur->info; }
uint64_t ChunkStream::bytes_read() const { return impl_->cur->end_offset; }
std::span<const uint8_t> ChunkStream::chunk_bytes() const {
  const Impl::Slot& s = *impl_->cur;
  return {s.buf.data(), static_cast<size_t>(s.info.size + 4)};
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
  // A file of a few chunks is checked before a second thread would pay for
  // its start and the second chunk's fresh memory; a pipe may be long.
  constexpr uint64_t kAheadBytes = uint64_t{8} << 20;
  m.ahead =
      (m.file_size == 0 || m.file_size >= kAheadBytes) && std::thread::hardware_concurrency() >= 2;
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

Status ChunkStream::Impl::Read(Slot& slot) {
  Impl& m = *this;
  std::vector<uint8_t>& buf = slot.buf;
  uint64_t len = 0, have = 0, need = 12;
  ChunkHeader h;
  std::string where = "chunk " + std::to_string(m.number) + " at byte " + std::to_string(m.offset);
  // The buffer grows only as bytes arrive, and the chunk's framing and header
  // are checked as soon as they are in, so a size prefix that claims more
  // than is there costs nothing.
  for (bool ended = false;;) {
    if (have < need) {
      auto got = m.ReadFully(buf, have, need - have);
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
    Status s = FrameChunk(buf.data(), have, ended, m.offset, m.number, m.base, &len, &h, &need);
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
  slot.number = m.number;
  slot.info.offset = m.offset;
  slot.info.size = len;
  slot.info.index = h.index;
  slot.info.base = h.base;
  slot.info.num_nodes = h.num_nodes;
  slot.info.base_depth = h.base_depth;
  slot.info.last = h.last;
  m.offset += 4 + len;
  slot.end_offset = m.offset;
  m.base += h.num_nodes;
  ++m.number;
  if (h.last) {
    m.done = true;
    uint8_t extra;
    Result<size_t> more = m.src->Read(&extra, 1);
    if (!more) return more.error().Prefixed(m.name + ": after the final chunk");
    if (*more > 0) return DataError(m.name + ": data after the final chunk");
  }
  return Status::Ok();
}

Result<const internal::ChunkColumns*> ChunkStream::Next() {
  Impl& m = *impl_;
  if (m.pending) {
    // The chunk after the one returned last, read then; verified meanwhile.
    m.Collect();
    m.pending = false;
    Impl::Slot& b = m.slots[1];
    m.done = !b.status.ok() || b.info.last;
    if (!b.status.ok()) return b.status;
    return m.Give(b);
  }
  if (m.done) return static_cast<const internal::ChunkColumns*>(nullptr);
  Impl::Slot& a = m.slots[0];
  IRT_RETURN_IF_ERROR(m.Read(a));
  if (!m.done && m.ahead) {
    // Read the next chunk too and have the worker verify it while this
    // thread verifies this one. Its errors wait for their turn.
    Impl::Slot& b = m.slots[1];
    b.status = m.Read(b);
    m.pending = true;
    m.done = false;  // until the next call returns b (or its error)
    if (b.status.ok()) {
      if (!m.worker.joinable()) m.worker = std::thread([&m] { m.WorkerLoop(); });
      {
        std::lock_guard<std::mutex> lock(m.mu);
        m.job = true;
      }
      m.cv.notify_all();
    }
  }
  Status vs = m.Verify(a);
  if (!vs.ok()) {
    if (m.pending) m.Collect();
    m.pending = false;
    m.done = true;
    return vs;
  }
  return m.Give(a);
}

}  // namespace irt
