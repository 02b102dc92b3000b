// The node-level half of the checker: every node of a verified chunk
// (CheckNodes, CheckNode), the calls that cross chunks (CallStack,
// StreamCheck, CheckFinalChunk), and the memory of decoded format-2
// columns (DecodeArena). The chunk's framing and tables are in chunk.cc.
#include <fcntl.h>
#include <flatbuffers/flatbuffers.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "io/chunk.h"
#include "io/tempfile.h"

namespace irt::internal {

bool CallStack::Reads(const ChunkColumns& c) {
  return std::any_of(c.classes.begin(), c.classes.end(),
                     [](const ClassFacts& k) { return k.kind == NodeKind::kCall || k.closer(); });
}

Status CallStack::Feed(const ChunkColumns& c, NodeId* failed_node) {
  // A chunk whose classes open and close no call (most of a long loop's)
  // leaves the stack as it is: its nodes need not be read, nor its column
  // pointers (which the reader may be giving back meanwhile).
  if (!Reads(c)) return Status::Ok();
  // Every node is read: plain column loads, without building a RawNode.
  // (Copied to locals: push_back could alias them otherwise.)
  const NodeRec* const nodes = c.nodes;
  const ClassFacts* const classes = c.classes.data();
  const uint32_t* const refs = c.refs;
  const NodeId base = c.base;
  const uint32_t count = c.count;
  for (uint32_t local = 0; local < count; ++local) {
    const NodeRec& node = nodes[local];
    const ClassFacts& k = classes[node.cls];
    if (k.kind == NodeKind::kCall) {
      GrowStack(open_);
      open_.push_back(base + local);
      ++calls_;
      max_depth_ = std::max<uint64_t>(max_depth_, open_.size());
    } else if (k.closer()) {
      const NodeId id = base + local;
      const NodeId marker = id - refs[node.first_ref + k.n_refs];
      if (open_.empty() || marker != open_.back()) {
        *failed_node = id;
        return DataError("closes node " + std::to_string(marker) +
                         (open_.empty() ? ", but no call is open"
                                        : ", but the innermost open call starts at node " +
                                              std::to_string(open_.back())));
      }
      open_.pop_back();
    }
  }
  return Status::Ok();
}

Status CheckFinalChunk(const ChunkColumns& c, NodeId nodes, const CallStack& calls) {
  if (c.total_nodes != nodes) {
    return DataError("chunk " + std::to_string(c.index) + ": final chunk says " +
                     std::to_string(c.total_nodes) + " nodes, the chunks hold " +
                     std::to_string(nodes));
  }
  if (calls.depth() != 0) {
    return DataError("the trace ends with " + std::to_string(calls.depth()) +
                     " calls still open (the call at node " + std::to_string(calls.innermost()) +
                     " never returns)");
  }
  return Status::Ok();
}

Status StreamCheck::Feed(const ChunkColumns& c, const ChunkInfo& info) {
  if (info.base_depth != calls_.depth()) {
    return DataError(name_ + ": chunk " + std::to_string(info.index) + ": starts at call depth " +
                     std::to_string(info.base_depth) + ", the nodes before it leave " +
                     std::to_string(calls_.depth()) + " calls open");
  }
  NodeId failed = kNoNode;
  Status s = calls_.Feed(c, &failed);
  if (!s.ok()) return DataError(name_ + ": " + At(info.index, failed, s.message()));
  nodes_ += c.count;
  if (info.last) {
    complete_ = true;
    Status fs = CheckFinalChunk(c, nodes_, calls_);
    if (!fs.ok()) return fs.Prefixed(name_);
  }
  return Status::Ok();
}

Status StreamCheck::Finish() const {
  if (!complete_) return DataError(name_ + ": trace is incomplete: no final chunk");
  return Status::Ok();
}

std::string ChunkError(uint64_t chunk, uint64_t byte, const ChunkFacts& facts,
                       const std::string& what) {
  if (facts.failed_node != kNoNode) return At(chunk, facts.failed_node, what);
  return "chunk " + std::to_string(chunk) + " at byte " + std::to_string(byte) + ": " + what;
}

namespace {

// Why CheckNodes refused a node; NodeError words it. Kept out of the loop so
// that the loop stays small.
enum class Why {
  kFirstNotCall,    // a: the node's kind
  kAfterRoot,       //
  kRefMarker,       // a: reference number, b: target
  kRefJump,         // a: reference number, b: target
  kRefClosed,       // a: reference number, b: target
  kBlockArgJump,    //
  kBlockArgK,       // a: aux, b: block arguments the jump passes
  kClosesWrong,     // a: marker, b: innermost open marker
  kClosesNone,      // a: marker
  kClosesNotInner,  // a: marker
};

[[gnu::cold, gnu::noinline]] Status NodeError(ChunkFacts* facts, NodeId id, Why why, uint64_t a = 0,
                                              uint64_t b = 0) {
  facts->failed_node = id;
  auto n = [](uint64_t v) { return std::to_string(v); };
  switch (why) {
    case Why::kFirstNotCall:
      return DataError("the first node must open the root call, it is of kind " +
                       std::string(NodeKindName(static_cast<NodeKind>(a))));
    case Why::kAfterRoot:
      return DataError("node after the root call has closed");
    case Why::kRefMarker:
      return DataError("reference " + n(a) + " points to the call marker at node " + n(b) +
                       ", which has no value (a call's value is its closer's)");
    case Why::kRefJump:
      return DataError("reference " + n(a) + " points to the jump at node " + n(b) +
                       ", which has no value");
    case Why::kRefClosed:
      return DataError("reference " + n(a) + " points to node " + n(b) +
                       ", inside a call that has closed (only its closer is visible)");
    case Why::kBlockArgJump:
      return DataError("a block argument must reference the last jump of its call");
    case Why::kBlockArgK:
      return DataError("block argument " + n(a) + " of a jump that passes " + n(b));
    case Why::kClosesWrong:
      return DataError("closes node " + n(a) + ", but the innermost open call starts at node " +
                       n(b));
    case Why::kClosesNone:
      return DataError("closes node " + n(a) + ", but no call is open");
    case Why::kClosesNotInner:
      return DataError("closes node " + n(a) + ", which is not the innermost open call");
  }
  return DataError("invalid node");
}

[[gnu::cold, gnu::noinline]] Status NodeCheckError(const fb::Chunk* c, ChunkFacts* facts,
                                                   uint32_t local, NodeId id) {
  Status s = CheckNode(c, *facts, local, id);
  facts->failed_node = id;
  return s.ok() ? DataError("invalid node") : s;
}

// CheckNodesPass's failure in its quick pass, which the worded pass then
// replaces: never shown.
[[gnu::cold, gnu::noinline]] Status QuickFailure() { return DataError("a node fails"); }

// A check of reference `from - 1` of node `id` failed with `why`: a bad
// distance of a later reference (`from` to `nrefs`) is reported instead, as
// CheckNode reports it, since distances come before targets.
[[gnu::cold, gnu::noinline]] Status RefError(const fb::Chunk* c, ChunkFacts* facts, uint32_t local,
                                             NodeId id, const uint32_t* node_refs, uint32_t from,
                                             uint32_t nrefs, Why why, uint64_t a = 0,
                                             uint64_t b = 0) {
  for (uint32_t j = from; j < nrefs; ++j) {
    if (uint64_t{flatbuffers::EndianScalar(node_refs[j])} - 1 >= id) {
      return NodeCheckError(c, facts, local, id);
    }
  }
  return NodeError(facts, id, why, a, b);
}

}  // namespace

DecodeArena::~DecodeArena() {
  for (const Block& b : blocks_) {
    switch (b.where) {
      case Block::kFile:
        munmap(b.base, b.size);
        break;
      case Block::kTensorBlock:
        FreeTensorBlock(b.base, b.size);
        break;
      case Block::kHeap:
        ::operator delete(b.base);
        break;
    }
  }
  if (fd_ >= 0) close(fd_);
}

void* DecodeArena::Allocate(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  bytes = (bytes + 15) & ~size_t{15};
  if (blocks_.empty() || blocks_.back().size - blocks_.back().used < bytes) {
    // A small trace's columns in one kSmallBlock from the heap: its first
    // touches cost a few page faults, where a huge page costs the clearing
    // of 2 MiB. Then blocks that double from 2 MiB up to 64 MiB (or the
    // request), in whole 2 MiB pages.
    constexpr size_t kHuge = size_t{2} << 20;
    if (blocks_.empty() && bytes <= kSmallBlock && memory_limit_ >= kSmallBlock) {
      blocks_.push_back(
          {static_cast<uint8_t*>(::operator new(kSmallBlock)), kSmallBlock, 0, Block::kHeap});
      memory_bytes_ += kSmallBlock;
    } else {
      size_t want = blocks_.empty() || blocks_.back().size < kHuge
                        ? kHuge
                        : std::min(blocks_.back().size * 2, size_t{64} << 20);
      size_t size = std::max(want, (bytes + kHuge - 1) / kHuge * kHuge);
      void* p = nullptr;
      const bool in_memory = memory_bytes_ + size <= memory_limit_;
      if (in_memory) {
        p = AllocateTensorBlock(size, /*zero=*/false);  // on huge pages
        memory_bytes_ += size;
      } else {
        if (fd_ < 0) {
          Result<int> fd = CreateSpoolFile("decoded trace columns");
          if (!fd.ok()) throw std::bad_alloc();
          fd_ = *fd;
        }
        // Disk blocks reserved first: a write to a mapped hole of a full disk
        // would kill the process (SIGBUS) instead of failing here.
        if (posix_fallocate(fd_, static_cast<off_t>(file_bytes_), static_cast<off_t>(size)) != 0) {
          throw std::bad_alloc();
        }
        p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                 static_cast<off_t>(file_bytes_));
        if (p == MAP_FAILED) throw std::bad_alloc();
        file_bytes_ += size;
      }
      blocks_.push_back(
          {static_cast<uint8_t*>(p), size, 0, in_memory ? Block::kTensorBlock : Block::kFile});
    }
  }
  Block& b = blocks_.back();
  void* out = b.base + b.used;
  b.used += bytes;
  return out;
}

NodeColumn NodesOf(const fb::Chunk* c, const ChunkFacts& facts) {
  NodeColumn col;
  if (facts.packed) {
    col.nodes = facts.decoded_nodes;
    col.count = facts.decoded_count;
    col.refs = facts.decoded_refs;
    col.n_refs = facts.decoded_n_refs;
  } else {
    if (c->nodes()) {
      col.nodes = reinterpret_cast<const NodeRec*>(c->nodes()->Data());
      col.count = c->nodes()->size();
    }
    if (c->refs()) {
      col.refs = c->refs()->data();
      col.n_refs = c->refs()->size();
    }
  }
  return col;
}

// In the quick pass (kExplain false) a node that fails only fails the
// chunk: nothing a message needs is kept alive through the loop, which
// leaves the compiler its registers. CheckNodes then checks the chunk again
// with kExplain, the same code, which words the first failure.
//
// kCallFree: the chunk has no class of kind Call, Return or Error (most
// chunks of a long loop), so no call opens or closes in it and every node
// belongs to the body of the call open when it starts. The nesting state
// is then constant, and the loop skips what only calls change: the body
// each node belongs to, the closed markers and the visibility of a
// reference's target, which is always the current body's.
#define IRT_NODE_FAIL(...)    \
  do {                        \
    if constexpr (kExplain) { \
      return __VA_ARGS__;     \
    } else {                  \
      return QuickFailure();  \
    }                         \
  } while (0)

template <bool kExplain, bool kCallFree>
Status CheckNodesPass(const fb::Chunk* c, ChunkFacts* facts) {
  const NodeColumn col = NodesOf(c, *facts);
  const uint32_t n = col.count;
  const NodeId base = c->base();
  if (base == 0 && c->base_depth() != 0) {
    return DataError("starts at call depth " + std::to_string(c->base_depth()) +
                     " before the first node (instead of 0)");
  }
  if (c->base_depth() > base) {
    return DataError("starts at call depth " + std::to_string(c->base_depth()) + " after only " +
                     std::to_string(base) + " nodes (each open call has its marker before it)");
  }
  if (base > 0 && c->base_depth() == 0) {
    return DataError("starts at call depth 0 after node " + std::to_string(base - 1) +
                     ", but the root call is open until the trace's last node");
  }
  // The call holding each node as a body node: >= 0 for the local index of
  // a marker in this chunk; -(L + 1) for the call open at level L (0 = root)
  // when the chunk started.
  // Scratch reused across chunks (a chunk may hold 2^16 nodes or more): a
  // small chunk's on the heap (a few page faults), a larger one's in one
  // tensor block per thread at least (a page fault per 2 MiB, and 2 MiB to
  // clear); plain pointers in the loop, not thread_local accesses. Only
  // `closed` is read before it is written.
  thread_local GrowBuffer<int64_t> scratch_buf;
  const size_t words = size_t{n} + (size_t{n} + 7) / 8 * 2;
  constexpr size_t kSmallScratchWords = DecodeArena::kSmallBlock / sizeof(int64_t);
  constexpr size_t kBlockWords = GrowBuffer<int64_t>::kBlockBytes / sizeof(int64_t);
  int64_t* const container =
      scratch_buf.Reserve(words <= kSmallScratchWords ? std::max<size_t>(words, 1)  // not null
                                                      : std::max(words, kBlockWords));
  uint8_t* const closed = reinterpret_cast<uint8_t*>(container + n);  // by local marker index
  if constexpr (!kCallFree) std::memset(closed, 0, n);
  // The kind of each node checked so far, by local index: a reference's
  // target is looked up here, one byte, not through its 16-byte record.
  auto* const kind_at = reinterpret_cast<fb::Kind*>(closed + (size_t{n} + 7) / 8 * 8);
  // The calls opened in this chunk and still open, innermost last: each
  // one's local marker, and the last jump of its caller's body before it.
  struct Opened {
    uint32_t marker;
    uint32_t caller_last_jump;
  };
  std::vector<Opened> opened;
  uint32_t n_open = 0;                  // opened.size(), kept in a register
  uint32_t pre_open = c->base_depth();  // calls opened before this chunk, still open
  // The innermost open call's last jump in this chunk (local index + 1), or 0.
  uint32_t last_jump = 0;
  NodeId last_pre_marker = base;  // markers of earlier chunks close in decreasing order
  if (n == 0) {
    facts->end_depth = pre_open;
    return Status::Ok();
  }
  // Raw columns: CheckNode has bounded every index before they are read.
  const NodeRec* nodes = col.nodes;
  const auto* classes =
      c->classes() ? reinterpret_cast<const fb::NodeClass*>(c->classes()->Data()) : nullptr;
  const uint32_t* refs = col.refs;
  const uint64_t nclasses = facts->class_refs.size();
  const uint64_t pool = col.n_refs;
  // What the loop needs of each class, in one load.
  struct ClassCheck {
    uint64_t value_max;  // the largest value (CheckValue's bounds): a
                         // Bool's 1, a Float32's 2^32 - 1, an index's
                         // table size - 1
    uint32_t aux;        // a block argument's position
    uint32_t ref_need;   // nrefs, or more than any pool when no value is
                         // valid (an index into an empty table)
    uint16_t nrefs;      // reference slots (a closer's link last)
    fb::Kind kind;
    uint8_t closer;     // Return or Error
    uint8_t block_arg;  // an Argument with aux != 0
  };
  thread_local std::vector<ClassCheck> class_buf;
  class_buf.resize(nclasses);
  auto size = [](auto* vec) -> uint64_t { return vec ? vec->size() : 0; };
  for (uint64_t i = 0; i < nclasses; ++i) {
    const fb::NodeClass& k = classes[i];
    const fb::VKind v = k.vkind();
    const fb::Kind kind = k.kind();
    // The values CheckValue accepts: an index's below its table's size
    // (the class table's check refused kinds it does not know).
    uint64_t value_end = 0;  // an index's table size
    bool index = true;
    if (v == fb::VKind::String || v == fb::VKind::Function) {
      value_end = size(c->strings());
    } else if (v == fb::VKind::Tensor) {
      value_end = size(c->tensors());
    } else if (v == fb::VKind::Tuple) {
      value_end = size(c->tuples());
    } else {
      index = false;
    }
    const uint16_t nrefs = facts->class_refs[i];
    class_buf[i] = {index                  ? value_end - 1  // wraps when empty: ref_need says
                    : v == fb::VKind::Bool ? uint64_t{1}
                    : v == fb::VKind::F32  ? uint64_t{0xFFFFFFFF}
                                           : ~uint64_t{0},
                    k.aux(),
                    index && value_end == 0 ? ~uint32_t{0} : uint32_t{nrefs},
                    nrefs,
                    kind,
                    static_cast<uint8_t>(kind == fb::Kind::Return || kind == fb::Kind::Error),
                    static_cast<uint8_t>(kind == fb::Kind::Argument && k.aux() != 0)};
  }
  const ClassCheck* const cls_of = class_buf.data();
  // The call holding the current node as a body node, encoded as in `container`.
  int64_t current = -static_cast<int64_t>(pre_open);
  for (uint32_t local = 0; local < n; ++local) {
    const NodeId id = base + local;
    const NodeRec* node = &nodes[local];
    // CheckNode's checks, inline on the common path; it words the failure.
    const uint32_t cls = node->cls;
    const bool fast_ok = cls < nclasses &&
                         uint64_t{node->first_ref} + cls_of[cls].ref_need <= pool &&
                         node->value <= cls_of[cls].value_max;
    // Reference distances 1 <= d <= id are checked below, with each use.
    if (!fast_ok) [[unlikely]] {
      Status s = CheckNode(c, *facts, local, id);
      if (!s.ok()) IRT_NODE_FAIL(NodeCheckError(c, facts, local, id));
    }
    const ClassCheck k = cls_of[cls];
    const fb::Kind kind = k.kind;
    kind_at[local] = kind;
    if ((n_open | pre_open) == 0) [[unlikely]] {
      // No call is open: the root's marker (node 0; a chunk at base 0
      // starts at depth 0), or a node after the root has closed.
      if (id != 0) IRT_NODE_FAIL(NodeError(facts, id, Why::kAfterRoot));
      if (kind != fb::Kind::Call) {
        IRT_NODE_FAIL(NodeError(facts, id, Why::kFirstNotCall, static_cast<uint64_t>(kind)));
      }
    }
    if constexpr (!kCallFree) container[local] = current;
    const uint32_t nrefs = k.nrefs;
    const uint32_t nvalue_refs = !kCallFree && k.closer ? nrefs - 1 : nrefs;
    const uint32_t* node_refs = refs + node->first_ref;
    // Each value reference's distance (1 <= d <= id), then its target; a
    // failure reports a later reference's bad distance first (RefError), as
    // if every distance were checked before any target.
    for (uint32_t j = 0; j < nvalue_refs; ++j) {
      const uint32_t d = flatbuffers::EndianScalar(node_refs[j]);
      if (uint64_t{d} - 1 >= id) IRT_NODE_FAIL(NodeCheckError(c, facts, local, id));  // d == 0 too
      if (d > local) {
        // A block argument's jump lies in an earlier chunk only when its call
        // began there and has made no jump in this chunk yet.
        if (k.block_arg && (n_open != 0 || last_jump != 0)) {
          IRT_NODE_FAIL(RefError(c, facts, local, id, node_refs, j + 1, nrefs, Why::kBlockArgJump));
        }
        continue;  // in an earlier chunk: the streaming checker looks further
      }
      const uint32_t tl = local - d;
      const NodeId t = base + tl;  // for the messages
      const fb::Kind tkind = kind_at[tl];
      if (tkind == fb::Kind::Call) {
        IRT_NODE_FAIL(
            RefError(c, facts, local, id, node_refs, j + 1, nrefs, Why::kRefMarker, j + 1, t));
      }
      if (k.block_arg) {
        if (tkind != fb::Kind::Jump || last_jump != tl + 1) {
          IRT_NODE_FAIL(RefError(c, facts, local, id, node_refs, j + 1, nrefs, Why::kBlockArgJump));
        }
        const fb::NodeClass* tk = &classes[nodes[tl].cls];
        uint32_t passed = tk->n_operands() - ((tk->flags() & 1) ? 1u : 0u);
        if (k.aux > passed) {
          IRT_NODE_FAIL(RefError(c, facts, local, id, node_refs, j + 1, nrefs, Why::kBlockArgK,
                                 k.aux, passed));
        }
        continue;
      }
      if (tkind == fb::Kind::Jump) {
        IRT_NODE_FAIL(
            RefError(c, facts, local, id, node_refs, j + 1, nrefs, Why::kRefJump, j + 1, t));
      }
      // A node of the current call's body is visible: that call is open.
      if constexpr (kCallFree) continue;
      const int64_t ct = container[tl];
      if (ct != current && !(ct >= 0 ? closed[ct] == 0 : static_cast<uint64_t>(-ct) <= pre_open)) {
        IRT_NODE_FAIL(
            RefError(c, facts, local, id, node_refs, j + 1, nrefs, Why::kRefClosed, j + 1, t));
      }
    }
    if constexpr (kCallFree) {
      if (kind == fb::Kind::Jump) last_jump = local + 1;
      continue;
    }
    // A closer's link to its marker.
    if (nvalue_refs < nrefs &&
        uint64_t{flatbuffers::EndianScalar(node_refs[nvalue_refs])} - 1 >= id) {
      IRT_NODE_FAIL(NodeCheckError(c, facts, local, id));
    }
    switch (kind) {
      case fb::Kind::Call:
        opened.push_back({local, last_jump});
        ++n_open;
        last_jump = 0;
        current = static_cast<int64_t>(local);
        break;
      case fb::Kind::Jump:
        last_jump = local + 1;
        break;
      case fb::Kind::Return:
      case fb::Kind::Error: {
        const NodeId marker = id - flatbuffers::EndianScalar(refs[node->first_ref + nrefs - 1]);
        if (n_open != 0) {
          const Opened top = opened.back();
          if (marker != base + top.marker) {
            IRT_NODE_FAIL(NodeError(facts, id, Why::kClosesWrong, marker, base + top.marker));
          }
          closed[top.marker] = 1;
          last_jump = top.caller_last_jump;
          opened.pop_back();
          --n_open;
        } else {
          if (pre_open == 0) {
            IRT_NODE_FAIL(NodeError(facts, id, Why::kClosesNone, marker));
          }
          if (marker >= last_pre_marker) {
            IRT_NODE_FAIL(NodeError(facts, id, Why::kClosesNotInner, marker));
          }
          last_pre_marker = marker;
          --pre_open;
          last_jump = 0;  // the enclosing call's last jump lies in an earlier chunk
        }
        current = n_open == 0 ? -static_cast<int64_t>(pre_open)
                              : static_cast<int64_t>(opened.back().marker);
        container[local] = current;  // a closer belongs to the caller's body
        break;
      }
      default:
        break;
    }
  }
  facts->end_depth = pre_open + n_open;
  return Status::Ok();
}

#undef IRT_NODE_FAIL

Status CheckNodes(const fb::Chunk* c, ChunkFacts* facts) {
  bool call_free = true;
  if (c->classes()) {
    for (const fb::NodeClass* k : *c->classes()) {
      const fb::Kind kind = k->kind();
      call_free = call_free && kind != fb::Kind::Call && kind != fb::Kind::Return &&
                  kind != fb::Kind::Error;
    }
  }
  Status s =
      call_free ? CheckNodesPass<false, true>(c, facts) : CheckNodesPass<false, false>(c, facts);
  if (s.ok()) [[likely]]
    return s;
  s = call_free ? CheckNodesPass<true, true>(c, facts) : CheckNodesPass<true, false>(c, facts);
  if (s.ok()) return DataError("a node fails the check without a reason (internal error)");
  return s;
}

Status CheckNode(const fb::Chunk* c, const ChunkFacts& facts, uint32_t local, NodeId id) {
  const NodeColumn col = NodesOf(c, facts);
  const NodeRec* n = &col.nodes[local];
  if (n->cls >= facts.class_refs.size()) {
    return DataError("class " + std::to_string(n->cls) + " out of range (chunk has " +
                     std::to_string(facts.class_refs.size()) + ")");
  }
  const fb::NodeClass* k = c->classes()->Get(n->cls);
  uint64_t n_refs = facts.class_refs[n->cls];
  if (static_cast<uint64_t>(n->first_ref) + n_refs > col.n_refs) {
    return DataError("references out of range");
  }
  for (uint64_t j = 0; j < n_refs; ++j) {
    uint32_t d = col.refs[n->first_ref + j];
    if (d == 0) return DataError("reference " + std::to_string(j + 1) + " points to itself");
    if (d > id) {
      return DataError("reference " + std::to_string(j + 1) + " points before the first node");
    }
  }
  fb::Value v(n->value, k->vkind());
  Status s = CheckValue(c, v, c->tuples() ? c->tuples()->size() : 0);
  if (!s.ok()) return s;
  return Status::Ok();
}

}  // namespace irt::internal
