// The diff's walk, shared by its files: diff.cc (the driver and the
// comparison of matched nodes), diff_align.cc (reading children and
// matching them: the lockstep walk and Myers' alignment) and diff_sink.cc
// (the text, JSON and stat reports). The walk reports what it finds to a
// DiffSink and holds no output format. Internal to libtrace.
#ifndef IRT_SRC_DIFF_WALK_H_
#define IRT_SRC_DIFF_WALK_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/column_reader.h"
#include "io/leave_behind.h"
#include "irt/diff.h"
#include "irt/output.h"
#include "irt/trace.h"
#include "print/notation.h"

namespace irt::internal::diff {

constexpr int64_t kSyncLength = 32;
constexpr uint64_t kCheckpointEvery = 1024;
constexpr uint64_t kConditionSearch = 4096;

// What must agree for two children to be aligned with each other.
struct Key {
  NodeKind kind = NodeKind::kArgument;
  uint32_t block = 0, pos = 0, aux = 0;
  uint8_t flags = 0;
  std::string_view op;
  bool operator==(const Key& o) const {
    return kind == o.kind && block == o.block && pos == o.pos && aux == o.aux && flags == o.flags &&
           op == o.op;
  }
};

Key KeyOf(const NodeView& v);

// A child of a call: a node, or a nested call from its marker to its closer
// (end == kNoNode while the closer is not known yet).
struct Item {
  NodeId id = kNoNode;
  NodeId end = kNoNode;
  uint64_t pos = 0;
  Key key;
  bool is_call() const { return key.kind == NodeKind::kCall; }
};

struct Tolerance {
  double rtol = 0, atol = 0;
  bool exact() const { return rtol == 0 && atol == 0; }
};

// What a comparison of two values found.
struct ValueDiff {
  bool equal = true;
  bool numeric = false;  // both real scalars or same-shaped real tensors
  double max_abs = 0;
  // Tensors: elements that differ, of how many, and where the largest is.
  bool tensor = false;
  int64_t differing = 0, numel = 0;
  std::vector<int64_t> where;
};

// The column reader for the hot path of the lockstep walk: the node asked
// for last is current; anything unusual is left to the NodeView path.
class RawNodes {
 public:
  explicit RawNodes(const Trace& t) : r_(t) {}

  // Makes `id` current; false if it cannot be read (the caller falls back
  // to a NodeView, which reports the problem).
  bool At(NodeId id) { return r_.Cached(id, &n_) || r_.ReadEntering(id, &n_).ok(); }
  const internal::RawNode& node() const { return n_; }

  Key KeyHere() const {
    const internal::ClassFacts& c = n_.cls();
    Key k;
    k.kind = c.kind;
    k.block = c.block;
    k.pos = c.pos;
    if (k.kind == NodeKind::kJump) {
      k.aux = c.aux;
      k.flags = static_cast<uint8_t>(c.flags & 3);
    } else if (k.kind == NodeKind::kArgument) {
      k.aux = c.aux;
    }
    k.op = c.op;
    return k;
  }

 private:
  internal::ColumnReader r_;
  internal::RawNode n_;
};

enum class OpType : uint8_t { kMatch, kOnlyA, kOnlyB, kDone };

struct Op {
  OpType type = OpType::kDone;
  Item a, b;
};

// One side of a frame: where its call's children are read from.
struct Side {
  NodeId call = 0;           // the call marker
  NodeId next = 0;           // next child to read; kNoNode while a read call is unresolved
  uint64_t next_pos = 0;     // its position
  uint64_t consumed = 0;     // children consumed
  NodeId last_id = kNoNode;  // the last consumed child
  NodeId last_end = kNoNode;
  NodeId end = kNoNode;  // the closer, once consumed
  uint64_t pos_in_parent = 0;
  bool read_all = false;  // the closer has been read
  bool closed = false;    // the closer has been consumed
};
// Alignment state, allocated only while a frame's sequences disagree.
struct Extra {
  std::deque<Item> ahead[2];
  std::deque<OpType> ops;
  bool give_up = false;
};
// Positions of a long body's children (made once it has kCheckpointEvery
// of them): one every kCheckpointEvery children, and the positions that
// the walk back found more than kFarWalk children from where it started,
// the last one per id modulo kFoundSlots (a loop body's operands reach back
// to the same few nodes, such as its inputs, again and again).
struct Positions {
  static constexpr size_t kFoundSlots = 256;
  static constexpr uint64_t kFarWalk = 32;
  std::vector<std::pair<NodeId, uint64_t>> every;
  std::pair<NodeId, uint64_t> found[kFoundSlots];
  Positions() { std::fill(std::begin(found), std::end(found), std::make_pair(kNoNode, 0)); }
};
struct Frame {
  Side s[2];
  std::unique_ptr<Extra> x;
  std::unique_ptr<Positions> checkpoints[2];
  uint64_t serial = 0;  // unique per frame
  // The text report's place in this frame's children.
  uint64_t printed = 0;  // A positions below this were printed (or skipped)
  uint32_t trail = 0;    // trailing context lines still to print
};

// What a report may ask of the walk about the frames it is given.
class DiffWalk {
 public:
  virtual ~DiffWalk() = default;
  virtual const Trace& trace(int s) const = 0;
  /// "@2/@5": the path of f's call on side s ("" for the root).
  virtual std::string FramePath(const Frame& f, int s) const = 0;
  /// The path of f's child at `pos` on side s.
  virtual std::string NodePath(const Frame& f, int s, uint64_t pos) const = 0;
  /// The child's line in irt-print's notation, relative to f's body.
  virtual Status AppendLine(std::string& out, int s, const Frame& f, const Item& it) = 0;
  /// Up to `count` children before the child `it` of f's side s, nearest
  /// first; with `inclusive` the child itself comes first.
  virtual Result<std::vector<Item>> PrevChildren(int s, const Frame& f, const Item& it,
                                                 uint64_t count, bool inclusive) = 0;
};

// Receives what the walk finds, in walk order, and writes the report.
class DiffSink {
 public:
  virtual ~DiffSink() = default;
  /// A trace-level metadata entry that differs (absent on a side: null).
  virtual Status TraceMeta(const std::string& key, const Value* a, const Value* b) = 0;
  /// The root calls' lines; `change` is empty, or says what differs.
  virtual Status RootCall(const std::string& line_a, const std::string& line_b,
                          std::string_view change) = 0;
  /// A matched child that is the same on both sides (A's item).
  virtual Status Equal(Frame& f, const Item& a) = 0;
  /// A matched pair that differs (`what`: "value,operands"...), or a child
  /// on one side only (the other is null; `what` is "only_a" or "only_b").
  virtual Status Change(Frame& f, const Item* a, const Item* b, const char* what,
                        const ValueDiff* vd) = 0;
  /// Writes the report, its header made from the finished summary.
  virtual Status Finish(const DiffSummary& sum, Output& out) = 0;
};

/// The sink for o.format.
std::unique_ptr<DiffSink> MakeDiffSink(const DiffOptions& o, const Trace& a, const Trace& b,
                                       DiffWalk& walk);

// Walks both traces and reports to the sink for the options' format.
class Differ final : public DiffWalk {
 public:
  Differ(const Trace& a, const Trace& b, const DiffOptions& o);

  Result<DiffSummary> Run(Output& out);

  // DiffWalk.
  const Trace& trace(int s) const override { return *t_[s]; }
  std::string FramePath(const Frame& f, int s) const override;
  std::string NodePath(const Frame& f, int s, uint64_t pos) const override;
  Status AppendLine(std::string& out, int s, const Frame& f, const Item& it) override;
  Result<std::vector<Item>> PrevChildren(int s, const Frame& f, const Item& it, uint64_t count,
                                         bool inclusive) override;

 private:
  // Reading and matching children (diff_align.cc).
  Result<NodeView> Node(int s, NodeId id) const { return t_[s]->node(id); }
  Result<Item> ReadFresh(Frame& f, int s);
  Status Resolve(Frame& f, int s, Item& it);
  Result<bool> Front(Frame& f, int s, Item* it, bool* fresh);
  Result<bool> Has(Frame& f, int s, size_t i);
  void Consume(Frame& f, int s, const Item& it);
  Result<Op> NextOp(Frame& f);
  Status Align(Frame& f);

  // Comparing (diff.cc).
  Status RecordDivergence(Frame& f);
  Status CompareMatched(Frame& f, const Item& a, const Item& b);
  Status CallDone(Frame& parent, const Frame& child);
  Result<Key> RefKey(int s, NodeId ref);
  Status CompareOperands(NodeView& va, NodeView& vb, bool* differ);
  Status CompareMeta(const NodeView& va, const NodeView& vb, bool* differ);
  Status OnlyOne(Frame& f, int s, const Item& it);
  Status CompareTraceMeta();
  Status CompareRoots(const NodeId ends[2]);
  Result<int64_t> PositionOf(int s, const Frame& f, NodeId ref, NodeId from, uint64_t from_pos);
  size_t Index(const Frame& f) const { return static_cast<size_t>(&f - stack_.data()); }

  // Raw key of a reference target (the call's for a call's result); false
  // when it cannot be read raw.
  bool RawRefKey(int s, NodeId ref, Key* out);
  // Whether two matched nodes are certainly equal, from the raw columns:
  // same class shape, bits, literals and reference targets, no metadata.
  bool FastEqual(NodeId a, NodeId b);

  const Trace* t_[2];
  std::unique_ptr<RawNodes> raw_[2], raw_ref_[2];
  // Gives back, once each, the decoded columns of the chunks more than one
  // before the next child of the innermost frame (whose position only
  // grows): a chunk read again later is decoded again and kept.
  void ReleaseBehind(const Frame& f);
  std::optional<internal::LeaveBehind> behind_[2];
  // The last two tensors whose values were compared, by chunk and index in
  // the chunk's tensor table, and the verdict: a tensor that many nodes
  // share (passed to a call per iteration; a chunk stores it once) is
  // compared once per pair of chunks, not once per node.
  struct TensorPair {
    uint64_t chunk_a = ~uint64_t{0}, index_a = 0, chunk_b = ~uint64_t{0}, index_b = 0;
    bool operator==(const TensorPair&) const = default;
  };
  TensorPair last_pair_;
  ValueDiff last_pair_diff_;
  DiffOptions o_;
  Tolerance tol_;
  FormatOptions fo_;
  std::set<std::string, std::less<>> ignore_;
  NotationOptions notation_;
  DiffSummary sum_;
  std::vector<Frame> stack_;
  uint64_t next_serial_ = 1;
  bool capped_ = false;  // a lookahead hit max_lookahead
  std::unique_ptr<DiffSink> sink_;
};

}  // namespace irt::internal::diff

#endif  // IRT_SRC_DIFF_WALK_H_
