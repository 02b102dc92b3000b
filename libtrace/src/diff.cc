// Streaming structural diff. Both traces are walked forward once with an
// explicit stack of frames, one per pair of matched open calls. Within a
// frame the two children sequences advance in lockstep while their keys
// (kind, location, operation) agree; at the first disagreement the children
// ahead are buffered and aligned with Myers' greedy O(ND) algorithm until a
// run of kSyncLength agreeing children (or both ends) is found, and the edit
// script up to that run is replayed as matches, deletions and insertions.
// Matched nested calls are descended into; unmatched ones are reported as
// whole subtrees. Nothing recurses on trace data.
//
// Positions (@k) of printed nodes are resolved by walking back over the
// body from the printed node (hopping over nested bodies through their
// closers), helped by a checkpoint every kCheckpointEvery children, so a
// frame holds no per-child state.
#include "irt/diff.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <set>

#include "column_reader.h"
#include "irt/graph.h"
#include "irt/json.h"
#include "irt/print.h"
#include "print/notation.h"
#include "tempfile.h"

namespace irt {

namespace {

constexpr int64_t kSyncLength = 32;
constexpr uint64_t kCheckpointEvery = 1024;
constexpr uint64_t kConditionSearch = 4096;
constexpr int32_t kUnreached = -1;

bool Closes(NodeKind k) { return k == NodeKind::kReturn || k == NodeKind::kError; }

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

Key KeyOf(const NodeView& v) {
  Key k;
  k.kind = v.kind();
  Location l = v.location();
  k.block = l.block;
  k.pos = l.pos;
  if (k.kind == NodeKind::kJump) {
    k.aux = v.jump_target();
    k.flags = static_cast<uint8_t>((v.has_condition() ? 1 : 0) | (v.taken_when() ? 2 : 0));
  } else if (k.kind == NodeKind::kArgument) {
    k.aux = v.block_arg_index();
  }
  k.op = v.op();
  return k;
}

// A child of a call: a node, or a nested call from its marker to its closer
// (end == kNoNode while the closer is not known yet).
struct Item {
  NodeId id = kNoNode;
  NodeId end = kNoNode;
  uint64_t pos = 0;
  Key key;
  bool is_call() const { return key.kind == NodeKind::kCall; }
};

void AppendU(std::string& out, uint64_t v) {
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, p);
}

// ------------------------------------------------------------ JSON helpers

// Scalars as JSON numbers and booleans; everything else as its printed text.
void JsonValue(std::string& out, const Value& v, const FormatOptions& fo) {
  switch (v.kind()) {
    case VKind::kNone:
    case VKind::kNothing:
    case VKind::kBool:
    case VKind::kI64:
    case VKind::kF64:
    case VKind::kF32:
    case VKind::kString:
      AppendJsonValue(out, v);
      break;
    default:
      AppendJsonString(out, FormatValue(v, fo));
      break;
  }
}

// ------------------------------------------------------------ value comparison

struct Tolerance {
  double rtol = 0, atol = 0;
  bool exact() const { return rtol == 0 && atol == 0; }
};

bool DoublesClose(double a, double b, const Tolerance& tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b);
}

double AbsDiff(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (!std::isfinite(a) || !std::isfinite(b)) return a == b ? 0 : INFINITY;
  return std::fabs(a - b);
}

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

bool IsFloatDType(DType d) { return d == DType::kF64 || d == DType::kF32; }

ValueDiff CompareValues(const Value& a, const Value& b, const Tolerance& tol) {
  ValueDiff r;
  if (a.kind() != b.kind()) {
    r.equal = false;
    return r;
  }
  switch (a.kind()) {
    case VKind::kF64:
    case VKind::kF32: {
      double x = a.to_double(), y = b.to_double();
      r.numeric = true;
      r.equal = tol.exact() ? a.bits() == b.bits() : DoublesClose(x, y, tol);
      if (!r.equal) r.max_abs = AbsDiff(x, y);
      return r;
    }
    case VKind::kI64:
      r.numeric = true;
      r.equal = a.bits() == b.bits();
      if (!r.equal) r.max_abs = AbsDiff(a.to_double(), b.to_double());
      return r;
    case VKind::kTensor: {
      const Tensor& s = a.tensor();
      const Tensor& t = b.tensor();
      if (s.dtype != t.dtype || s.shape != t.shape) {
        r.equal = false;
        return r;
      }
      r.numeric = s.dtype != DType::kBool;
      r.tensor = true;
      r.numel = s.numel();
      int64_t arg = -1;
      size_t es = DTypeSize(s.dtype);
      for (int64_t i = 0; i < r.numel; ++i) {
        bool same;
        if (IsFloatDType(s.dtype) && !tol.exact()) {
          same = DoublesClose(s.at(i), t.at(i), tol);
        } else {
          same = std::memcmp(s.data.data() + i * es, t.data.data() + i * es, es) == 0;
        }
        if (same) continue;
        ++r.differing;
        double d = AbsDiff(s.at(i), t.at(i));
        if (arg < 0 || d > r.max_abs) {
          r.max_abs = d;
          arg = i;
        }
      }
      r.equal = r.differing == 0;
      if (arg >= 0) {
        r.where.assign(s.shape.size(), 0);
        int64_t rest = arg;
        for (size_t k = s.shape.size(); k-- > 0;) {
          int64_t dim = s.shape[k] > 0 ? s.shape[k] : 1;
          r.where[k] = rest % dim;
          rest /= dim;
        }
      }
      return r;
    }
    case VKind::kTuple: {
      // Iterative over nesting (bounded by the format, but kept flat anyway).
      std::vector<std::pair<const Value*, const Value*>> stack{{&a, &b}};
      while (!stack.empty()) {
        auto [x, y] = stack.back();
        stack.pop_back();
        if (x->kind() != y->kind()) {
          r.equal = false;
          return r;
        }
        if (x->kind() == VKind::kTuple) {
          if (x->tuple().size() != y->tuple().size()) {
            r.equal = false;
            return r;
          }
          for (size_t i = 0; i < x->tuple().size(); ++i) {
            stack.emplace_back(&x->tuple()[i], &y->tuple()[i]);
          }
        } else {
          ValueDiff d = CompareValues(*x, *y, tol);
          if (!d.equal) {
            r.equal = false;
            return r;
          }
        }
      }
      return r;
    }
    default:
      r.equal = BitEqual(a, b);
      return r;
  }
}

// ------------------------------------------------------------ spooled output

// The report body is written here while the traces are compared and copied
// out after the header (which needs the whole comparison). Memory stays
// bounded: past kSpoolMemory bytes it goes to an unlinked temporary file.
class Spool {
 public:
  static constexpr size_t kSpoolMemory = 1 << 20;
  ~Spool() {
    if (fd_ >= 0) close(fd_);
  }
  Status Write(std::string_view s) {
    buf_.append(s);
    if (buf_.size() < kSpoolMemory) return Status::Ok();
    return Spill();
  }
  Status CopyTo(Output& out) {
    if (fd_ >= 0) {
      IRT_RETURN_IF_ERROR(Spill());
      if (lseek(fd_, 0, SEEK_SET) < 0) return IoError("diff: cannot rewind the spool file");
      std::vector<char> chunk(1 << 16);
      for (;;) {
        ssize_t r = read(fd_, chunk.data(), chunk.size());
        if (r < 0) {
          if (errno == EINTR) continue;
          return IoError(std::string("diff: cannot read the spool file: ") + strerror(errno));
        }
        if (r == 0) break;
        out.Write(chunk.data(), static_cast<size_t>(r));
        if (out.failed()) break;
      }
      return Status::Ok();
    }
    out.Write(buf_);
    return Status::Ok();
  }

 private:
  Status Spill() {
    if (fd_ < 0) {
      IRT_ASSIGN_OR_RETURN(fd_, internal::CreateSpoolFile("the differences"));
    }
    if (int e = internal::WriteAll(fd_, buf_.data(), buf_.size()); e != 0) {
      return IoError(std::string("diff: cannot write the spool file: ") + strerror(e));
    }
    buf_.clear();
    return Status::Ok();
  }
  std::string buf_;
  int fd_ = -1;
};

// ------------------------------------------------------------ the differ

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

bool ScalarVKind(VKind k) { return static_cast<uint8_t>(k) <= static_cast<uint8_t>(VKind::kF32); }

enum class OpType : uint8_t { kMatch, kOnlyA, kOnlyB, kDone };

struct Op {
  OpType type = OpType::kDone;
  Item a, b;
};

class Differ {
 public:
  Differ(const Trace& a, const Trace& b, const DiffOptions& o) : o_(o) {
    t_[0] = &a;
    t_[1] = &b;
    for (int k = 0; k < 2; ++k) {
      raw_[k] = std::make_unique<RawNodes>(*t_[k]);
      raw_ref_[k] = std::make_unique<RawNodes>(*t_[k]);
    }
    tol_.rtol = o.rtol;
    tol_.atol = o.atol;
    fo_.max_elements = o.max_elements;
    ignore_.insert(o.ignore_meta.begin(), o.ignore_meta.end());
    notation_.format = fo_;
    notation_.ignore_meta = &ignore_;
    text_ = o.format == DiffFormat::kText;
    json_ = o.format == DiffFormat::kJson;
  }

  Result<DiffSummary> Run(Output& out);

 private:
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
  struct Frame {
    Side s[2];
    std::unique_ptr<Extra> x;
    std::unique_ptr<std::vector<std::pair<NodeId, uint64_t>>> checkpoints[2];
    uint64_t serial = 0;
    uint64_t printed = 0;  // A positions below this were printed (or skipped)
    uint32_t trail = 0;    // trailing context lines still to print
  };

  // Reading children.
  Result<NodeView> Node(int s, NodeId id) const { return t_[s]->node(id); }
  Result<Item> ReadFresh(Frame& f, int s);
  Status Resolve(Frame& f, int s, Item& it);
  Result<bool> Front(Frame& f, int s, Item* it, bool* fresh);
  Result<bool> Has(Frame& f, int s, size_t i);
  void Consume(Frame& f, int s, const Item& it);
  Result<Op> NextOp(Frame& f);
  Status Align(Frame& f);
  Status RecordDivergence(Frame& f);

  // Comparing.
  Status CompareMatched(Frame& f, const Item& a, const Item& b);
  Status CallDone(Frame& parent, const Frame& child);
  Result<Key> RefKey(int s, NodeId ref);
  Status CompareOperands(NodeView& va, NodeView& vb, bool* differ);
  Status CompareMeta(const NodeView& va, const NodeView& vb, bool* differ);
  Status OnlyOne(Frame& f, int s, const Item& it);

  // Printing.
  std::string FramePath(size_t frame, int s) const;
  std::string NodePath(size_t frame, int s, uint64_t pos) const;
  Result<int64_t> PositionOf(int s, const Frame& f, NodeId ref, NodeId from, uint64_t from_pos);
  Status AppendLine(std::string& out, int s, const Frame& f, NodeId id, NodeId end, uint64_t pos);
  Status AppendRootLine(std::string& out, int s, NodeId root_end);
  Result<std::vector<Item>> PrevChildren(int s, const Frame& f, NodeId id, NodeId end, uint64_t pos,
                                         uint64_t count, bool inclusive);
  Status StartHunk(Frame& f, const Item* anchor_a);
  Status EmitEqual(Frame& f, const Item& a);
  Status EmitChange(Frame& f, const Item* a, const Item* b, const char* what, const ValueDiff* vd);
  Status EmitJsonNode(std::string& out, int s, const Frame& f, const Item& it);
  Status Write(std::string_view s) { return spool_.Write(s); }
  std::string Color(const char* code, const std::string& line) const {
    if (!o_.color) return line;
    return std::string("\x1b[") + code + "m" + line + "\x1b[0m";
  }
  Status Finish(Output& out);

  // Raw key of a reference target (the call's for a call's result); false
  // when it cannot be read raw.
  bool RawRefKey(int s, NodeId ref, Key* out);
  // Whether two matched nodes are certainly equal, from the raw columns:
  // same class shape, bits, literals and reference targets, no metadata.
  bool FastEqual(NodeId a, NodeId b);

  const Trace* t_[2];
  std::unique_ptr<RawNodes> raw_[2], raw_ref_[2];
  DiffOptions o_;
  Tolerance tol_;
  FormatOptions fo_;
  std::set<std::string, std::less<>> ignore_;
  internal::NotationOptions notation_;
  bool text_ = false, json_ = false;
  DiffSummary sum_;
  std::vector<Frame> stack_;
  uint64_t next_serial_ = 1;
  uint64_t hunk_serial_ = 0;  // frame whose hunk is open in the output
  bool capped_ = false;       // a lookahead hit max_lookahead
  bool first_json_ = true;
  Spool spool_;
  std::string root_lines_;
  std::string trace_meta_lines_;
  std::string trace_meta_json_;
};

// ------------------------------------------------------------ reading

Result<Item> Differ::ReadFresh(Frame& f, int s) {
  Side& side = f.s[s];
  const Trace& t = *t_[s];
  if (side.next == kNoNode || side.next >= t.size()) {
    return DataError(t.name() + ": the call at node " + std::to_string(side.call) +
                     " is never closed");
  }
  Item it;
  it.id = side.next;
  RawNodes& rn = *raw_[s];
  if (rn.At(it.id)) {
    it.key = rn.KeyHere();
    bool closes_ok = true;
    if (Closes(it.key.kind)) closes_ok = rn.node().closes() == side.call;
    if (closes_ok) {
      it.pos = side.next_pos++;
      if (it.is_call()) {
        it.end = kNoNode;
        side.next = kNoNode;
      } else {
        it.end = it.id;
        side.next = it.id + 1;
        if (Closes(it.key.kind)) side.read_all = true;
      }
      return it;
    }
  }
  IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, side.next));
  it.pos = side.next_pos++;
  it.key = KeyOf(v);
  if (it.is_call()) {
    it.end = kNoNode;
    side.next = kNoNode;
  } else {
    it.end = it.id;
    side.next = it.id + 1;
    if (Closes(it.key.kind)) {
      if (v.closes() != side.call) {
        return DataError(t.name() + ": node " + std::to_string(it.id) + " closes node " +
                         std::to_string(v.closes()) + ", not the open call " +
                         std::to_string(side.call));
      }
      side.read_all = true;
    }
  }
  return it;
}

// Finds the closer of a call read last on its side by scanning its body.
Status Differ::Resolve(Frame& f, int s, Item& it) {
  if (!it.is_call() || it.end != kNoNode) return Status::Ok();
  const Trace& t = *t_[s];
  uint64_t depth = 1;
  for (NodeId i = it.id + 1; i < t.size(); ++i) {
    IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, i));
    NodeKind k = v.kind();
    if (k == NodeKind::kCall) {
      ++depth;
    } else if (Closes(k) && --depth == 0) {
      it.end = i;
      f.s[s].next = i + 1;
      return Status::Ok();
    }
  }
  return DataError(t.name() + ": the call at node " + std::to_string(it.id) + " is never closed");
}

Result<bool> Differ::Front(Frame& f, int s, Item* it, bool* fresh) {
  if (f.x && !f.x->ahead[s].empty()) {
    *it = f.x->ahead[s].front();
    *fresh = false;
    return true;
  }
  if (f.s[s].read_all) return false;
  IRT_ASSIGN_OR_RETURN(*it, ReadFresh(f, s));
  *fresh = true;
  return true;
}

// Whether child i (counted from the first unconsumed one) exists, reading
// ahead as needed. Past max_lookahead it answers false and sets capped_.
Result<bool> Differ::Has(Frame& f, int s, size_t i) {
  std::deque<Item>& dq = f.x->ahead[s];
  while (dq.size() <= i) {
    if (!dq.empty() && dq.back().end == kNoNode) IRT_RETURN_IF_ERROR(Resolve(f, s, dq.back()));
    if (f.s[s].read_all) return false;
    if (dq.size() >= o_.max_lookahead) {
      capped_ = true;
      return false;
    }
    IRT_ASSIGN_OR_RETURN(Item it, ReadFresh(f, s));
    dq.push_back(it);
  }
  return true;
}

void Differ::Consume(Frame& f, int s, const Item& it) {
  Side& side = f.s[s];
  ++side.consumed;
  side.last_id = it.id;
  side.last_end = it.end;
  if (it.pos % kCheckpointEvery == 0 && it.pos > 0) {
    if (!f.checkpoints[s])
      f.checkpoints[s] = std::make_unique<std::vector<std::pair<NodeId, uint64_t>>>();
    f.checkpoints[s]->emplace_back(it.id, it.pos);
  }
  if (!it.is_call() && Closes(it.key.kind)) {
    side.closed = true;
    side.end = it.id;
  }
}

Result<Op> Differ::NextOp(Frame& f) {
  for (;;) {
    if (f.x) {
      Extra& x = *f.x;
      if (!x.ops.empty()) {
        Op op;
        op.type = x.ops.front();
        x.ops.pop_front();
        if (op.type != OpType::kOnlyB) {
          op.a = x.ahead[0].front();
          x.ahead[0].pop_front();
          Consume(f, 0, op.a);
        }
        if (op.type != OpType::kOnlyA) {
          op.b = x.ahead[1].front();
          x.ahead[1].pop_front();
          Consume(f, 1, op.b);
        }
        return op;
      }
      if (x.give_up) {
        for (int s = 0; s < 2; ++s) {
          Item it;
          bool fresh = false;
          IRT_ASSIGN_OR_RETURN(bool has, Front(f, s, &it, &fresh));
          if (!has) continue;
          if (!fresh) x.ahead[s].pop_front();
          IRT_RETURN_IF_ERROR(Resolve(f, s, it));
          Consume(f, s, it);
          Op op;
          op.type = s == 0 ? OpType::kOnlyA : OpType::kOnlyB;
          (s == 0 ? op.a : op.b) = it;
          return op;
        }
        Op done;
        return done;
      }
      if (x.ahead[0].empty() && x.ahead[1].empty()) f.x.reset();
    }
    Item a, b;
    bool fa = false, fb = false;
    IRT_ASSIGN_OR_RETURN(bool ha, Front(f, 0, &a, &fa));
    IRT_ASSIGN_OR_RETURN(bool hb, Front(f, 1, &b, &fb));
    if (!ha && !hb) {
      Op done;
      return done;
    }
    if (ha && hb && a.key == b.key) {
      if (!fa) f.x->ahead[0].pop_front();
      if (!fb) f.x->ahead[1].pop_front();
      Consume(f, 0, a);
      Consume(f, 1, b);
      Op op;
      op.type = OpType::kMatch;
      op.a = a;
      op.b = b;
      return op;
    }
    if (!f.x) f.x = std::make_unique<Extra>();
    if (fa) f.x->ahead[0].push_back(a);
    if (fb) f.x->ahead[1].push_back(b);
    if (!sum_.divergence && ha && hb) IRT_RETURN_IF_ERROR(RecordDivergence(f));
    IRT_RETURN_IF_ERROR(Align(f));
  }
}

// Myers' greedy forward search over the buffered children, stopping at the
// cheapest edit script that reaches kSyncLength agreeing children or both
// ends. The script up to there is queued; the agreeing run is left for the
// lockstep walk.
Status Differ::Align(Frame& f) {
  Extra& x = *f.x;
  capped_ = false;
  const int64_t max_d = o_.max_edits;
  std::vector<std::vector<int32_t>> V;
  std::vector<std::vector<uint8_t>> down;
  auto at = [&](int64_t d, int64_t k) -> int32_t& { return V[d][k + d]; };
  auto same = [&](int64_t i, int64_t j) { return x.ahead[0][i].key == x.ahead[1][j].key; };
  for (int64_t d = 0; d <= max_d; ++d) {
    V.emplace_back(2 * d + 1, kUnreached);
    down.emplace_back(2 * d + 1, 0);
    for (int64_t k = -d; k <= d; k += 2) {
      int64_t xx;
      bool dn = false;
      if (d == 0) {
        xx = 0;
      } else {
        int64_t xd = -1, xr = -1;
        if (k + 1 <= d - 1) {
          int32_t px = at(d - 1, k + 1);
          if (px != kUnreached) {
            IRT_ASSIGN_OR_RETURN(bool hb, Has(f, 1, static_cast<size_t>(px - (k + 1))));
            if (hb) xd = px;
          }
        }
        if (k - 1 >= -(d - 1)) {
          int32_t px = at(d - 1, k - 1);
          if (px != kUnreached) {
            IRT_ASSIGN_OR_RETURN(bool ha, Has(f, 0, static_cast<size_t>(px)));
            if (ha) xr = px + 1;
          }
        }
        if (xd < 0 && xr < 0) continue;
        dn = xd >= xr;
        xx = dn ? xd : xr;
      }
      int64_t yy = xx - k;
      int64_t x0 = xx;
      for (;;) {
        if (xx - x0 >= kSyncLength) break;
        IRT_ASSIGN_OR_RETURN(bool ha, Has(f, 0, static_cast<size_t>(xx)));
        if (!ha) break;
        IRT_ASSIGN_OR_RETURN(bool hb, Has(f, 1, static_cast<size_t>(yy)));
        if (!hb || !same(xx, yy)) break;
        ++xx;
        ++yy;
      }
      at(d, k) = static_cast<int32_t>(xx);
      down[d][k + d] = dn ? 1 : 0;
      bool synced = xx - x0 >= kSyncLength;
      bool ends = false;
      if (!synced) {
        IRT_ASSIGN_OR_RETURN(bool ha, Has(f, 0, static_cast<size_t>(xx)));
        IRT_ASSIGN_OR_RETURN(bool hb, Has(f, 1, static_cast<size_t>(yy)));
        ends = !ha && !hb;
      }
      if (!synced && !ends) continue;
      if (ends && capped_) {
        x.give_up = true;
        ++sum_.unaligned_regions;
        return Status::Ok();
      }
      // Backtrack from (d, k), leaving out the final run of agreement.
      std::vector<OpType> rev;
      int64_t cur_end = x0, kk = k;
      for (int64_t dd = d; dd > 0; --dd) {
        bool was_down = down[dd][kk + dd] != 0;
        int64_t pk = was_down ? kk + 1 : kk - 1;
        int64_t px = at(dd - 1, pk);
        int64_t mid = was_down ? px : px + 1;
        for (int64_t i = mid; i < cur_end; ++i) rev.push_back(OpType::kMatch);
        rev.push_back(was_down ? OpType::kOnlyB : OpType::kOnlyA);
        cur_end = px;
        kk = pk;
      }
      for (int64_t i = 0; i < cur_end; ++i) rev.push_back(OpType::kMatch);
      x.ops.insert(x.ops.end(), rev.rbegin(), rev.rend());
      return Status::Ok();
    }
  }
  x.give_up = true;
  ++sum_.unaligned_regions;
  return Status::Ok();
}

// The first disagreement of the walk: the fronts of f's buffers. When one
// of them is a conditional jump, its condition and the node of the same
// statement on the other side (the latest one before the divergence).
Status Differ::RecordDivergence(Frame& f) {
  Extra& x = *f.x;
  size_t fi = stack_.size() - 1;
  Item fr[2] = {x.ahead[0].front(), x.ahead[1].front()};
  for (int s = 0; s < 2; ++s) {
    if (x.ahead[s].size() == 1) IRT_RETURN_IF_ERROR(Resolve(f, s, x.ahead[s].front()));
    fr[s] = x.ahead[s].front();
  }
  DiffDivergence d;
  d.path_a = NodePath(fi, 0, fr[0].pos);
  d.path_b = NodePath(fi, 1, fr[1].pos);
  IRT_RETURN_IF_ERROR(AppendLine(d.line_a, 0, f, fr[0].id, fr[0].end, fr[0].pos));
  IRT_RETURN_IF_ERROR(AppendLine(d.line_b, 1, f, fr[1].id, fr[1].end, fr[1].pos));
  for (int s = 0; s < 2 && !d.has_condition; ++s) {
    IRT_ASSIGN_OR_RETURN(NodeView j, Node(s, fr[s].id));
    if (j.kind() != NodeKind::kJump || !j.has_condition()) continue;
    Operand c = j.operand(j.num_operands() - 1);
    d.has_condition = true;
    Value* mine = s == 0 ? &d.cond_a : &d.cond_b;
    Value* theirs = s == 0 ? &d.cond_b : &d.cond_a;
    std::string* my_path = s == 0 ? &d.cond_path_a : &d.cond_path_b;
    std::string* their_path = s == 0 ? &d.cond_path_b : &d.cond_path_a;
    if (!c.is_ref) {
      *mine = c.literal;
      *my_path = "⟨" + FormatValue(c.literal, fo_) + "⟩";
      continue;
    }
    IRT_ASSIGN_OR_RETURN(NodeView cv, Node(s, c.ref));
    *mine = cv.value();
    IRT_ASSIGN_OR_RETURN(int64_t cp, PositionOf(s, f, c.ref, fr[s].id, fr[s].pos));
    *my_path = cp >= 0 ? NodePath(fi, s, static_cast<uint64_t>(cp)) : "#" + std::to_string(c.ref);
    // The same statement on the other side: walk back from its front.
    int o = 1 - s;
    Key want = KeyOf(cv);
    IRT_ASSIGN_OR_RETURN(
        auto prev, PrevChildren(o, f, fr[o].id, fr[o].end, fr[o].pos, kConditionSearch, false));
    for (const Item& it : prev) {
      if (it.key == want) {
        IRT_ASSIGN_OR_RETURN(NodeView ov, Node(o, it.id));
        *theirs = ov.value();
        *their_path = NodePath(fi, o, it.pos);
        break;
      }
    }
  }
  sum_.divergence = std::move(d);
  return Status::Ok();
}

// ------------------------------------------------------------ comparing

Result<Key> Differ::RefKey(int s, NodeId ref) {
  IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, ref));
  if (Closes(v.kind())) {
    IRT_ASSIGN_OR_RETURN(NodeView m, Node(s, v.closes()));
    return KeyOf(m);
  }
  return KeyOf(v);
}

Status Differ::CompareOperands(NodeView& va, NodeView& vb, bool* differ) {
  *differ = false;
  size_t n = va.num_operands();
  if (n != vb.num_operands()) {
    *differ = true;
    return Status::Ok();
  }
  for (size_t i = 0; i < n; ++i) {
    Operand p = va.operand(i), q = vb.operand(i);
    if (p.is_ref != q.is_ref) {
      *differ = true;
      return Status::Ok();
    }
    if (!p.is_ref) {
      if (!CompareValues(p.literal, q.literal, tol_).equal) {
        *differ = true;
        return Status::Ok();
      }
      continue;
    }
    // References agree when they name nodes of the same statement (for a
    // call's result, the call's, not the return statement that ended it).
    IRT_ASSIGN_OR_RETURN(Key ka, RefKey(0, p.ref));
    IRT_ASSIGN_OR_RETURN(Key kb, RefKey(1, q.ref));
    if (!(ka == kb)) {
      *differ = true;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status Differ::CompareMeta(const NodeView& va, const NodeView& vb, bool* differ) {
  *differ = false;
  std::vector<MetaEntry> ma = va.meta(), mb = vb.meta();
  if (ma.empty() && mb.empty()) return Status::Ok();
  auto drop = [&](std::vector<MetaEntry>& m) {
    m.erase(std::remove_if(m.begin(), m.end(),
                           [&](const MetaEntry& e) { return ignore_.count(e.key) != 0; }),
            m.end());
  };
  drop(ma);
  drop(mb);
  if (ma.size() != mb.size()) {
    *differ = true;
    return Status::Ok();
  }
  for (size_t i = 0; i < ma.size(); ++i) {
    if (ma[i].key != mb[i].key || !CompareValues(ma[i].value, mb[i].value, tol_).equal) {
      *differ = true;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

bool Differ::RawRefKey(int s, NodeId ref, Key* out) {
  RawNodes& rn = *raw_ref_[s];
  if (!rn.At(ref)) return false;
  Key k = rn.KeyHere();
  if (Closes(k.kind)) {
    if (!rn.At(rn.node().closes())) return false;
    k = rn.KeyHere();
  }
  *out = k;
  return true;
}

bool Differ::FastEqual(NodeId a, NodeId b) {
  RawNodes& ra = *raw_[0];
  RawNodes& rb = *raw_[1];
  if (!ra.At(a) || !rb.At(b)) return false;
  const internal::RawNode& na = ra.node();
  const internal::RawNode& nb = rb.node();
  const internal::ClassFacts& ca = na.cls();
  const internal::ClassFacts& cb = nb.cls();
  if (ca.vkind != cb.vkind || !ScalarVKind(ca.vkind) || ca.n_operands != cb.n_operands) {
    return false;
  }
  if (na.bits() != nb.bits()) return false;
  if (ca.vkind == VKind::kBool && na.bits() > 1) return false;  // let the check say
  if (na.chunk().has_meta || nb.chunk().has_meta) return false;
  uint32_t ka = 0, kb = 0;
  for (uint32_t j = 0; j < ca.n_operands; ++j) {
    uint32_t oa = na.operand_code(j), ob = nb.operand_code(j);
    if ((oa == 0) != (ob == 0)) return false;
    if (oa != 0) {
      const internal::ValueRec& la = na.chunk().literal_rec(oa);
      const internal::ValueRec& lb = nb.chunk().literal_rec(ob);
      if (la.vkind != lb.vkind || !ScalarVKind(static_cast<VKind>(la.vkind)) ||
          la.bits != lb.bits) {
        return false;
      }
      continue;
    }
    NodeId ta = na.ref(ka++), tb = nb.ref(kb++);
    Key x, y;
    if (!RawRefKey(0, ta, &x) || !RawRefKey(1, tb, &y) || !(x == y)) return false;
  }
  return true;
}

Status Differ::CompareMatched(Frame& f, const Item& a, const Item& b) {
  ++sum_.matched;
  if (FastEqual(a.id, b.id)) return EmitEqual(f, a);
  IRT_ASSIGN_OR_RETURN(NodeView va, Node(0, a.id));
  IRT_ASSIGN_OR_RETURN(NodeView vb, Node(1, b.id));
  ValueDiff vd;
  if (va.vkind() != VKind::kNone || vb.vkind() != VKind::kNone) {
    vd = CompareValues(va.value(), vb.value(), tol_);
  }
  bool ops = false, meta = false;
  IRT_RETURN_IF_ERROR(CompareOperands(va, vb, &ops));
  IRT_RETURN_IF_ERROR(CompareMeta(va, vb, &meta));
  if (vd.equal && !ops && !meta) return EmitEqual(f, a);
  std::string what;
  if (!vd.equal) {
    ++sum_.changed_values;
    if (vd.numeric) sum_.max_abs_diff = std::max(sum_.max_abs_diff, vd.max_abs);
    what = "value";
  }
  if (ops) {
    ++sum_.changed_operands;
    what += what.empty() ? "operands" : ",operands";
  }
  if (meta) {
    ++sum_.changed_meta;
    what += what.empty() ? "meta" : ",meta";
  }
  return EmitChange(f, &a, &b, what.c_str(), vd.equal ? nullptr : &vd);
}

// A matched nested call has been walked: its line in the parent, with the
// result taken from its closer (whose own change was counted inside).
Status Differ::CallDone(Frame& parent, const Frame& child) {
  Item a, b;
  for (int s = 0; s < 2; ++s) {
    Side& side = parent.s[s];
    if (side.next == kNoNode) side.next = child.s[s].end + 1;
    side.last_end = child.s[s].end;
    Item& it = s == 0 ? a : b;
    it.id = child.s[s].call;
    it.end = child.s[s].end;
    it.pos = child.s[s].pos_in_parent;
    IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, it.id));
    it.key = KeyOf(v);
  }
  IRT_ASSIGN_OR_RETURN(NodeView va, Node(0, a.id));
  IRT_ASSIGN_OR_RETURN(NodeView vb, Node(1, b.id));
  bool ops = false, meta = false;
  IRT_RETURN_IF_ERROR(CompareOperands(va, vb, &ops));
  IRT_RETURN_IF_ERROR(CompareMeta(va, vb, &meta));
  IRT_ASSIGN_OR_RETURN(NodeView ea, Node(0, a.end));
  IRT_ASSIGN_OR_RETURN(NodeView eb, Node(1, b.end));
  bool result_differs =
      ea.kind() != eb.kind() || !CompareValues(ea.value(), eb.value(), tol_).equal;
  if (!ops && !meta && !result_differs) return EmitEqual(parent, a);
  std::string what;
  if (ops) {
    ++sum_.changed_operands;
    what = "operands";
  }
  if (meta) {
    ++sum_.changed_meta;
    what += what.empty() ? "meta" : ",meta";
  }
  if (result_differs) what += what.empty() ? "result" : ",result";
  return EmitChange(parent, &a, &b, what.c_str(), nullptr);
}

Status Differ::OnlyOne(Frame& f, int s, const Item& it) {
  uint64_t nodes = it.end - it.id + 1;
  if (s == 0) {
    ++sum_.only_a_children;
    sum_.only_a_nodes += nodes;
    if (it.is_call()) ++sum_.only_a_calls;
  } else {
    ++sum_.only_b_children;
    sum_.only_b_nodes += nodes;
    if (it.is_call()) ++sum_.only_b_calls;
  }
  return EmitChange(f, s == 0 ? &it : nullptr, s == 1 ? &it : nullptr, s == 0 ? "only_a" : "only_b",
                    nullptr);
}

// ------------------------------------------------------------ printing

std::string Differ::FramePath(size_t frame, int s) const {
  std::string p;
  for (size_t i = 1; i <= frame; ++i) {
    p += i == 1 ? "@" : "/@";
    AppendU(p, stack_[i].s[s].pos_in_parent + 1);
  }
  return p;
}

std::string Differ::NodePath(size_t frame, int s, uint64_t pos) const {
  std::string p = FramePath(frame, s);
  p += p.empty() ? "@" : "/@";
  AppendU(p, pos + 1);
  return p;
}

// The position of `ref` among f's children (-1 if it is not one of them),
// walking back from the child at (from, from_pos) or from a checkpoint.
Result<int64_t> Differ::PositionOf(int s, const Frame& f, NodeId ref, NodeId from,
                                   uint64_t from_pos) {
  NodeId call = f.s[s].call;
  if (ref <= call || ref > from) return int64_t{-1};
  NodeId i = from;
  uint64_t p = from_pos;
  if (f.checkpoints[s]) {
    const auto& cps = *f.checkpoints[s];
    auto it = std::lower_bound(cps.begin(), cps.end(), std::make_pair(ref, uint64_t{0}));
    if (it != cps.end() && it->first < i) {
      i = it->first;
      p = it->second;
    }
  }
  while (i > ref) {
    NodeId prev = i - 1;
    if (prev == call || p == 0) return int64_t{-1};
    // The walk back reads many nodes: through the column reader.
    RawNodes& rn = *raw_ref_[s];
    NodeKind kind;
    NodeId m = kNoNode;
    if (rn.At(prev)) {
      kind = rn.node().kind();
      if (Closes(kind)) m = rn.node().closes();
    } else {
      IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, prev));
      kind = v.kind();
      if (Closes(kind)) m = v.closes();
    }
    --p;
    if (Closes(kind)) {
      if (ref == prev || ref == m) return static_cast<int64_t>(p);
      if (ref > m) return int64_t{-1};  // inside a nested body
      i = m;
    } else {
      i = prev;
    }
  }
  return i == ref ? static_cast<int64_t>(p) : int64_t{-1};
}

// One node in irt-print's notation, relative to f's body.
Status Differ::AppendLine(std::string& out, int s, const Frame& f, NodeId id, NodeId end,
                          uint64_t pos) {
  IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, id));
  auto name = [&](std::string& o, NodeId ref) -> Status {
    IRT_ASSIGN_OR_RETURN(int64_t p, PositionOf(s, f, ref, id, pos));
    if (p < 0) return internal::NameById(o, ref);
    o += '@';
    AppendU(o, static_cast<uint64_t>(p) + 1);
    return Status::Ok();
  };
  return internal::AppendNodeLine(out, *t_[s], v, pos, end, name, notation_);
}

Status Differ::AppendRootLine(std::string& out, int s, NodeId root_end) {
  IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, 0));
  return internal::AppendRootCallLine(out, *t_[s], v, root_end, notation_);
}

// Up to `count` children before the child (id, end, pos) of f's side s,
// nearest first; with `inclusive` the child itself comes first.
Result<std::vector<Item>> Differ::PrevChildren(int s, const Frame& f, NodeId id, NodeId end,
                                               uint64_t pos, uint64_t count, bool inclusive) {
  std::vector<Item> out;
  NodeId call = f.s[s].call;
  if (inclusive && id != kNoNode) {
    IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, id));
    out.push_back({id, end, pos, KeyOf(v)});
  }
  NodeId i = id;
  uint64_t p = pos;
  while (out.size() < count && i != kNoNode && i > call + 1 && p > 0) {
    NodeId prev = i - 1;
    IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, prev));
    --p;
    Item it;
    if (Closes(v.kind()) && v.closes() != call) {
      NodeId m = v.closes();
      IRT_ASSIGN_OR_RETURN(NodeView mv, Node(s, m));
      it = {m, prev, p, KeyOf(mv)};
      i = m;
    } else {
      it = {prev, prev, p, KeyOf(v)};
      i = prev;
    }
    out.push_back(it);
  }
  return out;
}

// Opens a hunk for f unless it is the open one, with leading context: the
// unprinted A children before `anchor_a` (exclusive), or before and
// including A's last consumed child when there is no anchor.
Status Differ::StartHunk(Frame& f, const Item* anchor_a) {
  size_t fi = static_cast<size_t>(&f - stack_.data());
  const Side& sa = f.s[0];
  // Context covers A positions [.., upto).
  uint64_t upto = anchor_a != nullptr ? anchor_a->pos : sa.consumed;
  uint64_t gap = upto > f.printed ? upto - f.printed : 0;
  std::string out;
  if (hunk_serial_ != f.serial || gap > o_.context) {
    std::string fp = FramePath(fi, 0), fq = FramePath(fi, 1);
    std::string h = "@@ -" + (fp.empty() ? std::string("@") : fp) + " +" +
                    (fq.empty() ? std::string("@") : fq) + " @@";
    IRT_ASSIGN_OR_RETURN(NodeView mv, Node(0, sa.call));
    if (!mv.op().empty()) {
      h += " ⟨";
      h += DisplayString(mv.op());
      h += "⟩";
    }
    out += Color("36", h);
    out += '\n';
    hunk_serial_ = f.serial;
  }
  std::vector<Item> ctx;
  uint64_t want = std::min<uint64_t>(o_.context, gap);
  if (want > 0) {
    if (anchor_a != nullptr) {
      IRT_ASSIGN_OR_RETURN(
          ctx, PrevChildren(0, f, anchor_a->id, anchor_a->end, anchor_a->pos, want, false));
    } else if (sa.last_id != kNoNode) {
      IRT_ASSIGN_OR_RETURN(
          ctx, PrevChildren(0, f, sa.last_id, sa.last_end, sa.consumed - 1, want, true));
    }
  }
  for (size_t i = ctx.size(); i-- > 0;) {
    if (ctx[i].pos < f.printed) continue;
    std::string line = " ";
    IRT_RETURN_IF_ERROR(AppendLine(line, 0, f, ctx[i].id, ctx[i].end, ctx[i].pos));
    out += line;
    out += '\n';
  }
  f.printed = std::max(f.printed, upto);
  return Write(out);
}

Status Differ::EmitEqual(Frame& f, const Item& a) {
  if (!text_) return Status::Ok();
  if (f.trail == 0 || hunk_serial_ != f.serial) {
    f.trail = 0;
    return Status::Ok();
  }
  --f.trail;
  std::string line = " ";
  IRT_RETURN_IF_ERROR(AppendLine(line, 0, f, a.id, a.end, a.pos));
  line += '\n';
  f.printed = std::max(f.printed, a.pos + 1);
  return Write(line);
}

std::string DescribeTensorDiff(const ValueDiff& vd) {
  std::string s = "\\ ";
  AppendU(s, static_cast<uint64_t>(vd.differing));
  s += " of ";
  AppendU(s, static_cast<uint64_t>(vd.numel));
  s += " elements differ; largest |a - b| = ";
  s += FormatDouble(vd.max_abs);
  s += " at [";
  for (size_t i = 0; i < vd.where.size(); ++i) {
    if (i) s += ", ";
    AppendU(s, static_cast<uint64_t>(vd.where[i]) + 1);
  }
  s += "]";
  return s;
}

Status Differ::EmitJsonNode(std::string& out, int s, const Frame& f, const Item& it) {
  size_t fi = static_cast<size_t>(&f - stack_.data());
  out += "{\"path\":";
  AppendJsonString(out, NodePath(fi, s, it.pos));
  out += ",\"id\":";
  AppendU(out, it.id);
  std::string line;
  IRT_RETURN_IF_ERROR(AppendLine(line, s, f, it.id, it.end, it.pos));
  out += ",\"node\":";
  AppendJsonString(out, line);
  IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, it.id));
  out += ",\"kind\":";
  AppendJsonString(out, NodeKindName(v.kind()));
  if (!v.op().empty()) {
    out += ",\"op\":";
    AppendJsonString(out, v.op());
  }
  Value val;
  bool has = v.vkind() != VKind::kNone;
  if (it.is_call() && it.end != kNoNode) {
    IRT_ASSIGN_OR_RETURN(NodeView e, Node(s, it.end));
    if (e.kind() == NodeKind::kReturn) {
      val = e.value();
      has = true;
    }
  } else if (has) {
    val = v.value();
  }
  if (has) {
    out += ",\"value\":";
    JsonValue(out, val, fo_);
    out += ",\"type\":";
    AppendJsonString(out, TypeName(val));
  }
  if (it.is_call()) {
    out += ",\"nodes\":";
    AppendU(out, it.end - it.id + 1);
  }
  out += '}';
  return Status::Ok();
}

Status Differ::EmitChange(Frame& f, const Item* a, const Item* b, const char* what,
                          const ValueDiff* vd) {
  if (json_) {
    std::string out = first_json_ ? "\n" : ",\n";
    first_json_ = false;
    out += "{\"change\":";
    AppendJsonString(out, what);
    if (a) {
      out += ",\"a\":";
      IRT_RETURN_IF_ERROR(EmitJsonNode(out, 0, f, *a));
    }
    if (b) {
      out += ",\"b\":";
      IRT_RETURN_IF_ERROR(EmitJsonNode(out, 1, f, *b));
    }
    if (vd && vd->numeric) {
      out += ",\"max_abs_diff\":";
      AppendJsonDouble(out, vd->max_abs);
    }
    if (vd && vd->tensor) {
      out += ",\"elements_differing\":";
      AppendU(out, static_cast<uint64_t>(vd->differing));
      out += ",\"elements\":";
      AppendU(out, static_cast<uint64_t>(vd->numel));
      out += ",\"largest_at\":[";
      for (size_t i = 0; i < vd->where.size(); ++i) {
        if (i) out += ',';
        AppendU(out, static_cast<uint64_t>(vd->where[i]) + 1);
      }
      out += ']';
    }
    out += '}';
    return Write(out);
  }
  if (!text_) return Status::Ok();
  IRT_RETURN_IF_ERROR(StartHunk(f, a));
  std::string out;
  auto subtree = [&](const Item& it) {
    if (!it.is_call()) return std::string();
    std::string s = "  (subtree of ";
    AppendU(s, it.end - it.id + 1);
    s += " nodes)";
    return s;
  };
  bool only = b == nullptr || a == nullptr;
  if (a) {
    std::string line = "-";
    IRT_RETURN_IF_ERROR(AppendLine(line, 0, f, a->id, a->end, a->pos));
    if (only) line += subtree(*a);
    out += Color("31", line);
    out += '\n';
    f.printed = std::max(f.printed, a->pos + 1);
  }
  if (b) {
    std::string line = "+";
    IRT_RETURN_IF_ERROR(AppendLine(line, 1, f, b->id, b->end, b->pos));
    if (only) line += subtree(*b);
    out += Color("32", line);
    out += '\n';
  }
  if (vd && vd->tensor && vd->differing > 0) {
    out += DescribeTensorDiff(*vd);
    out += '\n';
  }
  f.trail = o_.context;
  return Write(out);
}

// ------------------------------------------------------------ driver

Status Differ::Finish(Output& out) {
  auto producer = [](const Trace& t) {
    std::string p(t.producer_name());
    if (!t.producer_version().empty()) {
      p += ' ';
      p += t.producer_version();
    }
    return p;
  };
  sum_.producer_a = producer(*t_[0]);
  sum_.producer_b = producer(*t_[1]);
  bool producers_differ = sum_.producer_a != sum_.producer_b;
  const DiffDivergence* d = sum_.divergence ? &*sum_.divergence : nullptr;
  auto cond_text = [&](const DiffDivergence& dv) {
    std::string s = "condition " + dv.cond_path_a;
    if (dv.cond_path_b != dv.cond_path_a && !dv.cond_path_b.empty()) {
      s += " (b: " + dv.cond_path_b + ")";
    }
    auto show = [&](const Value& v) {
      return v.is_none() ? std::string("absent") : FormatValue(v, fo_);
    };
    s += " is " + show(dv.cond_a) + " in a, " + show(dv.cond_b) + " in b";
    return s;
  };
  std::string h;
  if (o_.format == DiffFormat::kJson) {
    auto side = [&](const char* key, const std::string& name, const Trace& t) {
      h += key;
      h += "{\"name\":";
      AppendJsonString(h, name);
      h += ",\"producer\":{\"name\":";
      AppendJsonString(h, t.producer_name());
      h += ",\"version\":";
      AppendJsonString(h, t.producer_version());
      h += "},\"nodes\":";
      AppendU(h, t.size());
      h += '}';
    };
    side("{\"a\":", o_.name_a, *t_[0]);
    side(",\"b\":", o_.name_b, *t_[1]);
    h += ",\"same\":";
    h += sum_.same() ? "true" : "false";
    h += ",\"divergence\":";
    if (d) {
      h += "{\"a\":{\"path\":";
      AppendJsonString(h, d->path_a);
      h += ",\"node\":";
      AppendJsonString(h, d->line_a);
      h += "},\"b\":{\"path\":";
      AppendJsonString(h, d->path_b);
      h += ",\"node\":";
      AppendJsonString(h, d->line_b);
      h += '}';
      if (d->has_condition) {
        h += ",\"condition\":{\"a\":{\"path\":";
        AppendJsonString(h, d->cond_path_a);
        h += ",\"value\":";
        JsonValue(h, d->cond_a, fo_);
        h += "},\"b\":{\"path\":";
        AppendJsonString(h, d->cond_path_b);
        h += ",\"value\":";
        JsonValue(h, d->cond_b, fo_);
        h += "}}";
      }
      h += '}';
    } else {
      h += "null";
    }
    auto num = [&](const char* key, uint64_t v) {
      h += ",\"";
      h += key;
      h += "\":";
      AppendU(h, v);
    };
    h += ",\"summary\":{\"matched\":";
    AppendU(h, sum_.matched);
    num("changed_values", sum_.changed_values);
    num("changed_operands", sum_.changed_operands);
    num("only_a_children", sum_.only_a_children);
    num("only_a_nodes", sum_.only_a_nodes);
    num("only_a_calls", sum_.only_a_calls);
    num("only_b_children", sum_.only_b_children);
    num("only_b_nodes", sum_.only_b_nodes);
    num("only_b_calls", sum_.only_b_calls);
    num("changed_meta", sum_.changed_meta);
    num("changed_trace_meta", sum_.changed_trace_meta);
    num("unaligned_regions", sum_.unaligned_regions);
    h += ",\"max_abs_diff\":";
    AppendJsonDouble(h, sum_.max_abs_diff);
    h += "},\"trace_meta\":[" + trace_meta_json_ + "],\"changes\":[";
    out.Write(h);
    IRT_RETURN_IF_ERROR(spool_.CopyTo(out));
    out.Write(first_json_ ? "]}\n" : "\n]}\n");
    return Status::Ok();
  }
  if (o_.format == DiffFormat::kStat) {
    auto line = [&](const std::string& k, const std::string& v) { h += k + v + "\n"; };
    line("a: ",
         o_.name_a + " (" + sum_.producer_a + "), " + std::to_string(sum_.nodes_a) + " nodes");
    line("b: ",
         o_.name_b + " (" + sum_.producer_b + "), " + std::to_string(sum_.nodes_b) + " nodes");
    if (d) {
      std::string s = d->path_a;
      if (d->path_b != d->path_a) s += " (b: " + d->path_b + ")";
      if (d->has_condition) s += ", " + cond_text(*d);
      line("first divergence:  ", s);
    } else {
      line("first divergence:  ", "none");
    }
    line("changed values:    ",
         std::to_string(sum_.changed_values) +
             (sum_.changed_values ? " (largest |a - b| = " + FormatDouble(sum_.max_abs_diff) + ")"
                                  : std::string()));
    line("changed operands:  ", std::to_string(sum_.changed_operands));
    line("only in a:         ", std::to_string(sum_.only_a_children) + " children, " +
                                    std::to_string(sum_.only_a_nodes) + " nodes, " +
                                    std::to_string(sum_.only_a_calls) + " calls");
    line("only in b:         ", std::to_string(sum_.only_b_children) + " children, " +
                                    std::to_string(sum_.only_b_nodes) + " nodes, " +
                                    std::to_string(sum_.only_b_calls) + " calls");
    line("changed metadata:  ", std::to_string(sum_.changed_meta) + " nodes, " +
                                    std::to_string(sum_.changed_trace_meta) + " trace entries");
    line("matched:           ", std::to_string(sum_.matched) + " nodes");
    if (sum_.unaligned_regions) {
      line("unaligned regions: ", std::to_string(sum_.unaligned_regions));
    }
    line("", sum_.same() ? "same" : "different");
    out.Write(h);
    return Status::Ok();
  }
  // Text.
  if (sum_.same() && !producers_differ) return Status::Ok();
  h += Color("1", "--- " + o_.name_a + " (" + sum_.producer_a + ", " +
                      std::to_string(sum_.nodes_a) + " nodes)");
  h += '\n';
  h += Color("1", "+++ " + o_.name_b + " (" + sum_.producer_b + ", " +
                      std::to_string(sum_.nodes_b) + " nodes)");
  h += '\n';
  if (producers_differ) {
    h += "# producers differ: " + sum_.producer_a + " in a, " + sum_.producer_b + " in b\n";
  }
  if (d) {
    std::string s = "# first divergence at " + d->path_a;
    if (d->path_b != d->path_a) s += " (b: " + d->path_b + ")";
    if (d->has_condition) s += ": " + cond_text(*d);
    h += s + "\n#   a: " + d->line_a + "\n#   b: " + d->line_b + "\n";
  }
  h += trace_meta_lines_;
  if (!sum_.same()) h += root_lines_;
  out.Write(h);
  return spool_.CopyTo(out);
}

Result<DiffSummary> Differ::Run(Output& out) {
  sum_.nodes_a = t_[0]->size();
  sum_.nodes_b = t_[1]->size();
  NodeId ends[2];
  for (int s = 0; s < 2; ++s) {
    IRT_ASSIGN_OR_RETURN(Child root, RootCall(*t_[s]));
    if (root.end == kNoNode) return DataError(t_[s]->name() + ": the root call is not closed");
    ends[s] = root.end;
  }
  // Trace-level metadata, by key.
  {
    auto ma = t_[0]->trace_meta(), mb = t_[1]->trace_meta();
    std::set<std::string> keys;
    for (const auto& e : ma) keys.insert(std::string(e.key));
    for (const auto& e : mb) keys.insert(std::string(e.key));
    auto find = [](const std::vector<MetaEntry>& m, const std::string& k) -> const Value* {
      for (const auto& e : m) {
        if (e.key == k) return &e.value;
      }
      return nullptr;
    };
    for (const std::string& k : keys) {
      if (ignore_.count(k)) continue;
      const Value* x = find(ma, k);
      const Value* y = find(mb, k);
      if (x && y && CompareValues(*x, *y, tol_).equal) continue;
      ++sum_.changed_trace_meta;
      auto show = [&](const Value* v) { return v ? FormatValue(*v, fo_) : std::string("absent"); };
      trace_meta_lines_ +=
          "# trace metadata " + k + ": " + show(x) + " in a, " + show(y) + " in b\n";
      if (!trace_meta_json_.empty()) trace_meta_json_ += ',';
      trace_meta_json_ += "{\"key\":";
      AppendJsonString(trace_meta_json_, k);
      trace_meta_json_ += ",\"a\":";
      if (x)
        JsonValue(trace_meta_json_, *x, fo_);
      else
        trace_meta_json_ += "null";
      trace_meta_json_ += ",\"b\":";
      if (y)
        JsonValue(trace_meta_json_, *y, fo_);
      else
        trace_meta_json_ += "null";
      trace_meta_json_ += '}';
    }
  }
  // The root call itself: its arguments, metadata and result.
  {
    ++sum_.matched;
    IRT_ASSIGN_OR_RETURN(NodeView va, Node(0, 0));
    IRT_ASSIGN_OR_RETURN(NodeView vb, Node(1, 0));
    bool ops = false, meta = false;
    IRT_RETURN_IF_ERROR(CompareOperands(va, vb, &ops));
    IRT_RETURN_IF_ERROR(CompareMeta(va, vb, &meta));
    if (va.op() != vb.op()) ops = true;
    if (ops) ++sum_.changed_operands;
    if (meta) ++sum_.changed_meta;
    std::string la, lb;
    IRT_RETURN_IF_ERROR(AppendRootLine(la, 0, ends[0]));
    IRT_RETURN_IF_ERROR(AppendRootLine(lb, 1, ends[1]));
    if (la == lb) {
      root_lines_ = " " + la + "\n";
    } else {
      root_lines_ = Color("31", "-" + la) + "\n" + Color("32", "+" + lb) + "\n";
    }
    if (json_ && (ops || meta)) {
      std::string o = first_json_ ? "\n" : ",\n";
      first_json_ = false;
      o += "{\"change\":";
      AppendJsonString(o, ops && meta ? "operands,meta" : ops ? "operands" : "meta");
      o += ",\"a\":{\"path\":\"\",\"node\":";
      AppendJsonString(o, la);
      o += "},\"b\":{\"path\":\"\",\"node\":";
      AppendJsonString(o, lb);
      o += "}}";
      IRT_RETURN_IF_ERROR(Write(o));
    }
  }
  Frame root;
  for (int s = 0; s < 2; ++s) {
    root.s[s].call = 0;
    root.s[s].next = 1;
  }
  root.serial = next_serial_++;
  stack_.push_back(std::move(root));
  while (!stack_.empty()) {
    Frame& f = stack_.back();
    IRT_ASSIGN_OR_RETURN(Op op, NextOp(f));
    switch (op.type) {
      case OpType::kDone: {
        Frame done = std::move(stack_.back());
        stack_.pop_back();
        if (!stack_.empty()) IRT_RETURN_IF_ERROR(CallDone(stack_.back(), done));
        break;
      }
      case OpType::kMatch:
        if (op.a.is_call()) {
          ++sum_.matched;
          Frame child;
          for (int s = 0; s < 2; ++s) {
            const Item& it = s == 0 ? op.a : op.b;
            child.s[s].call = it.id;
            child.s[s].next = it.id + 1;
            child.s[s].pos_in_parent = it.pos;
          }
          child.serial = next_serial_++;
          stack_.push_back(std::move(child));  // f is invalid from here
        } else {
          IRT_RETURN_IF_ERROR(CompareMatched(f, op.a, op.b));
        }
        break;
      case OpType::kOnlyA:
        IRT_RETURN_IF_ERROR(OnlyOne(f, 0, op.a));
        break;
      case OpType::kOnlyB:
        IRT_RETURN_IF_ERROR(OnlyOne(f, 1, op.b));
        break;
    }
  }
  IRT_RETURN_IF_ERROR(Finish(out));
  return sum_;
}

}  // namespace

Result<DiffSummary> DiffTraces(const Trace& a, const Trace& b, const DiffOptions& options,
                               Output& out) {
  if (!(options.rtol >= 0) || !(options.atol >= 0)) {
    return UsageError("--rtol and --atol must be non-negative numbers");
  }
  if (options.max_edits == 0 || options.max_lookahead < 2) {
    return UsageError("the alignment budget must be positive");
  }
  Differ d(a, b, options);
  return d.Run(out);
}

}  // namespace irt
