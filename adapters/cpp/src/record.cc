// The C++ recording front end: frames of recorded calls, one node class per
// (function, block, source position, operation), the blocks of each branch
// site, and the control-flow facts of every function, learned as its
// branches run and re-registered with the writer whenever they grow.
#include "irt/record.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>

#include "irt/eval.h"
#include "irt/ops.h"

namespace irt::rec {

namespace detail {
constinit thread_local Recorder* t_current = nullptr;
constinit thread_local FastFrame t_fast;

std::string_view OpName(Op op) {
  switch (op) {
    case Op::kAdd:
      return "+";
    case Op::kSub:
      return "-";
    case Op::kMul:
      return "*";
    case Op::kDiv:
      return "/";
    case Op::kPow:
      return "^";
    case Op::kNeg:
      return "-";
    case Op::kLt:
      return "<";
    case Op::kLe:
      return "<=";
    case Op::kGt:
      return ">";
    case Op::kGe:
      return ">=";
    case Op::kEq:
      return "==";
    case Op::kNe:
      return "!=";
    case Op::kNot:
      return "!";
    case Op::kAnd:
      return "&";
    case Op::kOr:
      return "|";
    case Op::kSin:
      return "sin";
    case Op::kCos:
      return "cos";
    case Op::kTan:
      return "tan";
    case Op::kExp:
      return "exp";
    case Op::kLog:
      return "log";
    case Op::kSqrt:
      return "sqrt";
    case Op::kTanh:
      return "tanh";
    case Op::kAbs:
      return "abs";
    case Op::kAtan:
      return "atan";
    case Op::kLog1p:
      return "log1p";
    case Op::kExpm1:
      return "expm1";
    case Op::kMax:
      return "max";
    case Op::kMin:
      return "min";
    case Op::kRand:
      return "rand";
    case Op::kRandn:
      return "randn";
    case Op::kConst:
      return "";
    case Op::kMatmul:
      return "matmul";
    case Op::kSum:
      return "sum";
    case Op::kTranspose:
      return "transpose";
    case Op::kGetindex:
      return "getindex";
    case Op::kReshape:
      return "reshape";
    case Op::kMean:
      return "mean";
    case Op::kMaximum:
      return "maximum";
  }
  return "?";
}
Value Evaluate(Op op, std::span<const Value> args) {
  // The operation's row for each operation and arity, found by name once
  // (ApplyPrimitive looks it up on every call).
  constexpr size_t kOps = static_cast<size_t>(Op::kMaximum) + 1, kArities = 4;
  static const auto* const rows = [] {
    auto* t = new std::array<std::array<const OpDef*, kArities>, kOps>();
    for (size_t o = 0; o < kOps; ++o) {
      for (size_t n = 0; n < kArities; ++n) (*t)[o][n] = FindOp(OpName(static_cast<Op>(o)), n);
    }
    return t;
  }();
  const OpDef* row =
      args.size() < kArities ? (*rows)[static_cast<size_t>(op)][args.size()] : nullptr;
  Result<Value> v = row != nullptr ? ApplyOp(*row, args) : ApplyPrimitive(OpName(op), args);
  if (!v.ok()) throw OpError(v.status().message());
  return std::move(v).value();
}

bool ElementOf(const Tensor& x, std::span<const int64_t> index, double* out) {
  return ElementF64(x.data(), index, out);
}

}  // namespace detail

// ---------------------------------------------------------------- Tensor

Tensor::Tensor(Value v) : v_(std::move(v)) {
  if (v_.kind() != VKind::kTensor) throw OpError("a Tensor needs a tensor value");
}

Tensor::Tensor(std::vector<int64_t> shape, const std::vector<double>& data) {
  irt::Tensor t;
  t.dtype = DType::kF64;
  t.shape = std::move(shape);
  Result<int64_t> n = CheckedNumel(t.shape);
  if (!n.ok()) throw OpError(n.status().message());
  if (static_cast<uint64_t>(*n) != data.size()) {
    throw OpError("a tensor of " + std::to_string(*n) + " elements given " +
                  std::to_string(data.size()) + " values");
  }
  t.data.resize(data.size() * sizeof(double));
  if (!data.empty()) std::memcpy(t.data.data(), data.data(), t.data.size());
  v_ = Value::MakeTensor(std::move(t));
}

Tensor Tensor::FromEigen(const Eigen::Ref<const Eigen::MatrixXd>& m) {
  std::vector<double> d(static_cast<size_t>(m.size()));
  Eigen::Map<Matrix>(d.data(), m.rows(), m.cols()) = m;
  return Tensor({m.rows(), m.cols()}, d);
}

Eigen::Map<const Tensor::Matrix> Tensor::matrix() const {
  const irt::Tensor& t = v_.tensor();
  if (t.dtype != DType::kF64 || t.shape.empty() || t.shape.size() > 2) {
    throw OpError("matrix(): a Float64 tensor of 1 or 2 dimensions is needed");
  }
  int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
  int64_t cols = t.shape.back();
  return Eigen::Map<const Matrix>(t.f64(), rows, cols);
}

using detail::Loc;
using detail::Op;
using detail::Operand;

namespace {

// Recorder generations: a static Function or IfSite caches what one
// recorder knows of it, tagged with that recorder's generation.
uint64_t g_generation = 0;

// Recorded calls, numbered across all recorders and threads, so that a
// value of one recorder's call is never taken for a node of another's.
// Each thread takes the numbers in blocks, so that a call costs no atomic
// operation.
std::atomic<uint32_t> g_next_serial{1};
constexpr uint32_t kSerialBlock = 1024;
thread_local uint32_t t_serial_next = 0, t_serial_end = 0;

uint32_t NextSerial() {
  if (t_serial_next == t_serial_end) {
    t_serial_next = g_next_serial.fetch_add(kSerialBlock, std::memory_order_relaxed);
    t_serial_end = t_serial_next + kSerialBlock;
  }
  return t_serial_next++;
}

// What else a node class key distinguishes besides an operation.
enum class Shape : uint8_t {
  kOp,        // a primitive operation (Op)
  kConstant,  // an imported or varying plain operand
  kCall,      // a call marker (file = the callee's Function)
  kPrimCall,  // a call recorded as a primitive
  kArgument,  // a function argument (col = its position)
  kBlockArg,  // a block argument (col = its number)
  kJump,      // col = branch position, line = target block
  kReturn,
  kError,
};

struct Key {
  const void* file;
  uint32_t fn, block, line, col;
  uint8_t op;
  Shape shape;
  uint8_t lit_mask;
  bool operator==(const Key&) const = default;
};

// The class of a statement at key's place (block, line, column) whose
// operands are `ops`: those in key.lit_mask literals of the class, the
// others references.
ClassSpec StatementSpec(NodeKind kind, std::string op, uint32_t pos, const Key& key,
                        const Operand* ops, uint32_t n) {
  ClassSpec s;
  s.kind = kind;
  s.op = std::move(op);
  s.block = key.block;
  s.pos = pos;
  s.line = key.line;
  s.col = static_cast<uint16_t>(std::min<uint32_t>(key.col, 0xFFFF));
  for (uint32_t i = 0; i < n; ++i) {
    s.operands.push_back(key.lit_mask & (1u << i)
                             ? OperandSpec::Literal(Value::FromBits(ops[i].vk, ops[i].bits))
                             : OperandSpec::Ref());
  }
  return s;
}

struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k.file) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t{k.fn} << 32 | k.block) * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t{k.line} << 32 | k.col) * 0x165667B19E3779F9ull;
    h ^= (uint64_t{k.op} << 16 | uint64_t{static_cast<uint8_t>(k.shape)} << 8 | k.lit_mask) *
         0x27D4EB2F165667C5ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

struct ClassEntry {
  ClassId cls = 0;
  uint32_t pos = 0;
  uint64_t lit[4] = {0, 0, 0, 0};  // literal operands' bits, by operand
  VKind lit_vk[4] = {VKind::kNone, VKind::kNone, VKind::kNone, VKind::kNone};
  bool varying = false;  // the literals changed: plain operands become Constants
};

// A small open-addressing map from Key to ClassEntry: one probe per node
// on the hot path.
class ClassCache {
 public:
  ClassCache() : slots_(1024) {}
  ClassEntry* Find(const Key& k, size_t h) {
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == k) return &s.entry;
    }
  }
  ClassEntry* Insert(const Key& k, size_t h) {
    if ((used_ + 1) * 2 > slots_.size()) Grow();
    size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i].used = true;
    slots_[i].key = k;
    ++used_;
    return &slots_[i].entry;
  }

 private:
  struct Slot {
    Key key{};
    ClassEntry entry;
    bool used = false;
  };
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot());
    used_ = 0;
    for (Slot& s : old) {
      if (s.used) *Insert(s.key, KeyHash()(s.key)) = s.entry;
    }
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

// The blocks a branch site opened in one function: if: then, else, join;
// while: header, body, exit. The loop's block-argument SSA ids follow.
struct SiteBlocks {
  uint32_t a = 0, b = 0, c = 0;
  std::vector<uint32_t> arg_pos;
  // Classes of the site's nodes, once known: the jump into a loop header
  // from the two blocks it is entered from (before the loop, end of the
  // body), the block arguments, the two branches of the test.
  uint32_t goto_from[2] = {0, 0};
  ClassId goto_cls[2] = {0, 0};
  // The same for an if's jumps to its join block (from the blocks its
  // branches end in).
  uint32_t join_from[2] = {0, 0};
  ClassId join_cls[2] = {0, 0};
  std::vector<ClassId> arg_cls;
  bool test_known = false;  // the test's facts are registered
  bool test_cond_ref = false;
  uint32_t test_block = 0, test_cond_pos = 0;
  ClassId test_false_cls = 0, test_true_cls = 0;
  bool test_false_known = false, test_true_known = false;
};

struct FnState {
  std::string name;
  uint32_t n_args = 0;
  uint32_t next_pos = 0;
  uint32_t blocks = 1;
  std::map<std::pair<uint32_t, uint32_t>, BranchFact> facts;
  // What every call of the function looks up alike, found once: the class
  // of its %1 (kNoCls until known), of each argument with (1) and without
  // (0) a reference to the caller's node, and, per block, whether the fact
  // of a Return from it is registered.
  static constexpr ClassId kNoCls = ~ClassId{0};
  ClassId self_cls = kNoCls;
  Value self;  // the value of %1
  std::vector<ClassId> arg_cls[2];
  std::vector<uint8_t> return_fact;
  std::vector<ClassId> return_cls;  // by block: a Return of a reference
  // The last call statement into the function without literal arguments:
  // where it was (the caller's function and block) and its classes.
  struct CallMemo {
    uint32_t caller_fn = ~0u, caller_block = 0;
    Shape shape = Shape::kCall;
    ClassId cls = 0, err_cls = 0;
    uint32_t pos = 0;
  } call_memo;
};

struct Import {
  NodeId id;
  NodeId local;
  uint32_t serial;
  uint32_t pos;
};

struct Frame {
  uint32_t fn = 0;
  uint32_t serial = 0;
  uint32_t block = 1;
  uint32_t level = 1;
  NodeId marker = 0;
  bool muted = false;     // inside a call recorded as a primitive
  bool prim_top = false;  // the call recorded as a primitive itself
  bool closed = false;
  // The call in the caller: its SSA id there (the caller's view of the
  // result), and for a primitive call its node class and operands.
  uint32_t call_pos = 0;
  ClassId prim_cls = 0;
  ClassId call_error_cls = 0;
  // The call's references in the caller: ref_pool[refs_at, refs_at + n_refs).
  uint32_t refs_at = 0, n_refs = 0;
  // Where the frame's imports and open loops start in the recorder's pools
  // (only the innermost frame adds to them, so each frame's are contiguous).
  uint32_t imports_at = 0, loops_at = 0;
  // A callee failed: the Error for the statement that called it (its
  // references are the recorder's failed_refs); innermost: a primitive
  // call, the failing statement itself.
  bool failed = false;
  bool failed_innermost = false;
  ClassId failed_cls = 0;
};

}  // namespace

// The stacks a recorder grows with the depth of the recorded program,
// kept by the thread for its next recorder: recording a program again (as
// an optimization loop does) reuses their memory instead of asking the
// kernel for fresh pages, which costs about 0.4 ms per MiB here (W3's are
// 4 MiB). A stack that grew past kSpareBytes is let go.
thread_local bool t_spare_gone = false;  // trivially destroyed: readable at any time
struct SpareStacks {
  static constexpr size_t kSpareBytes = size_t{16} << 20;
  SpareStacks() = default;
  SpareStacks(const SpareStacks&) = delete;
  SpareStacks& operator=(const SpareStacks&) = delete;
  // A recorder that outlives its thread's locals (a static one) keeps
  // nothing.
  ~SpareStacks() { t_spare_gone = true; }
  std::vector<Frame> frames;
  std::vector<NodeId> ref_pool;
  std::vector<Import> import_pool;
  std::vector<const detail::IfSite*> loop_pool;
  std::vector<detail::FastSlot> slots;

  template <class T>
  static void Take(std::vector<T>& from, std::vector<T>& to) {
    from.clear();
    to.clear();
    to.swap(from);
  }
  template <class T>
  static void Keep(std::vector<T>& from, std::vector<T>& spare) {
    if (from.capacity() * sizeof(T) > kSpareBytes || from.capacity() <= spare.capacity()) return;
    from.clear();
    spare.swap(from);
  }
};
thread_local SpareStacks t_spare;

struct Recorder::Impl {
  Impl() {
    if (t_spare_gone) {
      slots.assign(detail::kFastSlots, Slot{});
      return;
    }
    SpareStacks::Take(t_spare.frames, frames);
    SpareStacks::Take(t_spare.ref_pool, ref_pool);
    SpareStacks::Take(t_spare.import_pool, import_pool);
    SpareStacks::Take(t_spare.loop_pool, loop_pool);
    if (t_spare.slots.size() == detail::kFastSlots) {
      slots.swap(t_spare.slots);
      std::fill(slots.begin(), slots.end(), Slot{});
    } else {
      slots.assign(detail::kFastSlots, Slot{});
    }
  }
  ~Impl() {
    if (t_spare_gone) return;
    SpareStacks::Keep(frames, t_spare.frames);
    SpareStacks::Keep(ref_pool, t_spare.ref_pool);
    SpareStacks::Keep(import_pool, t_spare.import_pool);
    SpareStacks::Keep(loop_pool, t_spare.loop_pool);
    if (t_spare.slots.empty()) t_spare.slots.swap(slots);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  std::unique_ptr<Output> out;
  std::unique_ptr<TraceWriter> w;
  Context default_context;
  Context* ctx = nullptr;
  bool wants_nodes = false;
  RecorderOptions opts;
  uint64_t generation = 0;
  Status open_status;
  bool finished = false;
  bool active = false;
  std::string failure;

  std::vector<Frame> frames;
  std::vector<NodeId> ref_pool;
  std::vector<Import> import_pool;
  std::vector<const detail::IfSite*> loop_pool;
  std::vector<NodeId> failed_refs;
  // Pops the innermost frame with what it holds in the pools.
  void PopFrame() {
    const Frame& f = frames.back();
    ref_pool.resize(f.refs_at);
    import_pool.resize(f.imports_at);
    loop_pool.resize(f.loops_at);
    frames.pop_back();
  }
  // Pushes a frame, its call references taken from `refs`.
  // (The pool positions are set on the pushed copy: set on `f` just
  // before the copy, they would stall the copy's wide loads.)
  // Pushes the frame of a call of function `fn` and returns it, filled in
  // place (a Frame built elsewhere and copied in costs a stalled copy per
  // call: its fields are written narrow and read back wide).
  Frame& PushFrame(uint32_t fn, uint32_t serial, uint32_t level, const NodeId* refs, uint32_t n) {
    Frame& d = frames.emplace_back();
    d.fn = fn;
    d.serial = serial;
    d.level = level;
    d.refs_at = static_cast<uint32_t>(ref_pool.size());
    d.n_refs = n;
    d.imports_at = static_cast<uint32_t>(import_pool.size());
    d.loops_at = static_cast<uint32_t>(loop_pool.size());
    for (uint32_t i = 0; i < n; ++i) ref_pool.push_back(refs[i]);
    return d;
  }
  const NodeId* CallRefs(const Frame& f) const { return ref_pool.data() + f.refs_at; }
  // A direct-mapped cache in front of `cache` for the operations whose
  // operands are all references or literals of their class, by source
  // position; the operators' inline path reads it too (t_fast).
  using Slot = detail::FastSlot;
  std::vector<Slot> slots;  // kFastSlots of them (the constructor's)
  Slot& SlotFor(const Loc& loc, uint32_t block, Op op) {
    return slots[detail::FastSlotIndex(loc.line, loc.col, block, static_cast<uint8_t>(op))];
  }
  // Publishes the innermost frame to the inline path.
  void Sync() {
    detail::FastFrame& ff = detail::t_fast;
    if (!active || frames.empty() || frames.back().muted || frames.back().closed || wants_nodes) {
      ff.active = false;
      return;
    }
    const Frame& f = frames.back();
    ff.active = true;
    ff.serial = f.serial;
    ff.fn = f.fn;
    ff.block = f.block;
    ff.marker = f.marker;
    ff.w = w.get();
    ff.slots = slots.data();
  }
  // Publishes a new block of the innermost frame `f`: the inline path,
  // when active, already reflects that frame (every change of the frames
  // calls Sync), so the block is all that changes.
  void SyncBlock(const Frame& f) {
    detail::FastFrame& ff = detail::t_fast;
    if (ff.active) ff.block = f.block;
  }
  ClassId last_jump_cls = 0;  // the class Goto used last
  ClassCache cache;
  std::vector<FnState> fns;
  std::unordered_map<const detail::Function*, uint32_t> fn_index;
  std::unordered_map<const detail::IfSite*, std::unordered_map<uint32_t, SiteBlocks>> sites;

  // ---------------------------------------------------------------- classes

  ClassEntry& ClassFor(const Key& k, ClassSpec (*make)(Impl&, const Key&, const void*),
                       const void* arg, bool* fresh) {
    size_t h = KeyHash()(k);
    if (ClassEntry* e = cache.Find(k, h)) {
      *fresh = false;
      return *e;
    }
    ClassSpec spec = make(*this, k, arg);
    ClassEntry* e = cache.Insert(k, h);
    e->pos = spec.pos;
    e->cls = w->DefineClass(std::move(spec));
    *fresh = true;
    return *e;
  }

  uint32_t NewPos(uint32_t fn) { return ++fns[fn].next_pos; }

  // ------------------------------------------------------------ control flow

  void AddFact(uint32_t fn, BranchFact b) {
    FnState& f = fns[fn];
    auto [it, inserted] = f.facts.try_emplace(std::make_pair(b.block, b.pos), b);
    if (!inserted) return;
    RegisterFlow(fn);
  }
  void RegisterFlow(uint32_t fn) {
    FnState& f = fns[fn];
    ControlFlow flow;
    flow.blocks = f.blocks;
    for (const auto& [key, b] : f.facts) flow.branches.push_back(b);
    // A block whose branches are not yet all known (a site discovered in a
    // block whose earlier positions never ran) keeps what is contiguous.
    std::vector<BranchFact> kept;
    uint32_t block = 0, next = 1;
    for (const BranchFact& b : flow.branches) {
      if (b.block != block) {
        block = b.block;
        next = 1;
      }
      if (b.pos == next) {
        kept.push_back(b);
        ++next;
      }
    }
    flow.branches = std::move(kept);
    w->RegisterControlFlow(f.name, std::move(flow));
  }

  [[gnu::always_inline]] SiteBlocks& BlocksOf(detail::IfSite& site, uint32_t fn, bool* fresh) {
    if (site.generation == generation && site.fn == fn) {
      *fresh = false;
      return *static_cast<SiteBlocks*>(site.blocks);
    }
    SiteBlocks& b = BlocksOfSlow(site, fn, fresh);
    site.generation = generation;
    site.fn = fn;
    site.blocks = &b;
    return b;
  }
  SiteBlocks& BlocksOfSlow(const detail::IfSite& site, uint32_t fn, bool* fresh) {
    auto& per_fn = sites[&site];
    auto it = per_fn.find(fn);
    *fresh = it == per_fn.end();
    if (!*fresh) return it->second;
    SiteBlocks& b = per_fn[fn];
    FnState& f = fns[fn];
    b.a = ++f.blocks;
    b.b = ++f.blocks;
    b.c = ++f.blocks;
    return b;
  }

  // ---------------------------------------------------------------- operands

  // Appends a node whose value is the operand's (a scalar's bits or a
  // tensor's value).
  NodeId AppendValue(ClassId cls, const Operand& v, const NodeId* refs, uint32_t n) {
    if (v.big != nullptr) return w->Append(cls, *v.big, std::span<const NodeId>(refs, n));
    return w->AppendScalar(cls, v.vk, v.bits, refs, n);
  }
  static Value LiteralOf(const Operand& o) {
    return o.big != nullptr ? *o.big : Value::FromBits(o.vk, o.bits);
  }

  // A node of the current frame for an operand of another call (or a
  // varying plain number): a Constant node, once per value and frame.
  NodeId ImportAt(Frame& f, const Operand& o, const Loc& loc, uint32_t* pos) {
    if (o.id != kNoNode) {
      for (size_t k = f.imports_at; k < import_pool.size(); ++k) {
        const Import& im = import_pool[k];
        if (im.serial == o.serial && im.id == o.id) {
          *pos = im.pos;
          return im.local;
        }
      }
    }
    // Plain numbers at one place get a class each, by operand position.
    uint8_t which = o.id == kNoNode ? static_cast<uint8_t>(o.pos) : 0xFF;
    Key k{loc.file, f.fn, f.block, loc.line, loc.col, which, Shape::kConstant, 0};
    bool fresh;
    ClassEntry& e = ClassFor(
        k,
        [](Impl& r, const Key& key, const void*) {
          ClassSpec s;
          s.kind = NodeKind::kConstant;
          s.block = key.block;
          s.pos = r.NewPos(key.fn);
          s.line = key.line;
          s.col = static_cast<uint16_t>(std::min<uint32_t>(key.col, 0xFFFF));
          return s;
        },
        nullptr, &fresh);
    NodeId id = o.big != nullptr ? w->Append(e.cls, *o.big, {})
                                 : w->AppendScalar(e.cls, o.vk, o.bits, nullptr, 0);
    if (o.id != kNoNode) import_pool.push_back({o.id, id, o.serial, e.pos});
    *pos = e.pos;
    return id;
  }

  static bool Local(const Frame& f, NodeId id, uint32_t serial) {
    return id != kNoNode && serial == f.serial && id >= f.marker;
  }
  static bool Local(const Frame& f, const Operand& o) { return Local(f, o.id, o.serial); }

  // Whether class `e`, whose operands `mask` are literals, fits this run's
  // `ops`: a new class remembers their values; a known one fits while they
  // stay the same (a statement whose plain numbers change is `varying`).
  static bool LiteralsFit(ClassEntry& e, bool fresh, const Operand* ops, uint32_t n, uint8_t mask) {
    if (fresh) {
      for (uint32_t i = 0; i < n && i < 4; ++i) e.lit[i] = ops[i].bits, e.lit_vk[i] = ops[i].vk;
      return true;
    }
    if (mask == 0) return true;
    if (e.varying) return false;
    for (uint32_t i = 0; i < n && i < 4; ++i) {
      if ((mask & (1u << i)) && (e.lit[i] != ops[i].bits || e.lit_vk[i] != ops[i].vk)) {
        return false;
      }
    }
    return true;
  }

  // Every operand as a reference, plain numbers as Constant nodes of the
  // innermost call (a class per operand position); returns the count.
  uint32_t AllRefs(Frame& f, const Operand* ops, uint32_t n, const Loc& loc, NodeId* refs) {
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t p;
      Operand o = ops[i];
      o.pos = i;
      refs[i] = Local(f, o) ? o.id : ImportAt(f, o, loc, &p);
    }
    return n;
  }

  // Resolves operands into references (and literal bits); foreign values
  // are imported. Returns the literal mask.
  uint8_t Resolve(Frame& f, const Operand* ops, uint32_t n, const Loc& loc, NodeId* refs,
                  uint32_t* n_refs) {
    uint8_t mask = 0;
    *n_refs = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const Operand& o = ops[i];
      if (Local(f, o)) {
        refs[(*n_refs)++] = o.id;
      } else if (o.id != kNoNode || o.big != nullptr) {
        uint32_t pos;
        refs[(*n_refs)++] = ImportAt(f, o, loc, &pos);
      } else {
        mask |= static_cast<uint8_t>(1u << i);
      }
    }
    return mask;
  }

  void Notify(NodeId id, NodeKind kind, std::string_view op, const Frame& f, const Loc& loc) {
    NodeInfo info;
    info.id = id;
    info.kind = kind;
    info.op = op;
    info.function = fns[f.fn].name;
    info.line = loc.line;
    info.col = loc.col;
    ctx->OnNode(info, *w);
  }
};

// -------------------------------------------------------------- Recorder

Recorder::Recorder() : impl_(new Impl) {}

Recorder::Recorder(const std::string& path, RecorderOptions options) : Recorder() {
  auto out = Output::Open(path);
  if (out.ok()) {
    impl_->out = std::move(out).value();
  } else {
    impl_->open_status = out.status();
    impl_->out = Output::Memory();  // records into nothing useful; Finish reports
  }
  impl_->opts = std::move(options);
}

std::unique_ptr<Recorder> Recorder::InMemory(RecorderOptions options) {
  std::unique_ptr<Recorder> r(new Recorder());
  r->impl_->out = Output::Memory();
  r->impl_->opts = std::move(options);
  return r;
}

Recorder::~Recorder() {
  if (detail::t_current == this) {
    detail::t_current = nullptr;
    detail::t_fast.active = false;
  }
}

TraceWriter& Recorder::writer() {
  Impl& r = *impl_;
  if (!r.w) {
    WriterOptions wo = r.opts.writer;
    wo.producer_name = r.opts.producer;
    if (wo.producer_version.empty()) wo.producer_version = IRT_VERSION;
    r.w = std::make_unique<TraceWriter>(r.out.get(), wo);
    r.ctx = r.opts.context != nullptr ? r.opts.context : &r.default_context;
    r.wants_nodes = r.ctx->WantsNodes();
    r.generation = ++g_generation;
  }
  return *r.w;
}

void Recorder::Activate() {
  writer();
  impl_->active = true;
  detail::t_current = this;
  impl_->Sync();
}

void Recorder::Deactivate() {
  impl_->active = false;
  if (detail::t_current == this) {
    detail::t_current = nullptr;
    detail::t_fast.active = false;
  }
}

void Recorder::Failed(std::string_view what) { impl_->failure = std::string(what); }

Status Recorder::Finish() {
  Impl& r = *impl_;
  if (!r.open_status.ok()) return r.open_status;
  if (r.finished) return r.w->status();
  r.finished = true;
  TraceWriter& w = writer();
  if (!r.frames.empty()) {
    return Internal("record: Finish() while " + std::to_string(r.frames.size()) +
                    " recorded calls are open");
  }
  if (w.next_id() == 0) return Internal("record: nothing was recorded (no IRT_FUNCTION ran)");
  bool failed = !r.failure.empty();
  w.AddTraceMeta("status", Value::String(failed ? "failed" : "ok"));
  if (failed) w.AddTraceMeta("error", Value::String(r.failure));
  if (!r.fns.empty()) w.AddTraceMeta("function", Value::String(r.fns[0].name));
  for (const auto& [k, v] : r.opts.trace_meta) w.AddTraceMeta(k, v);
  IRT_RETURN_IF_ERROR(w.Finish());
  return r.out->Commit();
}

const std::string& Recorder::bytes() const { return impl_->out->memory(); }

Status Recorder::status() const {
  if (!impl_->open_status.ok()) return impl_->open_status;
  return impl_->w ? impl_->w->status() : Status::Ok();
}

NodeId Recorder::nodes() const { return impl_->w ? impl_->w->next_id() : 0; }

namespace detail {

// ---------------------------------------------------------- operations

void Record(Op op, const Loc& loc, const Operand* ops, uint32_t n, VKind vk, uint64_t bits,
            uint32_t* serial, uint32_t* pos, NodeId* id, const Value* big) {
  Recorder::Impl& r = t_current->impl();
  if (r.frames.empty()) return;
  Frame& f = r.frames.back();
  if (f.muted) return;
  NodeId refs[4];
  uint32_t n_refs;
  // The fast path: a statement seen before in this function and block,
  // every operand a node of this call.
  // (or a number that is the class's literal).
  Recorder::Impl::Slot& slot = r.SlotFor(loc, f.block, op);
  bool local = n <= 2;
  uint8_t lits = 0;
  uint32_t nr = 0;
  for (uint32_t i = 0; local && i < n; ++i) {
    const Operand& o = ops[i];
    if (Recorder::Impl::Local(f, o)) {
      refs[nr++] = o.id;
    } else if (o.id == kNoNode && o.big == nullptr && slot.lit[i] == o.bits &&
               slot.lit_vk[i] == o.vk) {
      lits |= static_cast<uint8_t>(1u << i);
    } else {
      local = false;
    }
  }
  if (local && slot.file == loc.file && slot.line == loc.line && slot.col == loc.col &&
      slot.fn == f.fn && slot.block == f.block && slot.op == static_cast<uint8_t>(op) &&
      slot.n == n && slot.mask == lits && !r.wants_nodes && big == nullptr) {
    *id = r.w->AppendScalar(slot.cls, vk, bits, refs, nr);
    *serial = f.serial;
    *pos = slot.pos;
    if (r.ctx->tag_random && (op == Op::kRand || op == Op::kRandn)) {
      r.w->AddMeta("random", Value::String(op == Op::kRand ? "uniform" : "normal"));
    }
    return;
  }
  uint8_t mask = r.Resolve(f, ops, n, loc, refs, &n_refs);
  Key k{loc.file, f.fn, f.block, loc.line, loc.col, static_cast<uint8_t>(op), Shape::kOp, mask};
  struct Arg {
    const Operand* ops;
    uint32_t n;
  } arg{ops, n};
  // The statement's class: its literal operands (lit_mask) in the class,
  // the others references.
  auto make = [](Recorder::Impl& rr, const Key& key, const void* a) {
    const Arg& x = *static_cast<const Arg*>(a);
    return StatementSpec(NodeKind::kPrimitive, std::string(OpName(static_cast<Op>(key.op))),
                         rr.NewPos(key.fn), key, x.ops, x.n);
  };
  bool fresh;
  ClassEntry* e = &r.ClassFor(k, make, &arg, &fresh);
  if (!Recorder::Impl::LiteralsFit(*e, fresh, ops, n, mask)) {
    // The plain operands of this statement change between runs of it:
    // record them as Constant nodes and use the all-reference class.
    e->varying = true;
    n_refs = r.AllRefs(f, ops, n, loc, refs);
    Key k2 = k;
    k2.lit_mask = 0;
    e = &r.ClassFor(k2, make, &arg, &fresh);
  }
  if (n <= 2 && !e->varying && big == nullptr) {
    bool cacheable = true;
    for (uint32_t i = 0; i < n; ++i) {
      cacheable = cacheable && (Recorder::Impl::Local(f, ops[i]) || (mask & (1u << i)));
    }
    if (cacheable) {
      slot = {loc.file, loc.line, loc.col, f.fn,   f.block, static_cast<uint8_t>(op),
              mask,     n,        e->cls,  e->pos, {0, 0},  {VKind::kNone, VKind::kNone}};
      for (uint32_t i = 0; i < n; ++i) {
        if (mask & (1u << i)) slot.lit[i] = ops[i].bits, slot.lit_vk[i] = ops[i].vk;
      }
    }
  }
  NodeId node = big != nullptr ? r.w->Append(e->cls, *big, std::span<const NodeId>(refs, n_refs))
                               : r.w->AppendScalar(e->cls, vk, bits, refs, n_refs);
  *serial = f.serial;
  *pos = e->pos;
  *id = node;
  if (r.ctx->tag_random && (op == Op::kRand || op == Op::kRandn)) {
    r.w->AddMeta("random", Value::String(op == Op::kRand ? "uniform" : "normal"));
  }
  if (r.wants_nodes) r.Notify(node, NodeKind::kPrimitive, OpName(op), f, loc);
}

// ---------------------------------------------------------------- calls

namespace {

// Calls `f` with the parameter an ArgRef points to, as its own type.
template <class F>
decltype(auto) WithParameter(const ArgRef& a, F&& f) {
  void* p = const_cast<void*>(a.obj);  // written only when a.rebind
  switch (a.kind) {
    case VKind::kBool:
      return f(*static_cast<Active<bool>*>(p));
    case VKind::kI64:
      return f(*static_cast<Active<int64_t>*>(p));
    case VKind::kF32:
      return f(*static_cast<Active<float>*>(p));
    case VKind::kTensor:
      return f(*static_cast<Tensor*>(p));
    default:
      return f(*static_cast<Active<double>*>(p));
  }
}

// What an argument of IRT_FUNCTION holds.
Operand OperandOfArg(const ArgRef& a) {
  return WithParameter(a, [](const auto& x) { return OperandOf(x); });
}

// The Argument node of the callee for argument `i` (from 0), of class `cls`;
// `op` is what the argument held when the call began.
void AppendArgument(Recorder::Impl& r, Frame& f, const ArgRef& a, const Operand& op, ClassId cls,
                    NodeId ref, bool has_ref, uint32_t i) {
  NodeId id = r.AppendValue(cls, op, &ref, has_ref ? 1 : 0);
  if (a.rebind) {
    // A non-const parameter now names its Argument node.
    WithParameter(a, [&](auto& x) {
      x.id = id;
      x.serial = f.serial;
      x.pos = i + 2;
    });
  }
  if (op.id != kNoNode) r.import_pool.push_back({op.id, id, op.serial, i + 2});
}

}  // namespace

namespace {

// The cold parts of opening a call, out of line so that the common path
// (a function called again from where it was called before) keeps a small
// stack frame: a deep recursion touches one such frame per level.

// The function's state in this recorder, made at its first call.
[[gnu::noinline]] void FirstCall(Recorder::Impl& r, Function& fn, uint32_t n_args) {
  auto [it, inserted] = r.fn_index.emplace(&fn, static_cast<uint32_t>(r.fns.size()));
  if (inserted) {
    FnState s;
    s.name = fn.name;
    s.n_args = n_args;
    s.next_pos = s.n_args + 1;  // %1 the function, %2.. its arguments
    r.fns.push_back(std::move(s));
    r.RegisterFlow(it->second);
  }
  fn.generation = r.generation;
  fn.index = it->second;
}

// The root call: a marker whose operands are the arguments' values.
[[gnu::noinline]] NodeId OpenRoot(Recorder::Impl& r, const Function& fn, const Operand* ops,
                                  uint32_t n) {
  ClassSpec s;
  s.kind = NodeKind::kCall;
  s.op = std::string(fn.name);
  for (uint32_t i = 0; i < n; ++i) {
    s.operands.push_back(OperandSpec::Literal(Recorder::Impl::LiteralOf(ops[i])));
  }
  TraceWriter& w = *r.w;
  return w.AppendScalar(w.DefineClass(std::move(s)), VKind::kNone, 0, nullptr, 0);
}

// What a call statement records in its caller.
struct CallClasses {
  ClassId cls = 0, error_cls = 0;
  uint32_t pos = 0;
};

// The classes of a call statement not found in the function's memo: the
// call's (which also carries its literal arguments, which may differ
// between calls: those calls take the all-reference class) and the
// caller's Error for it, should the call fail. Updates the caller's
// references when literals turn out to vary.
[[gnu::noinline]] CallClasses LookUpCall(Recorder::Impl& r, Function& fn, Frame& caller,
                                         Shape shape, const Operand* ops, uint32_t n, uint8_t mask,
                                         NodeId* caller_refs, uint32_t* n_refs, NodeId* arg_refs) {
  const Loc loc = fn.loc;
  struct Arg {
    const Operand* ops;
    uint32_t n;
    std::string_view name;
    uint32_t pos;  // the Error's: the call statement's SSA id
  } arg{ops, n, fn.name, 0};
  auto make = [](Recorder::Impl& rr, const Key& key, const void* a) {
    const Arg& x = *static_cast<const Arg*>(a);
    NodeKind kind = key.shape == Shape::kCall    ? NodeKind::kCall
                    : key.shape == Shape::kError ? NodeKind::kError
                                                 : NodeKind::kPrimitive;
    return StatementSpec(kind, std::string(x.name),
                         key.shape == Shape::kError ? x.pos : rr.NewPos(key.fn), key, x.ops, x.n);
  };
  Key k{&fn, caller.fn, caller.block, loc.line, loc.col, 0, shape, mask};
  bool fresh;
  ClassEntry* e = &r.ClassFor(k, make, &arg, &fresh);
  if (!Recorder::Impl::LiteralsFit(*e, fresh, ops, n, mask)) {
    e->varying = true;
    *n_refs = r.AllRefs(caller, ops, n, loc, caller_refs);
    k.lit_mask = 0;
    mask = 0;
    e = &r.ClassFor(k, make, &arg, &fresh);
  }
  for (uint32_t i = 0, j = 0; i < n; ++i) {
    arg_refs[i] = (mask & (1u << i)) ? kNoNode : caller_refs[j++];
  }
  CallClasses c;
  c.cls = e->cls;
  c.pos = e->pos;
  arg.pos = e->pos;
  Key ke{&fn, caller.fn, caller.block, loc.line, loc.col, 0, Shape::kError, mask};
  bool fresh_err;
  c.error_cls = r.ClassFor(ke, make, &arg, &fresh_err).cls;
  if (mask == 0)
    r.fns[fn.index].call_memo = {caller.fn, caller.block, shape, c.cls, c.error_cls, c.pos};
  return c;
}

// The class of the callee's %1 (its Function value), or of its argument
// `i` (from 0) with or without a reference to the caller's node.
[[gnu::noinline]] ClassId ArgumentClass(Recorder::Impl& r, const Function& fn, uint32_t fi,
                                        bool self, uint32_t i, bool has_ref) {
  Key k = self ? Key{&fn, fi, 1, 0, 1, 0, Shape::kArgument, 0}
               : Key{&fn, fi, 1, has_ref ? 1u : 0u, i + 2, 0, Shape::kArgument, 0};
  struct P {
    uint32_t pos;
    bool ref;
  } p{self ? 1 : i + 2, !self && has_ref};
  bool fresh;
  ClassEntry& e = r.ClassFor(
      k,
      [](Recorder::Impl&, const Key&, const void* a) {
        const P& x = *static_cast<const P*>(a);
        ClassSpec s;
        s.kind = NodeKind::kArgument;
        s.block = 1;
        s.pos = x.pos;
        if (x.ref) s.operands = {OperandSpec::Ref()};
        return s;
      },
      &p, &fresh);
  if (self) {
    FnState& fs = r.fns[fi];
    fs.self_cls = e.cls;
    fs.self = Value::Function(std::string(fn.name));
  }
  return e.cls;
}

}  // namespace

CallScope::CallScope(Function& fn, std::initializer_list<ArgRef> args) {
  Recorder* rec = t_current;
  if (rec == nullptr) return;
  Recorder::Impl& r = rec->impl();
  exceptions_ = std::uncaught_exceptions();
  // The function's state in this recorder (cached in the static Function).
  if (fn.generation != r.generation) FirstCall(r, fn, static_cast<uint32_t>(args.size()));
  const uint32_t fi = fn.index;
  recorder_ = rec;
  frame_ = static_cast<uint32_t>(r.frames.size());
  const uint32_t serial = NextSerial(), level = frame_ + 1;
  if (!r.frames.empty() && r.frames.back().muted) {
    r.PushFrame(fi, serial, level, nullptr, 0).muted = true;
    r.Sync();
    return;
  }
  // The arguments, and the caller's node for each (kNoNode: a literal).
  const uint32_t n = static_cast<uint32_t>(args.size());
  constexpr uint32_t kSmall = 4;
  Operand ops_small[kSmall];
  NodeId refs_small[kSmall], arg_refs_small[kSmall];
  std::unique_ptr<Operand[]> ops_big;
  std::unique_ptr<NodeId[]> refs_big;
  Operand* ops = ops_small;
  NodeId* caller_refs = refs_small;
  NodeId* arg_refs = arg_refs_small;
  if (n > kSmall) {
    ops_big.reset(new Operand[n]);
    refs_big.reset(new NodeId[2 * size_t{n}]);
    ops = ops_big.get();
    caller_refs = refs_big.get();
    arg_refs = refs_big.get() + n;
  }
  {
    uint32_t i = 0;
    for (const ArgRef& a : args) ops[i++] = OperandOfArg(a);
  }
  uint32_t n_refs = 0;
  TraceWriter& w = *r.w;
  if (r.frames.empty()) {
    NodeId marker = OpenRoot(r, fn, ops, n);
    for (uint32_t i = 0; i < n; ++i) arg_refs[i] = kNoNode;
    r.PushFrame(fi, serial, level, nullptr, 0).marker = marker;
  } else {
    Frame& caller = r.frames.back();
    bool recur = r.ctx->CanRecur(CallInfo{fn.name, level});
    uint8_t mask = 0;
    if (n <= kSmall) {
      mask = r.Resolve(caller, ops, n, fn.loc, caller_refs, &n_refs);
    } else {
      // Many arguments: every one a reference (plain ones as Constants).
      n_refs = r.AllRefs(caller, ops, n, fn.loc, caller_refs);
    }
    Shape shape = recur ? Shape::kCall : Shape::kPrimCall;
    const FnState::CallMemo& memo = r.fns[fi].call_memo;
    CallClasses c;
    if (mask == 0 && memo.caller_fn == caller.fn && memo.caller_block == caller.block &&
        memo.shape == shape) {
      // Called again from where it was last: the classes LookUpCall found
      // then (without literals, nothing else can differ).
      c.cls = memo.cls;
      c.pos = memo.pos;
      c.error_cls = memo.err_cls;
      for (uint32_t i = 0; i < n; ++i) arg_refs[i] = caller_refs[i];
    } else {
      c = LookUpCall(r, fn, caller, shape, ops, n, mask, caller_refs, &n_refs, arg_refs);
    }
    NodeId marker = 0;
    if (recur) {
      marker = w.AppendScalar(c.cls, VKind::kNone, 0, caller_refs, n_refs);
      if (r.wants_nodes) r.Notify(marker, NodeKind::kCall, fn.name, caller, fn.loc);
    }
    Frame& nf = r.PushFrame(fi, serial, level, caller_refs, n_refs);  // caller is stale now
    nf.call_pos = c.pos;
    nf.call_error_cls = c.error_cls;
    nf.marker = marker;
    if (!recur) {
      nf.muted = true;
      nf.prim_top = true;
      nf.prim_cls = c.cls;
      r.Sync();
      return;
    }
  }
  // The callee's arguments: %1 the function, %2... the values, each with a
  // reference to the caller's node when there is one.
  r.Sync();
  Frame& f = r.frames.back();
  FnState& fs = r.fns[fi];
  if (fs.self_cls == FnState::kNoCls) ArgumentClass(r, fn, fi, true, 0, false);
  w.Append(fs.self_cls, fs.self, {});
  uint32_t i = 0;
  for (const ArgRef& a : args) {
    NodeId ref = arg_refs[i];
    bool has_ref = ref != kNoNode;
    std::vector<ClassId>& known = fs.arg_cls[has_ref ? 1 : 0];
    if (known.size() <= i) known.resize(i + 1, FnState::kNoCls);
    if (known[i] == FnState::kNoCls) known[i] = ArgumentClass(r, fn, fi, false, i, has_ref);
    AppendArgument(r, f, a, ops[i], known[i], ref, has_ref, i);
    ++i;
  }
}

namespace {

// Marks the innermost frame closed by its Return `ret`, and tells the caller
// where the call's value is.
void FinishReturn(Recorder::Impl& r, Frame& f, NodeId ret, uint32_t* serial, uint32_t* pos,
                  NodeId* id) {
  f.closed = true;
  r.Sync();
  if (r.frames.size() >= 2) {
    *serial = r.frames[r.frames.size() - 2].serial;
    *pos = f.call_pos;
    *id = ret;
  }
}

// Closes the innermost frame with a Return of `v` (or of nothing).
void CloseWithReturn(Recorder::Impl& r, Frame& f, const Operand* v, uint32_t* serial, uint32_t* pos,
                     NodeId* id) {
  Operand o = v != nullptr ? *v : Operand{0, 0, kNoNode, VKind::kNothing, 0, nullptr};
  NodeId ref = kNoNode;
  uint32_t n_refs = 0;
  Loc loc{};
  uint8_t mask = r.Resolve(f, &o, 1, loc, &ref, &n_refs);
  FnState& fs = r.fns[f.fn];
  if (mask == 0 && f.block < fs.return_cls.size() && fs.return_cls[f.block] != FnState::kNoCls) {
    // A reference returned from this block before: its class and fact are known.
    NodeId ret = r.AppendValue(fs.return_cls[f.block], o, &ref, n_refs);
    FinishReturn(r, f, ret, serial, pos, id);
    return;
  }
  Key k{nullptr, f.fn, f.block, 0, 0, 0, Shape::kReturn, mask};
  bool fresh;
  ClassEntry* e = &r.ClassFor(
      k,
      [](Recorder::Impl&, const Key& key, const void* a) {
        const Operand& x = *static_cast<const Operand*>(a);
        ClassSpec s;
        s.kind = NodeKind::kReturn;
        s.block = key.block;
        s.pos = 1;
        s.operands = {key.lit_mask ? OperandSpec::Literal(Value::FromBits(x.vk, x.bits))
                                   : OperandSpec::Ref()};
        return s;
      },
      &o, &fresh);
  if (fresh && mask) e->lit[0] = o.bits, e->lit_vk[0] = o.vk;
  if (mask && (e->lit[0] != o.bits || e->lit_vk[0] != o.vk)) {
    uint32_t p;
    Operand c = o;
    ref = r.ImportAt(f, c, loc, &p);
    n_refs = 1;
    k.lit_mask = 0;
    e = &r.ClassFor(
        k,
        [](Recorder::Impl&, const Key& key, const void*) {
          ClassSpec s;
          s.kind = NodeKind::kReturn;
          s.block = key.block;
          s.pos = 1;
          s.operands = {OperandSpec::Ref()};
          return s;
        },
        nullptr, &fresh);
  }
  std::vector<uint8_t>& known = fs.return_fact;
  if (known.size() <= f.block) known.resize(f.block + 1, 0);
  if (!known[f.block]) {
    BranchFact b;
    b.block = f.block;
    b.pos = 1;
    r.AddFact(f.fn, b);
    known[f.block] = 1;
  }
  if (mask == 0) {
    if (fs.return_cls.size() <= f.block) fs.return_cls.resize(f.block + 1, FnState::kNoCls);
    fs.return_cls[f.block] = e->cls;
  }
  NodeId ret = r.AppendValue(e->cls, o, &ref, n_refs);
  FinishReturn(r, f, ret, serial, pos, id);
}

}  // namespace

void CallScope::DoReturn(const Operand* v, uint32_t* serial, uint32_t* pos, NodeId* id) {
  Recorder::Impl& r = recorder_->impl();
  if (r.frames.size() != frame_ + 1 || r.frames.back().closed) {
    // IRT_RETURN of a call that is not the innermost open one.
    if (r.w->status().ok()) {
      // Surface the misuse through the writer's sticky status.
      r.w->Append(~0u, Value(), {});
    }
    return;
  }
  Frame& f = r.frames.back();
  if (f.muted) {
    f.closed = true;
    r.Sync();
    if (!f.prim_top) return;
    Frame& caller = r.frames[frame_ - 1];
    NodeId node = r.AppendValue(f.prim_cls, *v, r.CallRefs(f), f.n_refs);
    *serial = caller.serial;
    *pos = f.call_pos;
    *id = node;
    if (r.wants_nodes) r.Notify(node, NodeKind::kPrimitive, r.fns[f.fn].name, caller, Loc{});
    return;
  }
  CloseWithReturn(r, f, v, serial, pos, id);
}

CallScope::~CallScope() {
  if (recorder_ == nullptr) return;
  Recorder::Impl& r = recorder_->impl();
  if (r.frames.size() != frame_ + 1) return;  // misuse reported elsewhere
  Frame& f = r.frames.back();
  if (!f.closed) {
    if (std::uncaught_exceptions() <= exceptions_) {
      if (!f.muted) {
        uint32_t s, p;
        NodeId id;
        CloseWithReturn(r, f, nullptr, &s, &p, &id);
      }
    } else if (f.muted) {
      if (f.prim_top) {
        // The primitive call is the failing statement of its caller.
        Frame& caller = r.frames[frame_ - 1];
        caller.failed = true;
        caller.failed_innermost = true;
        caller.failed_cls = f.call_error_cls;
        r.failed_refs.assign(r.CallRefs(f), r.CallRefs(f) + f.n_refs);
      }
    } else {
      TraceWriter& w = *r.w;
      if (f.failed) {
        w.AppendScalar(f.failed_cls, VKind::kNone, 0, r.failed_refs.data(),
                       static_cast<uint32_t>(r.failed_refs.size()));
        if (f.failed_innermost) w.AddMeta("error", Value::String("an exception left this call"));
      } else {
        // The exception was thrown in this call's own code.
        Key k{nullptr, f.fn, f.block, 0, 0, 0, Shape::kError, 0};
        bool fresh;
        ClassEntry& e = r.ClassFor(
            k,
            [](Recorder::Impl& rr, const Key& key, const void*) {
              ClassSpec s;
              s.kind = NodeKind::kError;
              s.op = "throw";
              s.block = key.block;
              s.pos = rr.NewPos(key.fn);
              return s;
            },
            nullptr, &fresh);
        w.AppendScalar(e.cls, VKind::kNone, 0, nullptr, 0);
        w.AddMeta("error", Value::String("an exception left this call"));
      }
      if (frame_ > 0) {
        Frame& caller = r.frames[frame_ - 1];
        caller.failed = true;
        caller.failed_innermost = false;
        caller.failed_cls = f.call_error_cls;
        r.failed_refs.assign(r.CallRefs(f), r.CallRefs(f) + f.n_refs);
      }
    }
  }
  r.PopFrame();
  r.Sync();
}

// ------------------------------------------------------------- branches

namespace {

ClassEntry& JumpClass(Recorder::Impl& r, const Frame& f, uint32_t pos, uint32_t target, int cond,
                      bool taken_when, uint32_t n_args, uint8_t lit_mask, const Operand* lits,
                      const Loc& loc) {
  // line: target block; col: branch position; op: block-argument count.
  Key k{nullptr,
        f.fn,
        f.block,
        target,
        pos,
        static_cast<uint8_t>(n_args),
        Shape::kJump,
        static_cast<uint8_t>(lit_mask |
                             (cond < 0    ? 0
                              : cond == 1 ? 0x40
                                          : 0x80) |
                             (taken_when ? 0x20 : 0))};
  struct A {
    int cond;
    bool taken_when;
    uint32_t n;
    const Operand* lits;
    Loc loc;
  } a{cond, taken_when, n_args, lits, loc};
  bool fresh;
  ClassEntry& e = r.ClassFor(
      k,
      [](Recorder::Impl&, const Key& key, const void* p) {
        const A& x = *static_cast<const A*>(p);
        ClassSpec s;
        s.kind = NodeKind::kJump;
        s.block = key.block;
        s.pos = key.col;
        s.aux = key.line;
        s.line = x.loc.line;
        s.col = static_cast<uint16_t>(std::min<uint32_t>(x.loc.col, 0xFFFF));
        for (uint32_t i = 0; i < x.n; ++i) {
          s.operands.push_back(key.lit_mask & (1u << i) ? OperandSpec::Literal(Value::FromBits(
                                                              x.lits[i].vk, x.lits[i].bits))
                                                        : OperandSpec::Ref());
        }
        if (x.cond >= 0) {
          s.has_condition = true;
          s.condition_taken_when = x.taken_when;
          // cond == 1: the condition is a reference; 0: a literal.
          s.operands.push_back(x.cond == 1 ? OperandSpec::Ref()
                                           : OperandSpec::Literal(Value::FromBits(
                                                 x.lits[x.n].vk, x.lits[x.n].bits)));
        }
        return s;
      },
      &a, &fresh);
  if (fresh) {
    for (uint32_t i = 0; i < n_args && i < 4; ++i)
      e.lit[i] = lits[i].bits, e.lit_vk[i] = lits[i].vk;
  }
  return e;
}

// An unconditional jump from the current block to `target`, with block
// arguments; returns its node.
NodeId Goto(Recorder::Impl& r, Frame& f, uint32_t target, const Operand* args, uint32_t n,
            const Loc& loc) {
  NodeId small[8];
  std::vector<NodeId> big;
  NodeId* refs = small;
  if (n > 8) {
    big.resize(n);
    refs = big.data();
  }
  uint32_t n_refs = 0;
  uint8_t mask = n <= 4 ? r.Resolve(f, args, n, loc, refs, &n_refs) : 0;
  if (n > 4) n_refs = r.AllRefs(f, args, n, loc, refs);
  ClassEntry* e = &JumpClass(r, f, 1, target, -1, false, n, mask, args, loc);
  if (!Recorder::Impl::LiteralsFit(*e, false, args, n, mask)) {
    // Literal block arguments that change between runs of the jump: make
    // them Constants.
    e->varying = true;
    n_refs = r.AllRefs(f, args, n, loc, refs);
    e = &JumpClass(r, f, 1, target, -1, false, n, 0, args, loc);
  }
  ClassId c = e->cls;
  r.last_jump_cls = c;
  BranchFact b;
  b.block = f.block;
  b.pos = 1;
  b.target = target;
  r.AddFact(f.fn, b);
  return r.w->AppendScalar(c, VKind::kNone, 0, refs, n_refs);
}

// The two branches that end a block testing `c`: &1 to `if_false` unless
// c, &2 to `if_true`. Records the one taken and returns c's value.
bool Test(Recorder::Impl& r, Frame& f, SiteBlocks& site, const Bool& c, uint32_t if_true,
          uint32_t if_false, const Loc& loc) {
  Operand o = OperandOf(c);
  NodeId ref = kNoNode;
  uint32_t cond_pos = 0;
  bool is_ref = c.id != kNoNode;
  if (is_ref) {
    if (Recorder::Impl::Local(f, o)) {
      ref = o.id;
      cond_pos = o.pos;
    } else {
      ref = r.ImportAt(f, o, loc, &cond_pos);
    }
  }
  // The site tests in one block of its function: what it learned there
  // holds for every later run.
  bool known = site.test_known && site.test_block == f.block && site.test_cond_pos == cond_pos &&
               site.test_cond_ref == is_ref;
  if (!known) {
    BranchFact b1;
    b1.block = f.block;
    b1.pos = 1;
    b1.target = if_false;
    b1.conditional = true;
    b1.condition = cond_pos;
    b1.taken_when = false;
    r.AddFact(f.fn, b1);
    BranchFact b2;
    b2.block = f.block;
    b2.pos = 2;
    b2.target = if_true;
    r.AddFact(f.fn, b2);
    site.test_known = true;
    site.test_block = f.block;
    site.test_cond_pos = cond_pos;
    site.test_cond_ref = is_ref;
    site.test_false_known = site.test_true_known = false;
  }
  if (!c.v) {
    if (!site.test_false_known) {
      site.test_false_cls = JumpClass(r, f, 1, if_false, is_ref ? 1 : 0, false, 0, 0, &o, loc).cls;
      site.test_false_known = is_ref;  // a literal condition's class holds its value
    }
    r.w->AppendScalar(site.test_false_cls, VKind::kNone, 0, &ref, is_ref ? 1 : 0);
    f.block = if_false;
    r.SyncBlock(f);
  } else {
    if (!site.test_true_known) {
      site.test_true_cls = JumpClass(r, f, 2, if_true, -1, false, 0, 0, nullptr, loc).cls;
      site.test_true_known = true;
    }
    r.w->AppendScalar(site.test_true_cls, VKind::kNone, 0, nullptr, 0);
    f.block = if_true;
    r.SyncBlock(f);
  }
  return c.v;
}

}  // namespace

IfScope::IfScope(IfSite& site, const Bool& c, Loc loc) : site_(&site) {
  taken_ = c.v;
  Recorder* rec = t_current;
  if (rec == nullptr) return;
  Recorder::Impl& r = rec->impl();
  if (r.frames.empty() || r.frames.back().muted) return;
  recorder_ = rec;
  exceptions_ = std::uncaught_exceptions();
  frame_ = static_cast<uint32_t>(r.frames.size() - 1);
  Frame& f = r.frames.back();
  bool fresh;
  SiteBlocks& b = r.BlocksOf(site, f.fn, &fresh);
  join_ = b.c;
  serial_ = f.serial;
  Test(r, f, b, c, b.a, b.b, loc);
}

IfScope::~IfScope() {
  if (recorder_ == nullptr) return;
  Recorder::Impl& r = recorder_->impl();
  if (std::uncaught_exceptions() > exceptions_) return;
  if (r.frames.size() != frame_ + 1) return;
  Frame& f = r.frames.back();
  if (f.closed || f.serial != serial_) return;
  // The jump to the join block from this block: known after its first run.
  bool fresh;
  SiteBlocks& b = r.BlocksOf(*site_, f.fn, &fresh);
  int slot = b.join_from[0] == f.block ? 0 : b.join_from[1] == f.block ? 1 : -1;
  if (slot >= 0) {
    r.w->AppendScalar(b.join_cls[slot], VKind::kNone, 0, nullptr, 0);
  } else {
    uint32_t from = f.block;
    Goto(r, f, join_, nullptr, 0, Loc{});
    int s = b.join_from[0] == 0 ? 0 : 1;
    b.join_from[s] = from;
    b.join_cls[s] = r.last_jump_cls;
  }
  f.block = join_;
  r.SyncBlock(f);
}

bool LoopHead(IfSite& site, Loc loc, std::initializer_list<LoopVar> vars) {
  Recorder* rec = t_current;
  if (rec == nullptr) return true;
  Recorder::Impl& r = rec->impl();
  if (r.frames.empty() || r.frames.back().muted) return true;
  Frame& f = r.frames.back();
  bool fresh;
  SiteBlocks& b = r.BlocksOf(site, f.fn, &fresh);
  if (fresh) {
    for (size_t i = 0; i < vars.size(); ++i) b.arg_pos.push_back(r.NewPos(f.fn));
  }
  if (r.loop_pool.size() == f.loops_at || r.loop_pool.back() != &site) {
    r.loop_pool.push_back(&site);
  }
  const uint32_t nv = static_cast<uint32_t>(vars.size());
  const int from = b.goto_from[0] == f.block ? 0 : b.goto_from[1] == f.block ? 1 : -1;
  if (from >= 0 && nv <= 8 && b.arg_cls.size() == nv) {
    // A run like the last from this block: when every variable is a node
    // of this call, the jump's and the arguments' classes are known.
    NodeId refs[8];
    bool local = true;
    uint32_t k = 0;
    for (const LoopVar& v : vars) {
      refs[k++] = *v.id;
      local = local && Recorder::Impl::Local(f, *v.id, *v.serial);
    }
    if (local) {
      NodeId jump = r.w->AppendScalar(b.goto_cls[from], VKind::kNone, 0, refs, nv);
      k = 0;
      for (const LoopVar& v : vars) {
        *v.id = r.w->AppendScalar(b.arg_cls[k], v.vk, v.bits, &jump, 1);
        *v.serial = f.serial;
        *v.pos = b.arg_pos[k];
        ++k;
      }
      f.block = b.a;
      r.SyncBlock(f);
      return true;
    }
  }
  Operand small[8];  // trivially constructed
  std::vector<Operand> big;
  Operand* ops = small;
  if (vars.size() > 8) {
    big.resize(vars.size());
    ops = big.data();
  }
  uint32_t n = 0;
  bool all_local = true;
  for (const LoopVar& v : vars) {
    ops[n] = Operand{*v.serial, *v.pos, *v.id, v.vk, v.bits, nullptr};
    all_local = all_local && Recorder::Impl::Local(f, ops[n]);
    ++n;
  }
  const uint32_t block = f.block;
  NodeId jump = Goto(r, f, b.a, ops, n, loc);
  if (all_local && from < 0) {
    int s = b.goto_from[0] == 0 ? 0 : 1;
    b.goto_from[s] = block;
    b.goto_cls[s] = r.last_jump_cls;
  }
  f.block = b.a;
  r.SyncBlock(f);
  if (b.arg_cls.size() == n) {
    uint32_t k = 0;
    for (const LoopVar& v : vars) {
      NodeId id = r.w->AppendScalar(b.arg_cls[k], v.vk, v.bits, &jump, 1);
      *v.id = id;
      *v.serial = f.serial;
      *v.pos = b.arg_pos[k];
      ++k;
    }
    return true;
  }
  b.arg_cls.clear();
  uint32_t k = 0;
  for (const LoopVar& v : vars) {
    uint32_t pos = k < b.arg_pos.size() ? b.arg_pos[k] : 0;
    Key key{&site, f.fn, f.block, pos, k + 1, 0, Shape::kBlockArg, 0};
    bool fr;
    ClassEntry& e = r.ClassFor(
        key,
        [](Recorder::Impl&, const Key& kk, const void*) {
          ClassSpec s;
          s.kind = NodeKind::kArgument;
          s.block = kk.block;
          s.pos = kk.line;
          s.aux = kk.col;
          s.operands = {OperandSpec::Ref()};
          return s;
        },
        nullptr, &fr);
    NodeId id = r.w->AppendScalar(e.cls, v.vk, v.bits, &jump, 1);
    b.arg_cls.push_back(e.cls);
    *v.id = id;
    *v.serial = f.serial;
    *v.pos = pos;
    ++k;
  }
  return true;
}

bool LoopTest(IfSite& site, Loc loc, const Bool& c) {
  Recorder* rec = t_current;
  if (rec == nullptr) return c.v;
  Recorder::Impl& r = rec->impl();
  if (r.frames.empty() || r.frames.back().muted) return c.v;
  Frame& f = r.frames.back();
  bool fresh;
  SiteBlocks& b = r.BlocksOf(site, f.fn, &fresh);
  bool go = Test(r, f, b, c, b.b, b.c, loc);
  if (!go && r.loop_pool.size() > f.loops_at && r.loop_pool.back() == &site) {
    r.loop_pool.pop_back();
  }
  return go;
}

}  // namespace detail

}  // namespace irt::rec
