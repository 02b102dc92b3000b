// Structure-aware mutations of trace files; see trace_mutator.h.
#include "trace_mutator.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "irtrace_generated.h"

namespace irt::fuzz {

namespace {

namespace fb = irt::fb;
using Bytes = std::vector<uint8_t>;

// Byte offsets inside the frozen structs (schema/irtrace.fbs).
static_assert(sizeof(fb::Node) == 16 && sizeof(fb::NodeClass) == 32);
static_assert(sizeof(fb::Value) == 16 && sizeof(fb::Meta) == 24);
constexpr size_t kNodeValue = 0, kNodeCls = 8, kNodeFirstRef = 12;
constexpr size_t kClassOp = 0, kClassBlock = 4, kClassPos = 8, kClassAux = 12,
                 kClassFirstOperand = 16, kClassNOperands = 26, kClassKind = 28, kClassVKind = 29,
                 kClassFlags = 30;
constexpr size_t kValueVKind = 8;
constexpr size_t kMetaNode = 16, kMetaKey = 20;

// Decompressed inputs larger than this are mutated as bytes.
constexpr size_t kMaxDecompressed = 16 << 20;

// What a mutable site of a chunk holds; picks the values written to it.
enum class Site : uint8_t {
  kSizePrefix,
  kFormat,
  kIndex,
  kBase,
  kBaseDepth,
  kLast,
  kTotalNodes,
  kVectorLength,
  kNodeValue,
  kNodeCls,
  kNodeFirstRef,
  kRef,
  kClassOp,
  kClassLocation,
  kClassAux,
  kClassFirstOperand,
  kClassNOperands,
  kClassKind,
  kClassVKind,
  kClassFlags,
  kOperand,
  kValue,  // a Value struct: bits and vkind
  kTupleItem,
  kShapeDim,
  kDType,
  kMetaNode,
  kMetaKey,
  kStringByte,
  kPackedByte,  // a byte of a format-2 chunk's packed node column
};

struct SiteRef {
  size_t at;  // offset in the chunk, size prefix included
  uint8_t width;
  Site site;
  uint64_t hint = 0;  // kRef: the user's global index; kTupleItem: its tuple's index
};

// Facts about one verified chunk that value choices use.
struct ChunkFacts {
  uint64_t base = 0;
  uint32_t nodes = 0, refs = 0, classes = 0, literals = 0, strings = 0, tensors = 0, tuples = 0;
  std::vector<uint64_t> markers, jumps, closers;  // global indices of such nodes
};

// A chunk as plain data, for the mutations that change its sizes.
struct ChunkModel {
  uint16_t format_major = 1, format_minor = 0;
  bool has_producer = false;
  std::string producer_name, producer_version;
  uint64_t index = 0, base = 0, total_nodes = 0;
  uint32_t base_depth = 0;
  bool last = false;
  std::vector<fb::Node> nodes;
  std::vector<uint32_t> refs;
  std::vector<fb::NodeClass> classes;
  std::vector<uint32_t> operands;
  std::vector<fb::Value> literals;
  std::vector<std::string> strings;
  struct TensorModel {
    fb::DType dtype;
    std::vector<int64_t> shape;
    Bytes data;
  };
  std::vector<TensorModel> tensors;
  std::vector<std::vector<fb::Value>> tuples;
  std::vector<fb::Meta> meta, trace_meta;
  std::vector<std::pair<uint32_t, std::string>> functions;
  uint32_t node_count = 0;  // format 2: the packed node column
  Bytes packed;
  bool has_packed = false;
};

bool IsZstd(std::span<const uint8_t> b) {
  if (b.size() < 4) return false;
  uint32_t magic;
  std::memcpy(&magic, b.data(), 4);
  return magic == 0xFD2FB528u || (magic & 0xFFFFFFF0u) == 0x184D2A50u;
}

bool Decompress(std::span<const uint8_t> in, Bytes* out) {
  ZSTD_DCtx* d = ZSTD_createDCtx();
  if (d == nullptr) return false;
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  Bytes buf(1 << 16);
  bool ok = true;
  size_t ret = 1;
  while (src.pos < src.size) {
    ZSTD_outBuffer dst{buf.data(), buf.size(), 0};
    ret = ZSTD_decompressStream(d, &dst, &src);
    if (ZSTD_isError(ret)) {
      ok = false;
      break;
    }
    out->insert(out->end(), buf.data(), buf.data() + dst.pos);
    if (out->size() > kMaxDecompressed) {
      ok = false;
      break;
    }
    if (dst.pos == 0 && ret != 0 && src.pos == src.size) break;
  }
  ZSTD_freeDCtx(d);
  return ok && ret == 0;
}

Bytes Compress(std::span<const uint8_t> in, bool checksum) {
  Bytes out(ZSTD_compressBound(in.size()));
  ZSTD_CCtx* c = ZSTD_createCCtx();
  if (c == nullptr) return {};
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  size_t n = ZSTD_compress2(c, out.data(), out.size(), in.data(), in.size());
  ZSTD_freeCCtx(c);
  if (ZSTD_isError(n)) return {};
  out.resize(n);
  return out;
}

uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The chunks of a plain trace: [offset, offset + 4 + size) each; the bytes
// after the last complete chunk are the tail.
struct Framing {
  std::vector<std::pair<size_t, size_t>> chunks;  // offset, length with prefix
  size_t tail = 0;                                // offset of the tail
};

Framing Frame(const Bytes& b) {
  Framing f;
  size_t at = 0;
  while (b.size() - at >= 8) {
    uint64_t len = 4 + uint64_t{LoadU32(b.data() + at)};
    if (len > b.size() - at) break;
    f.chunks.emplace_back(at, static_cast<size_t>(len));
    at += static_cast<size_t>(len);
  }
  f.tail = at;
  return f;
}

// Where a table's field is, or nullptr when it is absent (its default).
const uint8_t* FieldAddress(const void* table, flatbuffers::voffset_t field) {
  auto t = static_cast<const uint8_t*>(table);
  int32_t soff;
  std::memcpy(&soff, t, 4);
  const uint8_t* vt = t - soff;
  uint16_t vt_size, off;
  std::memcpy(&vt_size, vt, 2);
  if (field + 2u > vt_size) return nullptr;
  std::memcpy(&off, vt + field, 2);
  return off ? t + off : nullptr;
}

class Mutator {
 public:
  Mutator(uint64_t seed, size_t max_size, const ByteMutator& bytes)
      : rng_(seed), max_size_(max_size), bytes_(bytes) {}

  Bytes Run(std::span<const uint8_t> in) {
    if (IsZstd(in)) {
      Bytes plain;
      if (!Decompress(in, &plain)) return ByteMutate(Bytes(in.begin(), in.end()));
      Bytes m = MutatePlain(std::move(plain));
      switch (Below(10)) {
        case 0:
          return Cap(std::move(m));  // the mutated trace, uncompressed
        case 1: {                    // a stream its writer did not finish
          Bytes z = Compress(m, true);
          z.resize(Below(z.size() + 1));
          return Cap(std::move(z));
        }
        case 2: {  // damaged compressed bytes
          Bytes z = Compress(m, Chance(50));
          return ByteMutate(std::move(z));
        }
        default:
          return Cap(Compress(m, Chance(80)));
      }
    }
    Bytes m = MutatePlain(Bytes(in.begin(), in.end()));
    if (Chance(8)) m = Compress(m, true);
    return Cap(std::move(m));
  }

 private:
  uint64_t Below(uint64_t n) { return n ? rng_() % n : 0; }
  bool Chance(int percent) { return Below(100) < static_cast<uint64_t>(percent); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

  Bytes Cap(Bytes b) {
    if (b.size() > max_size_) b.resize(max_size_);
    return b;
  }

  Bytes ByteMutate(Bytes b) {
    if (bytes_) {
      size_t size = b.size();
      b.resize(std::max(max_size_, size));
      size = bytes_(b.data(), size, b.size());
      b.resize(std::min(size, b.size()));
      return b;
    }
    int n = 1 + static_cast<int>(Below(4));
    for (int i = 0; i < n; ++i) {
      switch (b.empty() ? 2 : Below(5)) {
        case 0:
          b[Below(b.size())] ^= static_cast<uint8_t>(1u << Below(8));
          break;
        case 1:
          b[Below(b.size())] = static_cast<uint8_t>(rng_());
          break;
        case 2:
          if (b.size() < max_size_) {
            b.insert(b.begin() + static_cast<ptrdiff_t>(Below(b.size() + 1)),
                     static_cast<uint8_t>(rng_()));
          }
          break;
        case 3:
          b.erase(b.begin() + static_cast<ptrdiff_t>(Below(b.size())));
          break;
        default:
          if (b.size() >= 4) {
            static const uint32_t kWords[] = {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 8, 16};
            uint32_t w = kWords[Below(std::size(kWords))];
            std::memcpy(b.data() + Below(b.size() - 3), &w, 4);
          }
      }
    }
    return Cap(std::move(b));
  }

  Bytes MutatePlain(Bytes b) {
    int n = 1 + static_cast<int>(Below(3));
    for (int i = 0; i < n; ++i) {
      Framing f = Frame(b);
      if (f.chunks.empty()) return ByteMutate(std::move(b));
      uint64_t r = Below(100);
      if (r < 20) {
        b = MutateFraming(std::move(b), f);
      } else if (r < 65) {
        b = PokeSite(std::move(b), f);
      } else if (r < 92) {
        b = Rebuild(std::move(b), f);
      } else {
        b = ByteMutate(std::move(b));
      }
    }
    return b;
  }

  // ------------------------------------------------------------ framing

  Bytes MutateFraming(Bytes b, const Framing& f) {
    auto chunk = [&](size_t i) {
      return Bytes(b.begin() + static_cast<ptrdiff_t>(f.chunks[i].first),
                   b.begin() + static_cast<ptrdiff_t>(f.chunks[i].first + f.chunks[i].second));
    };
    std::vector<Bytes> parts;
    for (size_t i = 0; i < f.chunks.size(); ++i) parts.push_back(chunk(i));
    Bytes tail(b.begin() + static_cast<ptrdiff_t>(f.tail), b.end());
    size_t k = Below(parts.size());
    switch (Below(8)) {
      case 0:  // drop a chunk
        parts.erase(parts.begin() + static_cast<ptrdiff_t>(k));
        break;
      case 1:  // duplicate a chunk in place or at the end
        parts.insert(Chance(50) ? parts.end() : parts.begin() + static_cast<ptrdiff_t>(k),
                     parts[k]);
        break;
      case 2:  // swap two chunks
        std::swap(parts[k], parts[Below(parts.size())]);
        break;
      case 3: {  // cut the file anywhere
        Bytes out;
        for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
        out.insert(out.end(), tail.begin(), tail.end());
        out.resize(Below(out.size() + 1));
        return out;
      }
      case 4:  // cut a chunk at an 8-byte boundary (still framed, not verifiable)
      {
        size_t cut = parts[k].size() / 8 * 8;
        cut -= std::min(cut, 8 * Below(4));
        parts[k].resize(std::max<size_t>(8, std::min(cut, parts[k].size())));
      }
        {
          uint32_t len = static_cast<uint32_t>(parts[k].size() - 4);
          std::memcpy(parts[k].data(), &len, 4);
        }
        break;
      case 5: {  // stray bytes between chunks
        Bytes junk(Chance(50) ? 8 : 1 + Below(16));
        for (uint8_t& c : junk) c = Chance(50) ? 0 : static_cast<uint8_t>(rng_());
        parts.insert(parts.begin() + static_cast<ptrdiff_t>(k), junk);
        break;
      }
      case 6:  // the chunks in reverse order
        std::reverse(parts.begin(), parts.end());
        break;
      default:  // a chunk followed by a copy of the first one
        parts.insert(parts.begin() + static_cast<ptrdiff_t>(k) + 1, parts[0]);
    }
    Bytes out;
    for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
  }

  // ------------------------------------------------------------ sites

  // A verified, 8-aligned copy of chunk `i`, or nullptr.
  const fb::Chunk* Verified(const Bytes& b, const Framing& f, size_t i,
                            std::vector<uint64_t>* store) {
    auto [at, len] = f.chunks[i];
    store->assign((len + 7) / 8, 0);
    auto* p = reinterpret_cast<uint8_t*>(store->data());
    std::memcpy(p, b.data() + at, len);
    flatbuffers::Verifier v(p, len, 64, 1 << 22);
    if (!fb::VerifySizePrefixedChunkBuffer(v)) return nullptr;
    return fb::GetSizePrefixedChunk(p);
  }

  template <typename T>
  void AddVector(const uint8_t* base, const flatbuffers::Vector<T>* v,
                 std::vector<SiteRef>* sites) {
    if (v == nullptr) return;
    sites->push_back({static_cast<size_t>(reinterpret_cast<const uint8_t*>(v) - base), 4,
                      Site::kVectorLength, v->size()});
  }

  void CollectSites(const fb::Chunk* c, const uint8_t* p, std::vector<SiteRef>* s,
                    ChunkFacts* facts) {
    auto off = [&](const void* q) {
      return static_cast<size_t>(static_cast<const uint8_t*>(q) - p);
    };
    s->push_back({0, 4, Site::kSizePrefix, LoadU32(p)});
    struct Field {
      flatbuffers::voffset_t vt;
      uint8_t width;
      Site site;
    };
    static const Field kFields[] = {
        {fb::Chunk::VT_FORMAT_MAJOR, 2, Site::kFormat},
        {fb::Chunk::VT_FORMAT_MINOR, 2, Site::kFormat},
        {fb::Chunk::VT_INDEX, 8, Site::kIndex},
        {fb::Chunk::VT_BASE, 8, Site::kBase},
        {fb::Chunk::VT_BASE_DEPTH, 4, Site::kBaseDepth},
        {fb::Chunk::VT_LAST, 1, Site::kLast},
        {fb::Chunk::VT_TOTAL_NODES, 8, Site::kTotalNodes},
        {fb::Chunk::VT_NODE_COUNT, 4, Site::kTotalNodes},
    };
    for (const Field& fd : kFields) {
      if (const uint8_t* a = FieldAddress(c, fd.vt)) s->push_back({off(a), fd.width, fd.site});
    }
    facts->base = c->base();
    AddVector(p, c->nodes(), s);
    AddVector(p, c->refs(), s);
    AddVector(p, c->classes(), s);
    AddVector(p, c->operands(), s);
    AddVector(p, c->literals(), s);
    AddVector(p, c->strings(), s);
    AddVector(p, c->tensors(), s);
    AddVector(p, c->tuples(), s);
    AddVector(p, c->meta(), s);
    AddVector(p, c->functions(), s);
    AddVector(p, c->trace_meta(), s);
    AddVector(p, c->packed(), s);
    if (c->packed() && c->packed()->size() > 0) {
      // A few bytes of the packed column: headers, deltas and values alike.
      for (int k = 0; k < 16; ++k) {
        s->push_back({off(c->packed()->data()) + Below(c->packed()->size()), 1, Site::kPackedByte});
      }
    }
    if (c->classes()) {
      facts->classes = c->classes()->size();
      for (const fb::NodeClass* k : *c->classes()) {
        size_t a = off(k);
        s->push_back({a + kClassOp, 4, Site::kClassOp});
        s->push_back({a + kClassBlock, 4, Site::kClassLocation});
        s->push_back({a + kClassPos, 4, Site::kClassLocation});
        s->push_back({a + kClassAux, 4, Site::kClassAux});
        s->push_back({a + kClassFirstOperand, 4, Site::kClassFirstOperand});
        s->push_back({a + kClassNOperands, 2, Site::kClassNOperands});
        s->push_back({a + kClassKind, 1, Site::kClassKind});
        s->push_back({a + kClassVKind, 1, Site::kClassVKind});
        s->push_back({a + kClassFlags, 1, Site::kClassFlags});
      }
    }
    if (c->refs()) facts->refs = c->refs()->size();
    if (c->nodes()) {
      facts->nodes = c->nodes()->size();
      // The owner of each reference: the last node whose first_ref is at or
      // before it (writers give each node consecutive references).
      std::vector<uint64_t> owner(facts->refs, facts->base);
      for (uint32_t i = 0; i < facts->nodes; ++i) {
        const fb::Node* at = c->nodes()->Get(i);
        fb::Node node;
        std::memcpy(&node, at, sizeof node);
        const fb::Node* n = &node;
        size_t a = off(at);
        s->push_back({a + kNodeValue, 8, Site::kNodeValue});
        s->push_back({a + kNodeCls, 4, Site::kNodeCls});
        s->push_back({a + kNodeFirstRef, 4, Site::kNodeFirstRef});
        uint64_t g = facts->base + i;
        for (uint32_t r = n->first_ref(); r < facts->refs; ++r) owner[r] = g;
        if (n->cls() < facts->classes) {
          fb::Kind kind = c->classes()->Get(n->cls())->kind();
          if (kind == fb::Kind::Call) facts->markers.push_back(g);
          if (kind == fb::Kind::Jump) facts->jumps.push_back(g);
          if (kind == fb::Kind::Return || kind == fb::Kind::Error) facts->closers.push_back(g);
        }
      }
      if (c->refs()) {
        for (uint32_t r = 0; r < facts->refs; ++r) {
          s->push_back({off(c->refs()->Data()) + 4 * r, 4, Site::kRef, owner[r]});
        }
      }
    }
    if (c->operands()) {
      for (uint32_t i = 0; i < c->operands()->size(); ++i) {
        s->push_back({off(c->operands()->Data()) + 4 * i, 4, Site::kOperand});
      }
    }
    if (c->literals()) {
      facts->literals = c->literals()->size();
      for (const fb::Value* v : *c->literals()) s->push_back({off(v), 16, Site::kValue});
    }
    if (c->strings()) {
      facts->strings = c->strings()->size();
      for (const flatbuffers::String* str : *c->strings()) {
        s->push_back({off(str), 4, Site::kVectorLength, str->size()});
        if (str->size() > 0) {
          s->push_back({off(str->data()) + Below(str->size()), 1, Site::kStringByte});
        }
      }
    }
    if (c->tensors()) {
      facts->tensors = c->tensors()->size();
      for (const fb::Tensor* t : *c->tensors()) {
        if (const uint8_t* a = FieldAddress(t, fb::Tensor::VT_DTYPE)) {
          s->push_back({off(a), 1, Site::kDType});
        }
        AddVector(p, t->shape(), s);
        AddVector(p, t->data(), s);
        if (t->shape()) {
          for (uint32_t i = 0; i < t->shape()->size(); ++i) {
            s->push_back({off(t->shape()->Data()) + 8 * i, 8, Site::kShapeDim});
          }
        }
      }
    }
    if (c->tuples()) {
      facts->tuples = c->tuples()->size();
      for (uint32_t k = 0; k < facts->tuples; ++k) {
        const fb::Tuple* t = c->tuples()->Get(k);
        AddVector(p, t->items(), s);
        if (t->items()) {
          for (const fb::Value* v : *t->items()) s->push_back({off(v), 16, Site::kTupleItem, k});
        }
      }
    }
    for (const auto* meta : {c->meta(), c->trace_meta()}) {
      if (!meta) continue;
      for (const fb::Meta* m : *meta) {
        size_t a = off(m);
        s->push_back({a, 16, Site::kValue});
        s->push_back({a + kMetaNode, 4, Site::kMetaNode});
        s->push_back({a + kMetaKey, 4, Site::kMetaKey});
      }
    }
  }

  uint64_t Interesting64() {
    static const uint64_t kValues[] = {0,
                                       1,
                                       2,
                                       ~0ull,
                                       0x7FFFFFFFull,
                                       0x80000000ull,
                                       0xFFFFFFFFull,
                                       0x100000000ull,
                                       1ull << 28,
                                       (1ull << 28) + 1,
                                       1ull << 62,
                                       0x7FFFFFFFFFFFFFFFull,
                                       0x8000000000000000ull,
                                       0x7FF8000000000001ull,   // a NaN with a payload
                                       0x7FF0000000000000ull,   // +inf
                                       0x3FF0000000000000ull};  // 1.0
    return Chance(80) ? kValues[Below(std::size(kValues))] : rng_();
  }

  uint64_t Around(uint64_t old) {
    switch (Below(6)) {
      case 0:
        return old + 1;
      case 1:
        return old - 1;
      case 2:
        return old * 2;
      case 3:
        return old + 8;
      case 4:
        return old / 2;
      default:
        return Interesting64();
    }
  }

  uint64_t Count(uint32_t n) {  // an index around a table's size
    return Chance(70) ? Below(n + 2) : Interesting64();
  }

  uint64_t ValueFor(const SiteRef& s, uint64_t old, const ChunkFacts& f) {
    switch (s.site) {
      case Site::kSizePrefix:
        return Chance(50) ? Around(old) : old + 8 * Below(4) - 8 * Below(4);
      case Site::kFormat:
        return Below(4) == 0 ? 0xFFFF : Below(3);
      case Site::kIndex:
      case Site::kBase:
      case Site::kTotalNodes:
      case Site::kBaseDepth:
      case Site::kVectorLength:
        return Chance(70) ? Around(old) : Interesting64();
      case Site::kLast:
        return old ? 0 : 1;
      case Site::kNodeCls:
        return Count(f.classes);
      case Site::kNodeFirstRef:
      case Site::kClassFirstOperand:
        return Count(f.refs);
      case Site::kRef: {
        uint64_t user = s.hint;
        auto to = [&](const std::vector<uint64_t>& targets) -> uint64_t {
          if (targets.empty()) return Below(user + 2);
          uint64_t t = Pick(targets);
          return user > t ? user - t : Below(user + 2);
        };
        switch (Below(9)) {
          case 0:
            return 0;
          case 1:
            return user;  // node 0, the root marker
          case 2:
            return user + 1;  // before the trace
          case 3:
            return to(f.markers);
          case 4:
            return to(f.jumps);
          case 5:
            return to(f.closers) + (Chance(50) ? 1 : 0);  // a closer, or into its call
          case 6:
            return Interesting64();
          default:
            return Below(user + 2);
        }
      }
      case Site::kClassOp:
        return Chance(20) ? 0xFFFFFFFFull : Count(f.strings);
      case Site::kClassLocation:
      case Site::kClassAux:
        return Chance(60) ? Below(4) : Interesting64();
      case Site::kClassNOperands:
        return Chance(70) ? Below(4) : Around(old);
      case Site::kClassKind:
        return Below(10);
      case Site::kClassVKind:
      case Site::kDType:
        return Below(12);
      case Site::kClassFlags:
        return Chance(80) ? Below(4) : rng_();
      case Site::kOperand:
        return Chance(50) ? 0 : Count(f.literals);
      case Site::kShapeDim:
        return Chance(70) ? Interesting64() : Around(old);
      case Site::kMetaNode:
        return Count(f.nodes);
      case Site::kMetaKey:
        return Count(f.strings);
      case Site::kStringByte: {
        static const uint8_t kBytes[] = {0, '\n', '\r', 0x1B, 0x7F, 0x80, 0xC3, 0xFF, '"', '\\'};
        return kBytes[Below(std::size(kBytes))];
      }
      case Site::kPackedByte:
        // Another class or mode, a continuation byte, a small delta.
        switch (Below(4)) {
          case 0:
            return (old & ~uint64_t{3}) | Below(4);
          case 1:
            return old ^ 0x80;
          case 2:
            return Below(8);
          default:
            return rng_() & 0xFF;
        }
      default:
        return Interesting64();
    }
  }

  uint64_t ValueBits(fb::VKind k, const ChunkFacts& f) {
    switch (k) {
      case fb::VKind::Bool:
        return Below(3);
      case fb::VKind::String:
      case fb::VKind::Function:
        return Count(f.strings);
      case fb::VKind::Tensor:
        return Count(f.tensors);
      case fb::VKind::Tuple:
        return Count(f.tuples);
      default:
        return Interesting64();
    }
  }

  Bytes PokeSite(Bytes b, const Framing& f) {
    size_t i = Below(f.chunks.size());
    std::vector<uint64_t> store;
    const fb::Chunk* c = Verified(b, f, i, &store);
    if (c == nullptr) return ByteMutate(std::move(b));
    std::vector<SiteRef> sites;
    ChunkFacts facts;
    CollectSites(c, reinterpret_cast<const uint8_t*>(store.data()), &sites, &facts);
    // Often only the sites whose changes leave most traces valid, so that
    // the analyses behind the checks see new values too.
    bool keep_valid = Chance(40);
    if (keep_valid) {
      std::erase_if(sites, [](const SiteRef& s) {
        return s.site != Site::kNodeValue && s.site != Site::kStringByte &&
               s.site != Site::kClassLocation && s.site != Site::kValue;
      });
      if (sites.empty()) return ByteMutate(std::move(b));
    }
    int n = Chance(70) ? 1 : 2 + static_cast<int>(Below(3));
    uint8_t* chunk = b.data() + f.chunks[i].first;
    for (int k = 0; k < n; ++k) {
      const SiteRef& s = Pick(sites);
      uint8_t* at = chunk + s.at;
      if (s.site == Site::kValue || s.site == Site::kTupleItem) {
        auto kind = static_cast<fb::VKind>(at[kValueVKind]);
        if (keep_valid) {
          if (kind == fb::VKind::F64 || kind == fb::VKind::I64) {
            uint64_t bits = Interesting64();
            std::memcpy(at, &bits, 8);
          }
        } else if (s.site == Site::kTupleItem && Chance(50)) {
          // A tuple item that refers to itself, to a later tuple, or (shared)
          // to the one just below it.
          kind = fb::VKind::Tuple;
          uint64_t bits = Chance(50) ? s.hint : (Chance(50) ? s.hint + 1 : s.hint - 1);
          std::memcpy(at, &bits, 8);
        } else if (Chance(50)) {
          kind = static_cast<fb::VKind>(Below(11));
          uint64_t bits = ValueBits(kind, facts);
          std::memcpy(at, &bits, 8);
        } else {
          uint64_t bits = ValueBits(kind, facts);
          std::memcpy(at, &bits, 8);
        }
        at[kValueVKind] = static_cast<uint8_t>(kind);
        continue;
      }
      uint64_t old = 0;
      std::memcpy(&old, at, s.width);  // little-endian hosts only, as the format
      uint64_t v = ValueFor(s, s.site == Site::kVectorLength ? s.hint : old, facts);
      if (keep_valid && s.site == Site::kNodeValue) v = Interesting64();
      std::memcpy(at, &v, s.width);
    }
    return b;
  }

  // ------------------------------------------------------------ rebuild

  template <typename T>
  static void Structs(const flatbuffers::Vector<const T*>* v, std::vector<T>* out) {
    if (v == nullptr) return;
    // memcpy: a mutated chunk may hold them less aligned than their type.
    auto p = reinterpret_cast<const uint8_t*>(v->Data());
    for (uint32_t i = 0; i < v->size(); ++i) {
      T x;
      std::memcpy(&x, p + i * sizeof(T), sizeof(T));
      out->push_back(x);
    }
  }

  static ChunkModel Decode(const fb::Chunk* c) {
    ChunkModel m;
    m.format_major = c->format_major();
    m.format_minor = c->format_minor();
    if (c->producer()) {
      m.has_producer = true;
      if (c->producer()->name()) m.producer_name = c->producer()->name()->str();
      if (c->producer()->version()) m.producer_version = c->producer()->version()->str();
    }
    m.index = c->index();
    m.base = c->base();
    m.base_depth = c->base_depth();
    m.last = c->last();
    m.total_nodes = c->total_nodes();
    Structs(c->nodes(), &m.nodes);
    m.node_count = c->node_count();
    if (c->packed()) {
      m.has_packed = true;
      m.packed.assign(c->packed()->begin(), c->packed()->end());
    }
    if (c->refs()) m.refs.assign(c->refs()->begin(), c->refs()->end());
    Structs(c->classes(), &m.classes);
    if (c->operands()) m.operands.assign(c->operands()->begin(), c->operands()->end());
    Structs(c->literals(), &m.literals);
    if (c->strings()) {
      for (const flatbuffers::String* s : *c->strings()) m.strings.push_back(s->str());
    }
    if (c->tensors()) {
      for (const fb::Tensor* t : *c->tensors()) {
        ChunkModel::TensorModel tm{t->dtype(), {}, {}};
        if (t->shape()) {
          // Element by element: a mutated shape may be misaligned.
          const uint8_t* p = t->shape()->Data();
          for (uint32_t i = 0; i < t->shape()->size(); ++i) {
            int64_t d;
            std::memcpy(&d, p + 8 * static_cast<size_t>(i), 8);
            tm.shape.push_back(d);
          }
        }
        if (t->data()) tm.data.assign(t->data()->begin(), t->data()->end());
        m.tensors.push_back(std::move(tm));
      }
    }
    if (c->tuples()) {
      for (const fb::Tuple* t : *c->tuples()) {
        std::vector<fb::Value> items;
        Structs(t->items(), &items);
        m.tuples.push_back(std::move(items));
      }
    }
    Structs(c->meta(), &m.meta);
    Structs(c->trace_meta(), &m.trace_meta);
    if (c->functions()) {
      for (const fb::FunctionIR* f : *c->functions()) {
        m.functions.emplace_back(f->name(), f->ir() ? f->ir()->str() : std::string());
      }
    }
    return m;
  }

  static Bytes Encode(const ChunkModel& m) {
    flatbuffers::FlatBufferBuilder fbb;
    flatbuffers::Offset<fb::Producer> producer;
    if (m.has_producer) {
      producer = fb::CreateProducer(fbb, fbb.CreateString(m.producer_name),
                                    fbb.CreateString(m.producer_version));
    }
    std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
    for (const std::string& s : m.strings) strings.push_back(fbb.CreateString(s));
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (const auto& t : m.tensors) {
      fbb.ForceVectorAlignment(t.shape.size(), 8, 8);
      auto shape = fbb.CreateVector(t.shape);
      fbb.ForceVectorAlignment(t.data.size(), 1, 8);
      auto data = fbb.CreateVector(t.data);
      tensors.push_back(fb::CreateTensor(fbb, t.dtype, shape, data));
    }
    std::vector<flatbuffers::Offset<fb::Tuple>> tuples;
    for (const auto& items : m.tuples) {
      fbb.ForceVectorAlignment(items.size(), sizeof(fb::Value), 8);
      tuples.push_back(fb::CreateTuple(fbb, fbb.CreateVectorOfStructs(items)));
    }
    std::vector<flatbuffers::Offset<fb::FunctionIR>> functions;
    for (const auto& [name, ir] : m.functions) {
      functions.push_back(fb::CreateFunctionIR(fbb, name, fbb.CreateString(ir)));
    }
    // A format-2 chunk keeps its packed column and has no format-1 ones
    // (unless a mutation made them up).
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> v_packed;
    if (m.has_packed) {
      fbb.ForceVectorAlignment(m.packed.size(), 1, 8);
      v_packed = fbb.CreateVector(m.packed);
    }
    const bool v1_columns = !m.has_packed || !m.nodes.empty() || !m.refs.empty();
    auto v_nodes = fbb.CreateVectorOfStructs(m.nodes);
    auto v_refs = fbb.CreateVector(m.refs);
    auto v_classes = fbb.CreateVectorOfStructs(m.classes);
    auto v_operands = fbb.CreateVector(m.operands);
    auto v_literals = fbb.CreateVectorOfStructs(m.literals);
    auto v_strings = fbb.CreateVector(strings);
    auto v_tensors = fbb.CreateVector(tensors);
    auto v_tuples = fbb.CreateVector(tuples);
    auto v_meta = fbb.CreateVectorOfStructs(m.meta);
    auto v_trace_meta = fbb.CreateVectorOfStructs(m.trace_meta);
    auto v_functions = fbb.CreateVector(functions);
    fb::ChunkBuilder cb(fbb);
    cb.add_format_major(m.format_major);
    cb.add_format_minor(m.format_minor);
    if (m.has_producer) cb.add_producer(producer);
    cb.add_index(m.index);
    cb.add_base(m.base);
    cb.add_base_depth(m.base_depth);
    if (v1_columns) {
      cb.add_nodes(v_nodes);
      cb.add_refs(v_refs);
    }
    if (m.has_packed) cb.add_packed(v_packed);
    if (m.node_count != 0) cb.add_node_count(m.node_count);
    cb.add_classes(v_classes);
    cb.add_operands(v_operands);
    cb.add_literals(v_literals);
    cb.add_strings(v_strings);
    cb.add_tensors(v_tensors);
    if (!m.tuples.empty()) cb.add_tuples(v_tuples);
    cb.add_meta(v_meta);
    if (!m.trace_meta.empty()) cb.add_trace_meta(v_trace_meta);
    cb.add_functions(v_functions);
    if (m.last) cb.add_last(true);
    if (m.last || m.total_nodes) cb.add_total_nodes(m.total_nodes);
    fbb.FinishSizePrefixed(cb.Finish(), "IRTC");
    return Bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  }

  std::string HostileString() {
    static const char* const kPieces[] = {"\n",   "\x1b[31m", "\xff", "\xc3", "\xed\xa0\x80",
                                          "\"",   "\\",       "<",    "}",    "\r",
                                          "\x00", "%",        "@",    "§",    "&"};
    std::string s;
    size_t n = Chance(80) ? Below(16) : Below(std::max<size_t>(16, max_size_ / 4));
    if (Chance(30)) return std::string(n, static_cast<char>("a\n\xff\x01"[Below(4)]));
    while (s.size() < n) {
      const char* p = kPieces[Below(std::size(kPieces))];
      if (*p == 0)
        s.push_back('\0');
      else
        s += p;
    }
    return s;
  }

  fb::Value AddValue(ChunkModel* m, fb::Value v) {
    m->literals.push_back(v);
    return v;
  }

  void MutateModel(ChunkModel* m) {
    switch (Below(10)) {
      case 0: {  // a tensor with a hostile shape, as a literal
        ChunkModel::TensorModel t{static_cast<fb::DType>(Below(6)), {}, {}};
        switch (Below(5)) {
          case 0:
            t.shape.assign(33 + Below(8), 1);
            t.data.assign(8, 0);
            break;
          case 1:
            t.shape = {1ll << 31, 1ll << 31, 1ll << 31};
            break;
          case 2:
            t.shape = {-1, -1};
            t.data.assign(8, 0);
            break;
          case 3:
            t.shape = {0, 1ll << 62, 1ll << 62};
            break;
          default:
            t.shape = {static_cast<int64_t>(1 + Below(4)), static_cast<int64_t>(1 + Below(4))};
            t.data.assign(static_cast<size_t>(t.shape[0] * t.shape[1]) * (Chance(50) ? 8 : 4),
                          static_cast<uint8_t>(Below(3)));
        }
        if (!m->tensors.empty() && Chance(50)) {
          m->tensors[Below(m->tensors.size())] = t;
        } else {
          m->tensors.push_back(t);
          AddValue(m, fb::Value(m->tensors.size() - 1, fb::VKind::Tensor));
        }
        break;
      }
      case 1: {  // a chain of tuples sharing their items: a huge decoded size
        size_t first = m->tuples.size();
        m->tuples.push_back({fb::Value(0, fb::VKind::Nothing), fb::Value(1, fb::VKind::I64)});
        size_t n = 20 + Below(60);
        for (size_t i = 1; i < n; ++i) {
          uint64_t below = first + i - 1;
          m->tuples.push_back({fb::Value(below, fb::VKind::Tuple),
                               fb::Value(Chance(95) ? below : first + i, fb::VKind::Tuple)});
        }
        AddValue(m, fb::Value(m->tuples.size() - 1, fb::VKind::Tuple));
        break;
      }
      case 2:  // a hostile string
        if (m->strings.empty() || Chance(30))
          m->strings.push_back(HostileString());
        else
          m->strings[Below(m->strings.size())] = HostileString();
        break;
      case 3:  // metadata out of order, duplicated, or added
        if (m->meta.size() >= 2 && Chance(40)) {
          std::reverse(m->meta.begin(), m->meta.end());
        } else if (!m->meta.empty() && Chance(50)) {
          m->meta.push_back(m->meta[Below(m->meta.size())]);
        } else {
          m->strings.push_back(Chance(50) ? "error" : HostileString());
          m->strings.push_back(HostileString());
          uint32_t node = static_cast<uint32_t>(Count(static_cast<uint32_t>(m->nodes.size())));
          m->meta.emplace_back(fb::Value(m->strings.size() - 1, fb::VKind::String), node,
                               static_cast<uint32_t>(m->strings.size() - 2));
          std::stable_sort(
              m->meta.begin(), m->meta.end(),
              [](const fb::Meta& a, const fb::Meta& b) { return a.node() < b.node(); });
        }
        break;
      case 4:  // trace metadata
        m->strings.push_back(Chance(50) ? "status" : HostileString());
        m->strings.push_back(Chance(30) ? "failed" : HostileString());
        m->trace_meta.emplace_back(fb::Value(m->strings.size() - 1, fb::VKind::String), 0,
                                   static_cast<uint32_t>(m->strings.size() - 2));
        break;
      case 5:  // a node duplicated or removed (totals no longer agree)
        if (!m->nodes.empty()) {
          size_t k = Below(m->nodes.size());
          if (Chance(50))
            m->nodes.insert(m->nodes.begin() + static_cast<ptrdiff_t>(k), m->nodes[k]);
          else
            m->nodes.erase(m->nodes.begin() + static_cast<ptrdiff_t>(k));
        }
        break;
      case 6:  // this chunk ends the trace
        m->last = true;
        m->total_nodes = m->base + m->nodes.size() + (Chance(80) ? 0 : Below(3));
        break;
      case 7:  // a function IR text
        m->strings.push_back(HostileString());
        m->functions.emplace_back(static_cast<uint32_t>(m->strings.size() - 1),
                                  Chance(50) ? HostileString() : "1: (%1)\n  return %1\n");
        break;
      case 8:  // a class with many operands, all references
        if (!m->classes.empty()) {
          fb::NodeClass& k = m->classes[Below(m->classes.size())];
          uint16_t n = static_cast<uint16_t>(1 + Below(Chance(80) ? 8 : 300));
          uint32_t first = static_cast<uint32_t>(m->operands.size());
          m->operands.insert(m->operands.end(), n, 0);
          k = fb::NodeClass(k.op(), k.block(), k.pos(), k.aux(), first, k.line(), k.col(), n,
                            k.kind(), k.vkind(), k.flags());
          for (uint16_t j = 0; j < n; ++j) m->refs.push_back(static_cast<uint32_t>(1 + Below(4)));
        }
        break;
      default:  // a producer with a hostile name, or none
        if (Chance(20)) {
          m->has_producer = false;
        } else {
          m->has_producer = true;
          m->producer_name = HostileString();
        }
    }
  }

  Bytes Rebuild(Bytes b, const Framing& f) {
    size_t i = Below(f.chunks.size());
    std::vector<uint64_t> store;
    const fb::Chunk* c = Verified(b, f, i, &store);
    if (c == nullptr) return ByteMutate(std::move(b));
    ChunkModel m = Decode(c);
    MutateModel(&m);
    Bytes chunk = Encode(m);
    auto [at, len] = f.chunks[i];
    Bytes out(b.begin(), b.begin() + static_cast<ptrdiff_t>(at));
    out.insert(out.end(), chunk.begin(), chunk.end());
    // A chunk that now ends the trace drops what followed it, most of the time.
    if (!m.last || c->last() || Chance(20)) {
      out.insert(out.end(), b.begin() + static_cast<ptrdiff_t>(at + len), b.end());
    }
    return out;
  }

  std::mt19937_64 rng_;
  size_t max_size_;
  const ByteMutator& bytes_;
};

}  // namespace

std::vector<uint8_t> MutateTrace(std::span<const uint8_t> in, uint64_t seed, size_t max_size,
                                 const ByteMutator& bytes) {
  Mutator m(seed, max_size, bytes);
  return m.Run(in);
}

}  // namespace irt::fuzz
