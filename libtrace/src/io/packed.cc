// The packed node column of a format-2 chunk (packed.h; schema/README.md §4.3).
#include "io/packed.h"

#include <algorithm>
#include <cstring>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace irt::internal {

namespace {

enum Mode : uint8_t { kWritten = 0, kRepeat = 1, kCopied = 2 };

uint64_t ZigZag(uint64_t v) { return (v << 1) ^ (0 - (v >> 63)); }
uint64_t UnZigZag(uint64_t v) { return (v >> 1) ^ (0 - (v & 1)); }

inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Reads a varint of at most 10 bytes whose value fits 64 bits; false when
// the column ends first or the encoding is too long. Always inline: a call
// would take the address of the decoder's position, which then lives in
// memory, not in a register, through the whole loop.
[[gnu::always_inline]] inline bool GetVarint(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  if (p < end && *p < 0x80) {
    *v = *p++;
    return true;
  }
  uint64_t r = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p == end) return false;
    uint8_t b = *p++;
    if (shift == 63 && b > 1) return false;
    r |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (b < 0x80) {
      *v = r;
      return true;
    }
  }
  return false;
}

// Bytes of a written value of each kind: 0 none, 1 a byte, 4 or 8 raw
// little-endian, 9 a varint (an index), 10 a zigzag varint of the
// difference from the class's previous value (Int64).
int Payload(fb::VKind k) {
  switch (k) {
    case fb::VKind::Bool:
      return 1;
    case fb::VKind::I64:
      return 10;
    case fb::VKind::F64:
      return 8;
    case fb::VKind::F32:
      return 4;
    case fb::VKind::String:
    case fb::VKind::Function:
    case fb::VKind::Tensor:
    case fb::VKind::Tuple:
      return 9;
    default:
      return 0;
  }
}

// Where a block argument of class `k` finds its value when the jump that
// passed it is of class `jk`: a literal (its bits), the jump's reference
// number `ref` (the node it names holds the value), or nowhere. Depends on
// the two classes only, so the decoder remembers it per argument class.
struct CopySource {
  enum Kind : uint8_t { kNone, kLiteral, kRef } kind = kNone;
  uint64_t bits = 0;  // kLiteral
  uint32_t ref = 0;   // kRef
};

CopySource ResolveCopy(const PackTables& t, const fb::NodeClass& k, const fb::NodeClass& jk) {
  CopySource src;
  if (jk.kind() != fb::Kind::Jump) return src;
  const uint32_t passed = jk.n_operands() - ((jk.flags() & 1) ? 1u : 0u);
  const uint32_t arg = k.aux();
  if (arg == 0 || arg > passed) return src;
  const uint32_t* ops = t.operands.data() + jk.first_operand();
  const uint32_t code = ops[arg - 1];
  if (code != 0) {
    const fb::Value& lit = t.literals[code - 1];
    if (lit.vkind() != k.vkind()) return src;
    src.kind = CopySource::kLiteral;
    src.bits = lit.bits();
    return src;
  }
  for (uint32_t j = 0; j + 1 < arg; ++j) src.ref += ops[j] == 0 ? 1 : 0;
  src.kind = CopySource::kRef;
  return src;
}

// The value a block argument of class `k` copies from its jump, the node
// `jump_distance` before node `local`, given where the jump's class keeps
// it: false unless the jump, and the node its operand references, lie in
// the chunk and the value is of the argument's kind. The one derivation
// encoder and decoder share; always inline, as GetVarint is.
[[gnu::always_inline]] inline bool CopiedBits(const PackTables& t, const NodeRec* nodes,
                                              const uint32_t* refs, uint32_t local,
                                              uint64_t jump_distance, const fb::NodeClass& k,
                                              const CopySource& src, uint64_t* bits) {
  if (src.kind == CopySource::kLiteral) {
    *bits = src.bits;
    return true;
  }
  if (src.kind != CopySource::kRef) return false;
  const uint32_t jl = local - static_cast<uint32_t>(jump_distance);
  const uint64_t d = refs[nodes[jl].first_ref + src.ref];
  if (d == 0 || d > jl) return false;
  const NodeRec& target = nodes[jl - d];
  if (t.classes[target.cls].vkind() != k.vkind()) return false;
  *bits = target.value;
  return true;
}

// The jump a block argument names, when it lies in the chunk: its local index.
inline bool JumpInChunk(uint32_t local, uint64_t jump_distance, uint32_t* jl) {
  if (jump_distance == 0 || jump_distance > local) return false;
  *jl = local - static_cast<uint32_t>(jump_distance);
  return true;
}

}  // namespace

size_t PackNodes(const PackTables& t, std::span<const NodeRec> nodes,
                 std::span<const uint32_t> refs, GrowBuffer<uint8_t>* buffer) {
  // At most 10 bytes a varint, 8 a raw value.
  const size_t bound = nodes.size() * 20 + refs.size() * 10;
  uint8_t* const start = buffer->Reserve(bound);
  uint8_t* out = start;
  // Per class, in one 16-byte entry: its previous value, where its
  // previous distances are, its slots, its payload, and whether it may copy
  // and has been seen (flags). The encoder's mirror of DecodeClass.
  struct EncodeClass {
    uint64_t last;
    uint32_t slot_base;
    uint16_t slots;
    uint8_t payload;
    uint8_t flags;
  };
  constexpr uint8_t kBlockArg = 1, kSeen = 2;
  const size_t nclasses = t.classes.size();
  std::vector<EncodeClass> classes(nclasses);
  uint64_t total_slots = 0;
  for (size_t i = 0; i < nclasses; ++i) {
    const fb::NodeClass& k = t.classes[i];
    const bool block_arg = k.kind() == fb::Kind::Argument && k.aux() != 0 && t.slots[i] == 1;
    classes[i] = {0, static_cast<uint32_t>(total_slots), t.slots[i],
                  static_cast<uint8_t>(Payload(k.vkind())), block_arg ? kBlockArg : uint8_t{0}};
    total_slots += t.slots[i];
  }
  std::vector<uint64_t> prev_buf(total_slots, 0);
  std::vector<uint32_t> memo_jump(nclasses, ~0u);
  std::vector<CopySource> memo(nclasses);
  const uint32_t* const ref_base = refs.data();
  uint64_t* const prev_base = prev_buf.data();
  EncodeClass* const cls = classes.data();
  const uint32_t count = static_cast<uint32_t>(nodes.size());
  for (uint32_t local = 0; local < count; ++local) {
    const NodeRec& n = nodes[local];
    const uint32_t c = n.cls;
    EncodeClass& k = cls[c];
    const uint64_t v = n.value;
    const uint32_t* r = ref_base + n.first_ref;
    uint64_t mode = kWritten;
    if (k.payload != 0) {
      uint32_t jl;
      uint64_t copied = 0;
      if ((k.flags & kBlockArg) && JumpInChunk(local, r[0], &jl)) [[unlikely]] {
        const uint32_t jc = nodes[jl].cls;
        if (memo_jump[c] != jc) {
          memo_jump[c] = jc;
          memo[c] = ResolveCopy(t, t.classes[c], t.classes[jc]);
        }
        if (CopiedBits(t, nodes.data(), ref_base, local, r[0], t.classes[c], memo[c], &copied) &&
            copied == v) {
          mode = kCopied;
        }
      }
      if (mode == kWritten && (k.flags & kSeen) && k.last == v) mode = kRepeat;
    }
    out = PutVarint(out, (uint64_t{c} << 2) | mode);
    uint64_t* prev = prev_base + k.slot_base;
    for (uint32_t j = 0; j < k.slots; ++j) {
      out = PutVarint(out, ZigZag(uint64_t{r[j]} - prev[j]));
      prev[j] = r[j];
    }
    if (mode == kWritten) {
      switch (k.payload) {
        case 8:
          memcpy(out, &v, 8);  // little-endian (column_reader.cc asserts it)
          out += 8;
          break;
        case 1:
          *out++ = static_cast<uint8_t>(v);
          break;
        case 10:
          out = PutVarint(out, ZigZag(v - k.last));
          break;
        case 4:
          memcpy(out, &v, 4);
          out += 4;
          break;
        case 9:
          out = PutVarint(out, v);
          break;
        default:
          break;
      }
    }
    k.last = v;
    k.flags |= kSeen;
  }
  return static_cast<size_t>(out - start);
}

namespace {

// Why UnpackNodes refused a node; UnpackError words it, out of the loop.
enum class Bad : uint8_t {
  kNone,
  kHeader,
  kClass,
  kRefs,
  kRef,
  kDistance,
  kValue,
  kValueVarint,
  kRepeat,
  kCopy,
  kMode,
};

[[gnu::cold, gnu::noinline]] Status UnpackError(Bad why, uint32_t local, uint64_t a, uint64_t b,
                                                uint32_t* failed) {
  *failed = local;
  std::string what;
  switch (why) {
    case Bad::kNone:
      break;
    case Bad::kHeader:
      what = "truncated or overlong node header";
      break;
    case Bad::kClass:
      what = "class " + std::to_string(a) + " out of range (chunk has " + std::to_string(b) + ")";
      break;
    case Bad::kRefs:
      what = "more than " + std::to_string(kMaxPackedRefs) + " references";
      break;
    case Bad::kRef:
      what = "truncated or overlong reference";
      break;
    case Bad::kDistance:
      what = "reference distance beyond 32 bits";
      break;
    case Bad::kValue:
      what = "truncated value";
      break;
    case Bad::kValueVarint:
      what = "truncated or overlong value";
      break;
    case Bad::kRepeat:
      what = "repeats a value its class has not had in this chunk";
      break;
    case Bad::kCopy:
      what = "copies a value from a jump operand that it cannot";
      break;
    case Bad::kMode:
      what = "unknown value mode 3";
      break;
  }
  return DataError("packed column: " + what);
}

// What the decoder keeps of a class: what its encoding depends on and its
// previous value, in one 16-byte entry.
struct DecodeClass {
  uint64_t last;       // its previous value in the chunk (when kSeen)
  uint32_t slot_base;  // its first entry in the previous distances
  uint16_t slots;
  uint8_t payload;  // Payload() of its value kind
  uint8_t flags;    // kBlockArg, kSeen
};
constexpr uint8_t kBlockArg = 1;  // may copy its value (mode 2)
constexpr uint8_t kSeen = 2;      // has had a value in this chunk

// Whether the processor has PREFETCHW (CPUID 0x80000001, ECX bit 8), which
// takes a cache line for writing ahead of the stores into it.
bool HasPrefetchW() {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(0x80000001, &a, &b, &c, &d) != 0 && (c & (1u << 8)) != 0;
#else
  return false;
#endif
}

thread_local bool t_for_another_thread = false;

// Takes the next block's output lines for writing: the 1 KiB of nodes
// after the 1 KiB from `node` on (64 nodes), and 512 bytes of distances
// 512 bytes past `ref`. On a thread that decodes for another
// (DecodeForAnotherThread), the buffers were last read on the other core,
// so without it each store first fetched its line back from there and the
// decoder waited for it: irt-grad's forward pass on W1 took 72-96 ms, 59-66
// ms with it. Not elsewhere: where the buffers stay on one core, it costs
// the decoder a few percent. Addresses, not pointers: the lines may lie
// past the buffers' ends (a prefetch does not fault).
[[gnu::always_inline]] inline void PrefetchColumns(const NodeRec* node, const uint32_t* ref) {
#if defined(__x86_64__) && defined(__GNUC__)
  constexpr uintptr_t kAhead = 1024, kLine = 64;
  const uintptr_t n = reinterpret_cast<uintptr_t>(node) + kAhead;
  const uintptr_t r = reinterpret_cast<uintptr_t>(ref) + kAhead / 2;
  for (uintptr_t i = 0; i < kAhead; i += kLine) asm volatile("prefetchw (%0)" ::"r"(n + i));
  for (uintptr_t i = 0; i < kAhead / 2; i += kLine) asm volatile("prefetchw (%0)" ::"r"(r + i));
#else
  (void)node;
  (void)ref;
#endif
}

// A node of at most kFastSlots reference slots takes at most kSafeBytes:
// a header, its distances and its value, 10 bytes each at most. While that
// many bytes remain, the decoder reads them without checking for the end.
constexpr uint32_t kFastSlots = 8;
constexpr size_t kSafeBytes = 10 * (kFastSlots + 2);

// A varint, the one-byte case inline. Unchecked (kChecked false), 10 bytes
// must remain: GetVarint reads no more than that.
template <bool kChecked>
[[gnu::always_inline]] inline bool Varint(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  if ((!kChecked || p < end) && *p < 0x80) {
    *v = *p++;
    return true;
  }
  return GetVarint(p, kChecked ? end : p + 10, v);
}

}  // namespace

Status UnpackNodes(const PackTables& t, std::span<const uint8_t> packed, uint32_t count,
                   NodeRec* nodes, uint32_t* const refs, uint64_t* n_refs, uint32_t* failed) {
  *failed = ~0u;
  *n_refs = 0;
  // Every node takes a byte at least, so the count is bounded by the column.
  if (count > packed.size()) {
    return DataError(std::to_string(count) + " nodes in a packed column of " +
                     std::to_string(packed.size()) + " bytes");
  }
  if (count > kMaxPackedNodes) {
    return DataError(std::to_string(count) + " nodes, more than a format-2 chunk may hold (" +
                     std::to_string(kMaxPackedNodes) + ")");
  }
  const uint32_t nclasses = static_cast<uint32_t>(t.classes.size());
  std::vector<DecodeClass> classes(nclasses);
  uint64_t total_slots = 0;
  for (uint32_t i = 0; i < nclasses; ++i) {
    const fb::NodeClass& k = t.classes[i];
    const bool block_arg = k.kind() == fb::Kind::Argument && k.aux() != 0 && t.slots[i] == 1;
    classes[i] = {0, static_cast<uint32_t>(total_slots), t.slots[i],
                  static_cast<uint8_t>(Payload(k.vkind())), block_arg ? kBlockArg : uint8_t{0}};
    total_slots += t.slots[i];
  }
  std::vector<uint64_t> prev_buf(total_slots, 0);  // previous distance per class and slot
  std::vector<uint32_t> memo_jump(nclasses, ~0u);
  std::vector<CopySource> memo(nclasses);
  // Every reference slot takes a byte at least too, so the distances fit
  // the room unless the column is longer than kMaxPackedRefs.
  const uint64_t max_refs = PackedRefRoom(packed.size());
  const bool bound_refs = packed.size() > kMaxPackedRefs;
  DecodeClass* const cls_of = classes.data();
  uint64_t* const prev_all = prev_buf.data();
  uint64_t nr = 0;
  const uint8_t* p = packed.data();
  const uint8_t* const end = p + packed.size();
  const uint8_t* const safe_end = packed.size() > kSafeBytes ? end - kSafeBytes : p;
  // A node's distances and value once its header is read: Bad::kNone, or
  // why they do not decode. Unchecked when kSafeBytes remained at the
  // header and the class has at most kFastSlots slots.
  uint64_t head = 0;
  uint32_t local = 0;
  auto body = [&]<bool kChecked>(DecodeClass & k, uint32_t c) __attribute__((always_inline))->Bad {
    const uint32_t first = static_cast<uint32_t>(nr);
    uint64_t* prev = prev_all + k.slot_base;
    for (uint32_t j = 0; j < k.slots; ++j) {
      if ((!kChecked || p < end) && *p == 0) {
        // The distance of the slot's previous node again (a loop's common
        // case): already bounded when it was stored.
        ++p;
        refs[nr++] = static_cast<uint32_t>(prev[j]);
        continue;
      }
      uint64_t z;
      if (!Varint<kChecked>(p, end, &z)) return Bad::kRef;
      const uint64_t d = prev[j] + UnZigZag(z);
      if (d > 0xFFFFFFFFull) return Bad::kDistance;
      prev[j] = d;
      refs[nr++] = static_cast<uint32_t>(d);
    }
    uint64_t v = 0;
    switch (head & 3) {
      case kWritten:
        switch (k.payload) {
          case 1:
            if (kChecked && p == end) return Bad::kValue;
            v = *p++;
            break;
          case 4:
            if (kChecked && end - p < 4) return Bad::kValue;
            memcpy(&v, p, 4);
            p += 4;
            break;
          case 8:
            if (kChecked && end - p < 8) return Bad::kValue;
            memcpy(&v, p, 8);
            p += 8;
            break;
          case 9:
            if (!Varint<kChecked>(p, end, &v)) return Bad::kValueVarint;
            break;
          case 10: {
            uint64_t z;
            if (!Varint<kChecked>(p, end, &z)) return Bad::kValueVarint;
            v = k.last + UnZigZag(z);
            break;
          }
          default:
            break;
        }
        break;
      case kRepeat:
        if (k.payload == 0 || !(k.flags & kSeen)) return Bad::kRepeat;
        v = k.last;
        break;
      case kCopied: {
        // The node is stored below only after its value is known, so the
        // jump and its operand are earlier nodes, already decoded.
        const bool block_arg = k.flags & kBlockArg;
        const uint64_t jd = block_arg ? refs[first] : 0;
        uint32_t jl;
        bool ok = block_arg && JumpInChunk(local, jd, &jl);
        if (ok) {
          // Resolved once per pair of argument and jump class.
          const uint32_t jc = nodes[jl].cls;
          if (memo_jump[c] != jc) {
            memo_jump[c] = jc;
            memo[c] = ResolveCopy(t, t.classes[c], t.classes[jc]);
          }
          ok = CopiedBits(t, nodes, refs, local, jd, t.classes[c], memo[c], &v);
        }
        if (!ok) return Bad::kCopy;
        break;
      }
      default:
        return Bad::kMode;
    }
    nodes[local] = NodeRec{v, c, first};
    k.last = v;
    k.flags |= kSeen;
    return Bad::kNone;
  };
  static const bool has_prefetch_w = HasPrefetchW();
  const bool prefetch = has_prefetch_w && t_for_another_thread;
  // In blocks of kBlock nodes, so that the prefetches cost the loop nothing.
  constexpr uint32_t kBlock = 64;
  for (uint32_t block_end = 0; local < count; local = block_end) {
    block_end = count - local > kBlock ? local + kBlock : count;
    if (prefetch) PrefetchColumns(nodes + local, refs + nr);
    for (; local < block_end; ++local) {
      const bool safe = p < safe_end;
      if (!(safe ? Varint<false>(p, end, &head) : Varint<true>(p, end, &head))) {
        return UnpackError(Bad::kHeader, local, 0, 0, failed);
      }
      const uint64_t cls = head >> 2;
      if (cls >= nclasses) return UnpackError(Bad::kClass, local, cls, nclasses, failed);
      const uint32_t c = static_cast<uint32_t>(cls);
      DecodeClass& k = cls_of[c];
      if (bound_refs && nr + k.slots > max_refs) {
        return UnpackError(Bad::kRefs, local, nr + k.slots, 0, failed);
      }
      // The header took 10 bytes at most, so kSafeBytes - 10 remain.
      const Bad why = safe && k.slots <= kFastSlots ? body.template operator()<false>(k, c)
                                                    : body.template operator()<true>(k, c);
      if (why != Bad::kNone) [[unlikely]]
        return UnpackError(why, local, 0, 0, failed);
    }
  }
  *n_refs = nr;
  if (p != end) {
    return DataError("packed column: " + std::to_string(end - p) + " bytes after node " +
                     std::to_string(count == 0 ? 0 : count - 1));
  }
  return Status::Ok();
}

void DecodeForAnotherThread() { t_for_another_thread = true; }

}  // namespace irt::internal
