// The trace writer: the one public API through which every adapter produces a
// trace. It streams self-contained, size-prefixed chunks to an Output as
// nodes arrive, holding at most one chunk in memory and never seeking back,
// so a writer that dies leaves every completed chunk readable.
#ifndef IRT_WRITER_H_
#define IRT_WRITER_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/control_flow.h"
#include "irt/output.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace irt {

/// An operand of a statement: a dynamic reference to an earlier node, or a
/// literal written in the IR.
struct OperandSpec {
  bool is_ref = true;
  Value literal;  // when !is_ref
  static OperandSpec Ref() { return {}; }
  static OperandSpec Literal(Value v) { return {false, std::move(v)}; }
};

/// The static description of the nodes one IR statement produces. Define it
/// once (DefineClass) and append many nodes with it.
struct ClassSpec {
  NodeKind kind = NodeKind::kPrimitive;
  std::string op;      // primitive, callee or special name; empty if none
  uint32_t block = 0;  // 1-based IR block
  uint32_t pos = 0;    // SSA id, or branch position for Jump/Return
  uint32_t aux = 0;    // Jump: target block; Argument: 0 or block-arg number
  uint32_t line = 0;   // source span, 0 if unknown
  uint16_t col = 0;
  bool has_condition = false;         // Jump: last operand is its condition
  bool condition_taken_when = false;  // Jump: taken when condition == this
  std::vector<OperandSpec> operands;
};

using ClassId = uint32_t;

struct WriterOptions {
  std::string producer_name = "irtrace";
  std::string producer_version;
  /// A chunk is closed when it holds this many nodes...
  uint32_t chunk_nodes = 1u << 16;
  /// ...or when its encoded size would exceed this many bytes.
  uint64_t chunk_bytes = 64ull << 20;
  /// If given (it must outlive the writer), counts the nodes and bytes of
  /// each chunk written.
  Progress* progress = nullptr;
  /// The format written: 2 (packed nodes, the default) or 1 (format 1.1,
  /// for readers older than format 2).
  uint16_t format_major = kFormatMajor;
  /// Finish (pack) and write each full chunk on a second thread while the
  /// next one is recorded, when the machine has two cores and no progress
  /// is counted; at most one chunk is in flight. The bytes written are the
  /// same either way; an error met there is returned by the next chunk's
  /// append or by Finish.
  bool write_behind = true;
};

class TraceWriter {
 public:
  /// Writes to `out`, which must outlive the writer.
  TraceWriter(Output* out, WriterOptions options);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  /// Registers a static node shape. Cheap to call once per IR statement.
  ClassId DefineClass(ClassSpec spec);
  /// Records the IR text of a function; it is stored in every chunk that
  /// opens a call to it (so each chunk stays self-contained). What a chunk
  /// stores is what is registered when the chunk is finished, so a front
  /// end may register, or re-register, a function while its calls run.
  void RegisterFunction(std::string name, std::string ir_text);
  /// Records the control-flow facts of a function (format 1.1): its blocks,
  /// and the branches and returns of each with their conditions and
  /// targets, as control dependences and replay read them. They are stored
  /// with its IR text (if any) in every chunk that opens a call to it. An
  /// adapter registers them for every function it records; a function
  /// without them gets "no control-flow facts" warnings from those tools.
  /// Facts that CheckControlFlow refuses make status() an error.
  void RegisterControlFlow(std::string name, ControlFlow facts);

  /// Appends a node of class `cls` with `value` and one reference per Ref
  /// operand of the class, in order (each must name an earlier node).
  /// Kind Call opens a call (its body follows); kinds Return and Error close
  /// the innermost open call. Returns the node's global id.
  NodeId Append(ClassId cls, const Value& value, std::span<const NodeId> refs);
  /// The same for a scalar value (Nothing, Bool, I64, F64, F32; None for a
  /// node without value) given as its bits (Value::bits()), inline and
  /// without a Value: one capacity check, a 16-byte node store and one
  /// distance per reference into the open chunk. Every check of Append is
  /// kept (the first append of a class in a chunk, a full chunk and any
  /// misuse take Append's path). This is the recording front ends' path.
  [[gnu::always_inline]] NodeId AppendScalar(ClassId cls, VKind vk, uint64_t bits,
                                             const NodeId* refs, uint32_t n_refs) {
    const NodeId id = next_id_;
    const size_t key = static_cast<size_t>(cls) * kNumVKinds + static_cast<size_t>(vk);
    if (key < fast_.size() && n_nodes_ < fast_limit_ && n_refs <= kFastMaxRefs &&
        (vk != VKind::kBool || bits <= 1)) {
      const FastClass fc = fast_[key];
      if (fc.stamp == chunk_stamp_ && fc.n_refs == n_refs &&
          StageInline(fc.local, bits, refs, n_refs))
        return id;
    }
    return AppendScalarChecked(cls, vk, bits, refs, n_refs);
  }
  NodeId AppendScalar(ClassId cls, VKind vk, uint64_t bits, std::initializer_list<NodeId> refs) {
    return AppendScalar(cls, vk, bits, refs.begin(), static_cast<uint32_t>(refs.size()));
  }
  /// Attaches metadata to the node appended last.
  void AddMeta(std::string_view key, const Value& value);
  /// Attaches trace-level metadata (stored on the final chunk).
  void AddTraceMeta(std::string_view key, const Value& value);

  NodeId next_id() const { return next_id_; }
  /// Open calls (the root included) at this point.
  uint32_t depth() const { return static_cast<uint32_t>(open_calls_.size()); }
  /// Global id of the innermost open call marker.
  NodeId innermost_call() const { return open_calls_.back(); }

  /// Writes the final chunk. All calls must be closed. Returns the first
  /// error of any write (they are sticky) or of misuse.
  Status Finish();
  /// The first error so far (misuse of the API or a failed write).
  const Status& status() const { return status_; }

 private:
  // A node of the open chunk as the chunk stores it (fb::Node's layout).
  struct StagedNode {
    uint64_t bits;
    uint32_t cls;  // chunk-local class
    uint32_t first_ref;
  };
  // What the fast path knows of a (class, value kind) in the open chunk.
  struct FastClass {
    uint64_t stamp = 0;  // == chunk_stamp_ while `local` is valid
    uint32_t local = 0;
    // The references a node passes; ~0u: not a fast class. A class that
    // opens or closes a call has kOpens or kCloses added, so that the
    // inline path leaves it to AppendScalarFlow.
    uint32_t n_refs = ~0u;
  };
  static constexpr uint32_t kOpens = 1u << 8, kCloses = 1u << 9;
  // The staged columns are written with stores that bypass the cache
  // (x86-64's movnti; plain stores elsewhere). The packer reads them next,
  // on the other core when writing behind: a cached store would first
  // fetch each line back from that core, which stalled the recording
  // thread (W1 recorded in 136-241 ms with the second thread, 88-96 ms
  // with these stores). Flush fences them before the handover.
  using StreamAlias64 [[gnu::may_alias]] = long long;
  using StreamAlias32 [[gnu::may_alias]] = int;
  [[gnu::always_inline]] static void StreamRef(uint32_t* p, uint32_t v) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_ia32_movnti(reinterpret_cast<StreamAlias32*>(p), static_cast<int>(v));
#else
    *p = v;
#endif
  }
  [[gnu::always_inline]] static void StreamNode(StagedNode* p, uint64_t bits, uint32_t local,
                                                uint32_t first_ref) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_ia32_movnti64(reinterpret_cast<StreamAlias64*>(&p->bits),
                            static_cast<long long>(bits));
    __builtin_ia32_movnti64(reinterpret_cast<StreamAlias64*>(&p->cls),
                            static_cast<long long>(uint64_t{local} | uint64_t{first_ref} << 32));
#else
    *p = StagedNode{bits, local, first_ref};
#endif
  }
  static constexpr uint32_t kFastMaxRefs = 8;
  // Stores a node of chunk-local class `local` with `bits` and its
  // distances to `refs` into the open chunk (which has room: fast_limit_);
  // false, storing nothing, when a reference is not an earlier node within
  // 2^32. Every member is read before the first store, so that the stores
  // (through uint32_t pointers, which may alias the counters) force no
  // reloads.
  [[gnu::always_inline]] bool StageInline(uint32_t local, uint64_t bits, const NodeId* refs,
                                          uint32_t n_refs) {
    const NodeId id = next_id_;
    const uint32_t n = n_nodes_, first = n_refs_;
    uint32_t* const out = refs_ + first;
    for (uint32_t i = 0; i < n_refs; ++i) {
      // Unsigned: an id at or after `id` wraps to a huge distance.
      NodeId d = id - refs[i] - 1;
      if (d >= 0xFFFFFFFFull) return false;
      StreamRef(out + i, static_cast<uint32_t>(d + 1));
    }
    StreamNode(nodes_ + n, bits, local, first);
    n_refs_ = first + n_refs;
    n_nodes_ = n + 1;
    next_id_ = id + 1;
    return true;
  }
  // AppendScalar's path for a class that opens or closes a call (a call
  // marker, a Return, an Error): out of line, so the inline path stays small.
  NodeId AppendScalarFlow(ClassId cls, VKind vk, uint64_t bits, const NodeId* refs,
                          uint32_t n_refs);
  // Append's path for a String or Function value that its class's last
  // node in this chunk had; kNoNode when it does not apply.
  NodeId AppendRepeatedString(ClassId cls, const Value& value, std::span<const NodeId> refs);
  // Append's path for what its inline path leaves (values that are not
  // scalars, errors), out of line.
  [[gnu::noinline]] NodeId AppendValue(ClassId cls, const Value& value,
                                       std::span<const NodeId> refs);
  NodeId AppendScalarChecked(ClassId cls, VKind vk, uint64_t bits, const NodeId* refs,
                             uint32_t n_refs);
  // Append's checks (and the flush of a full chunk); false after Fail().
  bool Admit(ClassId cls, const NodeId* refs, size_t n_refs, uint64_t extra_bytes);
  // Appends an admitted node: its value is *value, or `bits` when null.
  NodeId Stage(ClassId cls, VKind vk, const Value* value, uint64_t bits, const NodeId* refs,
               size_t n_refs);
  void UpdateFastLimit();
  // Points nodes_, refs_ and refs_cap_ at Impl's buffers.
  void TakeStaging();
  void Fail(Status s) {
    status_ = std::move(s);
    fast_limit_ = 0;
  }

  struct Impl;
  std::unique_ptr<Impl> impl_;
  // The open chunk's nodes and reference distances; the fast path writes
  // them inline while n_nodes_ < fast_limit_ (0 after an error). Impl owns
  // the buffers.
  StagedNode* nodes_ = nullptr;
  uint32_t n_nodes_ = 0;
  uint32_t fast_limit_ = 0;
  uint32_t* refs_ = nullptr;
  uint32_t n_refs_ = 0;
  uint32_t refs_cap_ = 0;
  std::vector<FastClass> fast_;
  uint64_t chunk_stamp_ = 1;
  NodeId next_id_ = 0;
  std::vector<NodeId> open_calls_;
  Status status_;
  friend struct Impl;
};

}  // namespace irt

#endif  // IRT_WRITER_H_
