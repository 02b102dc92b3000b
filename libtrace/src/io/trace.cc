// Trace (random access over a mapped file) and ChunkStream (sequential,
// bounded memory). Opening hops the size prefixes and reads each chunk's
// header with hand-checked offsets; a chunk is verified completely the first
// time one of its nodes is used.
#include "irt/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>

#include "io/bytesource.h"
#include "io/chunk.h"
#include "io/column_reader.h"
#include "io/packed.h"
#include "io/tempfile.h"

namespace irt {

using internal::At;
using internal::ChunkFacts;
using internal::ChunkHeader;
using internal::DisplayName;
using internal::FrameChunk;

std::string_view NodeKindName(NodeKind k) {
  switch (k) {
    case NodeKind::kArgument:
      return "Argument";
    case NodeKind::kConstant:
      return "Constant";
    case NodeKind::kPrimitive:
      return "Primitive";
    case NodeKind::kCall:
      return "Call";
    case NodeKind::kSpecial:
      return "Special";
    case NodeKind::kJump:
      return "Jump";
    case NodeKind::kReturn:
      return "Return";
    case NodeKind::kError:
      return "Error";
  }
  return "?";
}

namespace {

// A read-only mapping of a file, or of standard input copied to an unlinked
// temporary file when it is a pipe or terminal.
struct Mapping {
  const uint8_t* data = nullptr;
  size_t size = 0;
  void* map = nullptr;
  ~Mapping() {
    if (map != nullptr) munmap(map, size);
  }
};

// Copies the input at `in` (decompressing it if it is zstd-compressed) into
// an unlinked temporary file, and returns that file's descriptor. The chunks
// are checked as they arrive, so that an endless or hostile input (/dev/zero,
// a small zstd frame of gigabytes of zeros) is refused at its first bad
// chunk rather than copied whole: each chunk's framing and header as soon as
// its first bytes are in (the size prefix, the identifier, the root table,
// the version, its number and first node), and each complete chunk is
// verified before the next one is accepted. So no more than one chunk's
// claimed size (at most kMaxChunkBytes) is ever spooled beyond what has
// proved to be a trace. With `allow_partial`, an input that ends inside a
// chunk or inside a zstd frame keeps its complete chunks.
Result<int> SpoolToTempFile(int in, const std::string& name, bool allow_partial) {
  // How much of a chunk's beginning is looked at before it is complete.
  constexpr size_t kHeadBytes = 4 + internal::kMaxRootBytes;
  // Bytes after the final chunk that are still spooled, to be counted by
  // the error; more end the copy.
  constexpr uint64_t kMaxTrailing = 64 << 10;
  IRT_ASSIGN_OR_RETURN(int fd, internal::CreateSpoolFile("a copy of " + name));
  struct FdGuard {
    int fd;
    ~FdGuard() {
      if (fd >= 0) close(fd);
    }
  } guard{fd};
  internal::ByteSource src(in);
  std::vector<uint8_t> buf(1 << 20), head;
  uint64_t spooled = 0;    // bytes in the file
  uint64_t chunk_off = 0;  // where the chunk being received starts
  uint64_t number = 0, len = 0;
  NodeId base = 0;
  bool head_checked = false, final_seen = false;
  const long page = sysconf(_SC_PAGESIZE);
  auto where = [&] {
    return name + ": chunk " + std::to_string(number) + " at byte " + std::to_string(chunk_off);
  };
  // Checks what the bytes received so far allow.
  auto check = [&]() -> Status {
    for (;;) {
      uint64_t avail = spooled - chunk_off;
      if (final_seen) {
        if (avail > kMaxTrailing) return DataError(name + ": data after the final chunk");
        return Status::Ok();
      }
      ChunkHeader h;
      uint64_t need = 0;
      if (!head_checked) {
        head.resize(std::min<uint64_t>(avail, kHeadBytes));
        if (pread(fd, head.data(), head.size(), static_cast<off_t>(chunk_off)) !=
            static_cast<ssize_t>(head.size())) {
          return IoError(name + ": cannot read back the temporary copy: " + strerror(errno));
        }
        Status s = FrameChunk(head.data(), head.size(), /*ended=*/false, chunk_off, number, base,
                              &len, &h, &need);
        if (!s.ok()) return s.Prefixed(name);
        if (need > head.size() && need <= kHeadBytes && need != 4 + len) return Status::Ok();
        // The header is read, or lies too far in to wait for: the complete
        // chunk is checked in full below.
        head_checked = true;
      }
      if (avail < 4 + len) return Status::Ok();
      // Complete: map it from the file and verify it.
      uint64_t map_off = chunk_off - chunk_off % static_cast<uint64_t>(page);
      size_t map_len = static_cast<size_t>(chunk_off - map_off + 4 + len);
      void* map = mmap(nullptr, map_len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(map_off));
      if (map == MAP_FAILED) {
        return IoError(name + ": cannot map the temporary copy: " + strerror(errno));
      }
      const uint8_t* p = static_cast<const uint8_t*>(map) + (chunk_off - map_off);
      uint64_t len2 = 0;
      Status s = FrameChunk(p, 4 + len, /*ended=*/true, chunk_off, number, base, &len2, &h, &need);
      internal::ChunkFacts facts;
      if (s.ok()) {
        s = internal::VerifyChunk(p, 4 + len, &facts);
        if (!s.ok()) s = DataError(where() + ": " + s.message());
      } else {
        s = s.Prefixed(name);
      }
      munmap(map, map_len);
      if (!s.ok()) return s;
      chunk_off += 4 + len;
      base += h.num_nodes;
      ++number;
      final_seen = h.last;
      head_checked = false;
      len = 0;
    }
  };
  for (;;) {
    Result<size_t> got = src.Read(buf.data(), buf.size());
    if (!got) {
      if (src.truncated() && allow_partial && number > 0) {
        // The writer died: keep the complete chunks.
        if (ftruncate(fd, static_cast<off_t>(chunk_off)) != 0) {
          return IoError(name + ": cannot cut the temporary copy: " + strerror(errno));
        }
        break;
      }
      return Status(got.error().code(), where() + ": " + got.error().message());
    }
    if (*got == 0) break;
    if (int e = internal::WriteAll(fd, buf.data(), *got); e != 0) {
      return IoError(name + ": cannot spool to a temporary file: " + strerror(e));
    }
    spooled += *got;
    IRT_RETURN_IF_ERROR(check());
  }
  guard.fd = -1;
  return fd;
}

// Whether the regular file at fd starts with a zstd frame.
bool StartsCompressed(int fd) {
  uint8_t magic[4];
  return pread(fd, magic, 4, 0) == 4 && internal::IsZstdMagic(magic);
}

Status MapPath(const std::string& path, bool allow_partial, Mapping* m) {
  std::string name = DisplayName(path);
  int fd;
  bool owned = true;
  if (path == "-") {
    fd = STDIN_FILENO;
    owned = false;
  } else {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return IoError(name + ": cannot open: " + strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    if (owned) close(fd);
    return IoError(name + ": cannot stat: " + strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    if (owned) close(fd);
    return IoError(name + ": is a directory");
  }
  if (!S_ISREG(st.st_mode) || StartsCompressed(fd)) {
    auto spooled = SpoolToTempFile(fd, name, allow_partial);
    if (owned) close(fd);
    if (!spooled) return spooled.error();
    fd = *spooled;
    owned = true;
    fstat(fd, &st);
  }
  m->size = static_cast<size_t>(st.st_size);
  if (m->size == 0) {
    if (owned) close(fd);
    return DataError(name + ": empty input, not a trace");
  }
  void* p = mmap(nullptr, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  if (owned) close(fd);
  if (p == MAP_FAILED) return IoError(name + ": cannot map: " + strerror(e));
  m->map = p;
  m->data = static_cast<const uint8_t*>(p);
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------- Trace

struct Trace::Impl {
  std::string name;
  Mapping mapping;
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::vector<ChunkInfo> chunks;
  bool complete = false;
  // Lazy verification state per chunk: 0 unverified, 1 good, 2 bad, 3
  // being verified. Atomic for the verifier thread (VerifyAhead): a thread
  // claims a chunk (0 to 3) before verifying it, and publishes it with a
  // release store once its error, facts and columns are written.
  mutable std::unique_ptr<std::atomic<uint8_t>[]> state;
  // Chunks whose nodes the progress counter has had (on the caller's thread).
  mutable std::vector<uint8_t> reported;
  mutable std::vector<Status> errors;
  mutable std::vector<ChunkFacts> facts;
  mutable internal::DecodeArena arena;                  // the decoded columns of format-2 chunks
  mutable std::vector<internal::ChunkColumns> columns;  // built once a chunk is verified
  // The chunks verified in order from chunk 0, fed to a stack of open calls
  // that checks the closers linking into earlier chunks (what CheckTrace
  // checks): a tool that reads every chunk gets irt-check's verdict.
  mutable std::atomic<uint32_t> frontier{0};
  mutable internal::CallStack calls;
  mutable std::mutex frontier_mu;  // both threads verify chunks (VerifyAhead)
  mutable uint32_t fed_bad = ~0u;  // the chunk that failed there, if one did
  Progress* progress = nullptr;
  // The verifier thread of VerifyAhead: while it runs, it verifies chunks
  // in order, and VerifyChunk verifies the chunk it needs (or, while that
  // one is being verified, one after it) when nobody has claimed it.
  mutable std::thread verifier;
  mutable std::atomic<bool> stop{false};
  mutable bool ahead = false;
  // Transient columns (UseTransientColumns): decoded chunks given back by
  // ReleaseColumns (on the caller's thread) keep their buffers in a pool
  // that verification (on either thread) takes from; the verifier thread
  // stays at most kLookahead chunks past the highest chunk asked for.
  static constexpr uint64_t kLookahead = 6;
  mutable bool transient = false;
  // Per chunk: 0 decoded, 1 released, 2 being decoded again on the verifier
  // thread (DecodeBehind), 3 decoded again there, not yet taken by columns().
  mutable std::unique_ptr<std::atomic<uint8_t>[]> again;
  mutable std::vector<Status> again_errors;
  mutable std::atomic<uint32_t> behind{0};    // 1 once DecodeBehind is asked for
  mutable std::atomic<uint32_t> lowest{~0u};  // where the reader is (DecodeBehind)
  mutable std::mutex pool_mu;
  mutable std::vector<internal::GrowBuffer<internal::NodeRec>> pool;
  mutable std::atomic<uint32_t> wanted{0};

  const fb::Chunk* Root(uint32_t i) const {
    return fb::GetSizePrefixedChunk(data + chunks[i].offset);
  }
  uint8_t State(uint32_t i) const { return state[i].load(std::memory_order_acquire); }
  bool Claim(uint32_t i) const {
    uint8_t zero = 0;
    return state[i].compare_exchange_strong(zero, 3, std::memory_order_acq_rel);
  }
  void Publish(uint32_t i, uint8_t v) const {
    state[i].store(v, std::memory_order_release);
    state[i].notify_all();
  }
  // The verifier thread's second task (DecodeBehind): decodes released
  // chunks again from the last down, at most kLookahead below the lowest
  // chunk the reader has asked for.
  void DecodeBehindLoop() const {
    while (behind.load(std::memory_order_acquire) == 0) behind.wait(0, std::memory_order_acquire);
    for (uint32_t j = static_cast<uint32_t>(chunks.size()); j-- > 0;) {
      uint32_t lo;
      while (uint64_t{j} + kLookahead < (lo = lowest.load(std::memory_order_acquire)) &&
             !stop.load(std::memory_order_relaxed)) {
        lowest.wait(lo, std::memory_order_acquire);
      }
      if (stop.load(std::memory_order_relaxed)) return;
      uint8_t a = 1;
      if (!again[j].compare_exchange_strong(a, 2, std::memory_order_acq_rel)) continue;
      try {
        TakeBuffers(facts[j]);
        again_errors[j] = internal::RedecodeChunk(Root(j), &facts[j]);
      } catch (const std::bad_alloc&) {
        again_errors[j] = IoError("out of memory decoding the chunk again");
      }
      again[j].store(3, std::memory_order_release);
      again[j].notify_all();
    }
  }
  // Verifies chunk i and advances the in-order frontier (VerifyChunk's
  // work, on whichever thread owns verification).
  Status Verify(uint32_t i) const;

  void TakeBuffers(ChunkFacts& f) const {
    std::lock_guard<std::mutex> lock(pool_mu);
    if (pool.empty() || f.columns.data() != nullptr) return;
    f.columns = std::move(pool.back());
    pool.pop_back();
  }

  ~Impl() {
    if (verifier.joinable()) {
      stop.store(true, std::memory_order_relaxed);
      wanted.store(~uint32_t{0}, std::memory_order_release);
      wanted.notify_all();
      behind.store(1, std::memory_order_release);
      behind.notify_all();
      lowest.store(0, std::memory_order_release);
      lowest.notify_all();
      verifier.join();
    }
  }
};

Trace::Trace() : impl_(new Impl) {}
Trace::Trace(Trace&&) noexcept = default;
Trace& Trace::operator=(Trace&&) noexcept = default;
Trace::~Trace() = default;

Result<Trace> Trace::Open(const std::string& path, const OpenOptions& options) {
  Trace t;
  Status s = MapPath(path, options.allow_partial, &t.impl_->mapping);
  if (!s.ok()) return s;
  auto r = FromBytes(t.impl_->mapping.data, t.impl_->mapping.size, DisplayName(path), options);
  if (!r) return r.error();
  Trace out = std::move(r).value();
  std::swap(out.impl_->mapping.map, t.impl_->mapping.map);
  std::swap(out.impl_->mapping.size, t.impl_->mapping.size);
  return out;
}

Result<Trace> Trace::FromBytes(const uint8_t* data, size_t size, std::string name,
                               const OpenOptions& options) {
  Trace t;
  Impl& m = *t.impl_;
  m.name = std::move(name);
  m.data = data;
  m.size = size;
  if (size == 0) return DataError(m.name + ": empty input, not a trace");
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0) {
    return InvalidArgument(m.name + ": trace bytes must be 8-byte aligned in memory");
  }
  uint64_t off = 0;
  NodeId base = 0;
  while (off < size) {
    ChunkHeader h;
    uint64_t len = 0, need = 0;
    Status s = FrameChunk(data + off, size - off, /*ended=*/true, off, m.chunks.size(), base, &len,
                          &h, &need);
    if (!s.ok()) {
      bool truncation = s.message().find("truncated") != std::string::npos;
      if (options.allow_partial && truncation && !m.chunks.empty()) break;
      return s.Prefixed(m.name);
    }
    ChunkInfo info;
    info.offset = off;
    info.size = len;
    info.index = h.index;
    info.base = h.base;
    info.num_nodes = h.num_nodes;
    info.base_depth = h.base_depth;
    info.last = h.last;
    m.chunks.push_back(info);
    base += h.num_nodes;
    off += 4 + len;
    if (h.last) {
      if (off != size) {
        return DataError(m.name + ": " + std::to_string(size - off) +
                         " bytes after the final chunk");
      }
      m.complete = true;
    }
  }
  if (!m.complete && !options.allow_partial) {
    return DataError(m.name + ": trace is incomplete: no final chunk after " +
                     std::to_string(m.chunks.size()) +
                     " chunks (the writer did not finish); --partial reads the complete chunks");
  }
  m.state.reset(new std::atomic<uint8_t>[m.chunks.size()]());
  m.reported.assign(m.chunks.size(), 0);
  m.errors.assign(m.chunks.size(), Status());
  m.facts.resize(m.chunks.size());
  for (ChunkFacts& f : m.facts) f.arena = &m.arena;
  m.columns.resize(m.chunks.size());
  t.num_nodes_ = base;
  m.progress = options.progress;
  if (m.progress != nullptr) m.progress->AddTotal(base);
  if (m.complete) {
    // The final chunk's total must agree with the chunks' node counts.
    const uint8_t* last = data + m.chunks.back().offset;
    Status vs = t.VerifyChunk(static_cast<uint32_t>(m.chunks.size() - 1));
    if (!vs.ok()) return vs;
    if (fb::GetSizePrefixedChunk(last)->total_nodes() != base) {
      return DataError(m.name + ": final chunk says " +
                       std::to_string(fb::GetSizePrefixedChunk(last)->total_nodes()) +
                       " nodes, the chunks hold " + std::to_string(base));
    }
  }
  return t;
}

const std::string& Trace::name() const { return impl_->name; }
uint64_t Trace::file_bytes() const { return impl_->size; }
bool Trace::complete() const { return impl_->complete; }
const std::vector<ChunkInfo>& Trace::chunks() const { return impl_->chunks; }

uint16_t Trace::format_major() const {
  return impl_->chunks.empty() ? 0 : impl_->Root(0)->format_major();
}
uint16_t Trace::format_minor() const {
  return impl_->chunks.empty() ? 0 : impl_->Root(0)->format_minor();
}

std::string_view Trace::producer_name() const {
  if (impl_->chunks.empty() || !VerifyChunk(0).ok()) return "";
  const fb::Producer* p = impl_->Root(0)->producer();
  return p && p->name() ? p->name()->string_view() : "";
}

std::string_view Trace::producer_version() const {
  if (impl_->chunks.empty() || !VerifyChunk(0).ok()) return "";
  const fb::Producer* p = impl_->Root(0)->producer();
  return p && p->version() ? p->version()->string_view() : "";
}

std::vector<MetaEntry> Trace::trace_meta() const {
  std::vector<MetaEntry> out;
  if (!impl_->complete) return out;
  uint32_t i = static_cast<uint32_t>(impl_->chunks.size() - 1);
  if (!VerifyChunk(i).ok()) return out;
  const fb::Chunk* c = impl_->Root(i);
  if (!c->trace_meta()) return out;
  for (const fb::Meta* m : *c->trace_meta()) {
    out.push_back(
        {c->strings()->Get(m->key())->string_view(), internal::DecodeValue(c, m->value())});
  }
  return out;
}

Result<const internal::ChunkColumns*> Trace::columns(uint32_t i) const {
  IRT_RETURN_IF_ERROR(VerifyChunk(i));
  Impl& m = *impl_;
  if (m.transient) {
    uint8_t a = m.again[i].load(std::memory_order_acquire);
    if (a != 0) {
      ChunkFacts& f = m.facts[i];
      Status s;
      if (a == 1 && m.again[i].compare_exchange_strong(a, 2, std::memory_order_acq_rel)) {
        m.TakeBuffers(f);
        s = internal::RedecodeChunk(m.Root(i), &f);
      } else {
        while ((a = m.again[i].load(std::memory_order_acquire)) == 2) {
          m.again[i].wait(2, std::memory_order_acquire);
        }
        s = m.again_errors[i];
      }
      if (!s.ok()) {
        m.again[i].store(1, std::memory_order_release);
        return DataError(m.name + ": " +
                         internal::ChunkError(i, m.chunks[i].offset, f, s.message()));
      }
      m.columns[i].nodes = f.decoded_nodes;
      m.columns[i].refs = f.decoded_refs;
      m.again[i].store(0, std::memory_order_release);
    }
  }
  return &m.columns[i];
}

void Trace::UseTransientColumns() const {
  Impl& m = *impl_;
  if (m.transient || m.ahead) return;
  m.transient = true;
  m.again.reset(new std::atomic<uint8_t>[m.chunks.size()]());
  m.again_errors.assign(m.chunks.size(), Status());
  for (uint32_t i = 0; i < m.chunks.size(); ++i) {
    if (m.State(i) != 0) continue;
    m.facts[i].arena = nullptr;
    m.facts[i].transient = true;
  }
}

uint64_t Trace::ReleaseColumns(uint32_t i) const {
  Impl& m = *impl_;
  if (!m.transient || i >= m.chunks.size() || m.State(i) != 1 ||
      m.again[i].load(std::memory_order_acquire) != 0) {
    return 0;
  }
  ChunkFacts& f = m.facts[i];
  // A chunk not yet fed to the stack of open calls is read again there,
  // unless it opens and closes no call (the stack then reads only its
  // classes): so a reader walking back from the end of a long loop can
  // give chunks back before the chunks in front of them are verified.
  if (!f.transient || !f.packed) return 0;
  if (m.frontier.load(std::memory_order_acquire) <= i && internal::CallStack::Reads(m.columns[i])) {
    return 0;
  }
  uint64_t bytes = uint64_t{f.decoded_count} * sizeof(internal::NodeRec) + f.decoded_n_refs * 4;
  {
    std::lock_guard<std::mutex> lock(m.pool_mu);
    m.pool.push_back(std::move(f.columns));
  }
  f.decoded_nodes = nullptr;
  f.decoded_refs = nullptr;
  m.columns[i].nodes = nullptr;
  m.columns[i].refs = nullptr;
  m.again[i].store(1, std::memory_order_release);
  return bytes;
}

void Trace::DecodeBehind(uint32_t at) const {
  Impl& m = *impl_;
  if (!m.transient || !m.ahead || at >= m.lowest.load(std::memory_order_relaxed)) return;
  m.lowest.store(at, std::memory_order_release);
  m.lowest.notify_all();
  if (m.behind.load(std::memory_order_relaxed) == 0) {
    m.behind.store(1, std::memory_order_release);
    m.behind.notify_all();
  }
}

Progress* Trace::progress() const { return impl_->progress; }

std::span<const uint8_t> Trace::chunk_bytes(uint32_t i) const {
  const ChunkInfo& c = impl_->chunks[i];
  return {impl_->data + c.offset, static_cast<size_t>(c.size + 4)};
}

Status Trace::VerifyChunk(uint32_t i) const {
  Impl& m = *impl_;
  uint8_t st = m.State(i);
  // Where the reader is: a chunk within the read-ahead window, or one not
  // yet verified. A verified chunk far ahead (the last, which Open
  // verifies, read for the root's result) says nothing about it.
  if (m.ahead && m.transient) {
    const uint32_t w = m.wanted.load(std::memory_order_relaxed);
    if (i > w && (st != 1 || i <= uint64_t{w} + Impl::kLookahead)) {
      m.wanted.store(i, std::memory_order_release);
      m.wanted.notify_all();
    }
  }
  if ((st == 0 || st == 3) && m.ahead) {
    // The verifier thread works through the chunks in order. This thread
    // verifies chunk i when the verifier has not started on it, and while
    // it waits for it, the next chunk that nobody has started on.
    while (st == 0 || st == 3) {
      if (st == 0 && m.Claim(i)) {
        (void)m.Verify(i);
      } else {
        uint32_t end = static_cast<uint32_t>(
            std::min<uint64_t>(m.chunks.size(), uint64_t{i} + 1 + Impl::kLookahead));
        uint32_t j = i + 1;
        while (j < end && !(m.State(j) == 0 && m.Claim(j))) ++j;
        if (j < end) {
          (void)m.Verify(j);
        } else {
          m.state[i].wait(3, std::memory_order_acquire);
        }
      }
      st = m.State(i);
    }
  }
  if (st == 0) {
    Status s = m.Verify(i);
    st = m.State(i);
    if (st == 0) return s;  // cannot happen: Verify publishes i
  }
  if (st == 2) return m.errors[i];
  if (m.progress != nullptr && !m.reported[i]) {
    m.reported[i] = 1;
    m.progress->Add(m.chunks[i].num_nodes, m.chunks[i].size + 4);
  }
  return Status::Ok();
}

void Trace::VerifyAhead() const {
  Impl& m = *impl_;
  if (m.ahead || m.chunks.size() < 2 || std::thread::hardware_concurrency() < 2) return;
  m.ahead = true;
  m.verifier = std::thread([&m] {
    internal::DecodeForAnotherThread();
    for (uint32_t i = 0; i < m.chunks.size(); ++i) {
      if (m.transient) {
        // Bounded memory: wait until the reader nears chunk i.
        uint32_t w;
        while (i > uint64_t{w = m.wanted.load(std::memory_order_acquire)} + Impl::kLookahead &&
               !m.stop.load(std::memory_order_relaxed)) {
          m.wanted.wait(w, std::memory_order_acquire);
        }
      }
      if (m.stop.load(std::memory_order_relaxed)) {
        // Chunks left unverified are published as errors, so that no
        // waiter waits forever (the Trace is being destroyed).
        for (uint32_t j = i; j < m.chunks.size(); ++j) {
          if (m.State(j) == 0) {
            m.errors[j] = Internal(m.name + ": verification stopped");
            m.Publish(j, 2);
          }
        }
        return;
      }
      if (!m.Claim(i)) continue;
      try {
        (void)m.Verify(i);
      } catch (const std::bad_alloc&) {
        m.errors[i] = IoError(m.name + ": out of memory verifying chunk " + std::to_string(i));
        m.Publish(i, 2);
      }
    }
    if (m.transient) m.DecodeBehindLoop();
  });
}

Status Trace::Impl::Verify(uint32_t i) const {
  const Impl& m = *this;
  const ChunkInfo& info = m.chunks[i];
  if (m.facts[i].transient) m.TakeBuffers(m.facts[i]);
  Status s = internal::VerifyChunk(m.data + info.offset, info.size + 4, &m.facts[i]);
  if (s.ok()) {
    // The calls left open must be those the next chunk says are open when it
    // starts (none after the final chunk): with chunk 0 starting at depth 0,
    // every chunk's base_depth is then right once all are verified.
    uint32_t end = m.facts[i].end_depth;
    if (i + 1 < m.chunks.size() && m.chunks[i + 1].base_depth != end) {
      s = DataError("the chunk leaves " + std::to_string(end) + " calls open, chunk " +
                    std::to_string(i + 1) + " says it starts at call depth " +
                    std::to_string(m.chunks[i + 1].base_depth));
    } else if (info.last && end != 0) {
      s = DataError("the trace ends with " + std::to_string(end) + " calls still open");
    }
  }
  if (!s.ok()) {
    m.errors[i] =
        DataError(m.name + ": " + internal::ChunkError(i, info.offset, m.facts[i], s.message()));
    m.Publish(i, 2);
    return m.errors[i];
  }
  internal::BuildColumns(m.Root(i), info, m.facts[i], &m.columns[i]);
  // Advance the in-order frontier over every chunk verified so far (chunk i
  // counts as verified here, before it is published); a chunk verified by
  // the other thread meanwhile is fed by whichever thread comes after it.
  std::lock_guard<std::mutex> lock(m.frontier_mu);
  if (m.fed_bad != ~0u && i > m.fed_bad) {
    // Read after a chunk that failed across chunks: bad too, whenever it is
    // verified (so that the verdict does not depend on the order).
    m.errors[i] = m.errors[m.fed_bad];
    m.Publish(i, 2);
    return m.errors[i];
  }
  auto good = [&](uint32_t f) { return f == i || m.State(f) == 1; };
  while (m.frontier < m.chunks.size() && good(m.frontier)) {
    uint32_t f = m.frontier;
    NodeId failed = kNoNode;
    Status fs = m.calls.Feed(m.columns[f], &failed);
    if (!fs.ok()) {
      // The chunk is bad after all, and so is every chunk read after it.
      m.errors[f] = DataError(m.name + ": " + At(f, failed, fs.message()));
      m.fed_bad = f;
      for (uint32_t j = f + 1; j < m.chunks.size(); ++j) {
        if (good(j)) {
          m.errors[j] = m.errors[f];
          if (j != i) m.Publish(j, 2);
        }
      }
      if (f != i) m.Publish(f, 2);
      if (i >= f) {
        m.Publish(i, 2);
        return m.errors[f];
      }
      m.Publish(i, 1);
      return Status::Ok();
    }
    ++m.frontier;
  }
  m.Publish(i, 1);
  return Status::Ok();
}

uint32_t Trace::chunk_of(NodeId id) const {
  const auto& cs = impl_->chunks;
  auto it = std::upper_bound(cs.begin(), cs.end(), id,
                             [](NodeId v, const ChunkInfo& c) { return v < c.base; });
  return static_cast<uint32_t>((it - cs.begin()) - 1);
}

Result<NodeView> Trace::node(NodeId id) const {
  if (id >= num_nodes_) {
    return NotFound(impl_->name + ": node " + std::to_string(id) + " out of range (trace has " +
                    std::to_string(num_nodes_) + " nodes)");
  }
  uint32_t ci = chunk_of(id);
  IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, columns(ci));
  // VerifyChunk checked every node of the chunk.
  return NodeView(c, static_cast<uint32_t>(id - c->base), id, this);
}

std::optional<std::string_view> Trace::FunctionIR(std::string_view name, NodeId near) const {
  if (num_nodes_ == 0) return std::nullopt;
  int64_t start = chunk_of(std::min<NodeId>(near, num_nodes_ - 1));
  for (int64_t i = start; i >= 0; --i) {
    if (!VerifyChunk(static_cast<uint32_t>(i)).ok()) return std::nullopt;
    const fb::Chunk* c = impl_->Root(static_cast<uint32_t>(i));
    if (!c->functions()) continue;
    for (const fb::FunctionIR* f : *c->functions()) {
      if (c->strings()->Get(f->name())->string_view() == name && f->ir()) {
        return f->ir()->string_view();
      }
    }
  }
  return std::nullopt;
}

}  // namespace irt
