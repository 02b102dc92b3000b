// The interpreter loop. Frames live in one vector and their SSA slots on a
// segmented stack, so calls and returns are pushes and pops, never host
// recursion, and a frame's slots never move.
// Node classes are defined once per statement before the run; the loop only
// appends nodes (value plus reference ids) and stores slot values, without
// heap allocation for scalars.
#include "irt/ir/interpreter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>

#include "irt/ops.h"

namespace irt::ir {

// ---------------------------------------------------------------------------
// Random numbers

namespace {

uint64_t SplitMix64(uint64_t* x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

RandomSource RandomSource::Seeded(uint64_t seed) {
  RandomSource r;
  uint64_t x = seed;
  for (uint64_t& s : r.s_) s = SplitMix64(&x);
  return r;
}

RandomSource RandomSource::Replay(std::vector<double> values) {
  RandomSource r;
  r.replay_ = true;
  r.values_ = std::move(values);
  return r;
}

uint64_t RandomSource::Next() {
  uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

bool RandomSource::Uniform(double* out) {
  if (replay_) {
    if (next_value_ >= values_.size()) return false;
    *out = values_[next_value_++];
  } else {
    *out = static_cast<double>(Next() >> 11) * 0x1.0p-53;
  }
  ++draws_;
  return true;
}

bool RandomSource::Normal(double* out) {
  if (replay_) return Uniform(out);
  double u, v, s;
  do {
    u = static_cast<double>(Next() >> 11) * 0x1.0p-52 - 1.0;
    v = static_cast<double>(Next() >> 11) * 0x1.0p-52 - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  *out = u * std::sqrt(-2.0 * PortableLog(s) / s);
  ++draws_;
  return true;
}

std::string RandomSource::ExhaustedMessage() const {
  return "no more random values: all " + std::to_string(values_.size()) +
         " given values have been used";
}

double PortableLog(double x) {
  if (std::isnan(x) || x < 0) return std::nan("");
  if (x == 0) return -HUGE_VAL;
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // exact: x = m * 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2;
    --e;
  }
  // log(m) = 2 atanh(f) = 2 (f + f^3/3 + f^5/5 + ...), |f| <= 0.172.
  double f = (m - 1) / (m + 1);
  double f2 = f * f;
  double s = 1.0 / 25;
  for (int k = 23; k >= 1; k -= 2) s = s * f2 + 1.0 / k;
  double log_m = 2 * f * s;
  const double kLn2Hi = 6.93147180369123816490e-01;
  const double kLn2Lo = 1.90821492927058770002e-10;
  return e * kLn2Hi + (e * kLn2Lo + log_m);
}

// ---------------------------------------------------------------------------
// The interpreter

namespace {

struct Slot {
  Value v;
  NodeId node = kNoNode;
};

struct Frame {
  const Function* fn;
  Slot* regs;         // the frame's slots, fn->num_slots of them
  const Instr* call;  // the caller's call statement; nullptr for the root
  uint32_t pc;
  uint32_t level;  // the root call is level 1
  bool recording;
};

// Slots for the frames: segments of kSegmentSlots (the first of
// kFirstSegmentSlots) or of one frame, each frame's
// slots contiguous in one segment. Segments are never moved or freed while
// the stack lives, so pushing costs no copying however deep calls go; slots
// above the top are always empty (kNone), as a fresh frame needs them.
class SlotStack {
 public:
  Slot* Push(uint32_t n) {
    if (top_ + n > cap_) NextSegment(n);
    Slot* p = cur_ + top_;
    top_ += n;
    return p;
  }
  // Pops the n slots at p, which were pushed last.
  void Pop(Slot* p, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) p[i] = Slot{};
    top_ -= n;
    if (top_ == 0 && seg_ > 0) {
      --seg_;
      cur_ = segs_[seg_].data.data();
      cap_ = segs_[seg_].size;
      top_ = segs_[seg_].saved_top;
    }
  }
  void Clear() {
    for (Segment& g : segs_) {
      for (size_t i = 0; i < g.size; ++i) g.data[i] = Slot{};
    }
    seg_ = 0;
    top_ = 0;
    if (!segs_.empty()) {
      cur_ = segs_[0].data.data();
      cap_ = segs_[0].size;
    }
  }

 private:
  static constexpr size_t kFirstSegmentSlots = 1 << 8;
  static constexpr size_t kSegmentSlots = 1 << 16;
  static_assert(kSegmentSlots * sizeof(Slot) >= TensorAllocator<Slot>::kBlockBytes,
                "a segment is a block of TensorAllocator's, on huge pages");
  struct Segment {
    // TensorAllocator: a large segment is on 2 MiB pages (one page fault
    // each, not one per 4 KiB), as a deep recursion needs many.
    std::vector<Slot, TensorAllocator<Slot>> data;
    size_t size = 0;
    size_t saved_top = 0;  // the top of this segment while later ones are in use
  };
  void NextSegment(uint32_t n) {
    if (cur_ != nullptr) {
      segs_[seg_].saved_top = top_;
      ++seg_;
    }
    if (seg_ < segs_.size() && segs_[seg_].size < n) {
      segs_.resize(seg_);  // too small for this frame: replace it and the ones after it
    }
    if (seg_ == segs_.size()) {
      // A short run does not construct (and take page faults for) 65536
      // slots it never uses: the first segment is small.
      const size_t grown = segs_.empty() ? kFirstSegmentSlots : kSegmentSlots;
      size_t size = std::max<size_t>(grown, n);
      segs_.push_back(Segment{std::vector<Slot, TensorAllocator<Slot>>(size), size, 0});
    }
    cur_ = segs_[seg_].data.data();
    cap_ = segs_[seg_].size;
    top_ = 0;
  }
  std::vector<Segment> segs_;
  size_t seg_ = 0;
  Slot* cur_ = nullptr;
  size_t cap_ = 0;
  size_t top_ = 0;
};

const Value kNoValue;
// Jumps with at most this many operands take the copy-free path.
constexpr size_t kMaxDirect = 8;

// Evaluates operation `op` on `args` into `*out`: the inline fast path of
// irt/ops.h for Int64 and Float64 pairs, random draws from the run's random
// source, everything else through irt::ApplyOp. On failure sets `*error`.
inline bool EvalOp(const OpDef& op, const Value* const* args, size_t n, RandomSource& random,
                   Value* out, std::string* error) {
  if (n == 2 && ApplyFastBinary(op, *args[0], *args[1], out)) return true;
  if (op.Has(kOpRandom)) [[unlikely]] {
    double d;
    if (!(op.name == "rand" ? random.Uniform(&d) : random.Normal(&d))) {
      *error = random.ExhaustedMessage();
      return false;
    }
    *out = Value::F64(d);
    return true;
  }
  Result<Value> r = ApplyOp(op, OpArgs(args, n));
  if (!r.ok()) [[unlikely]] {
    *error = r.error().code() == Code::kRuntimeError ? r.error().message()
                                                     : "ArgumentError: " + r.error().message();
    return false;
  }
  *out = std::move(r).value();
  return true;
}

// The message for reading slot `slot` before anything was stored in it.
std::string UndefinedMessage(const Function& f, uint32_t slot) {
  uint32_t ssa = 0;
  for (const Block& b : f.blocks) {
    for (size_t k = 0; k < b.arg_slots.size(); ++k) {
      if (b.arg_slots[k] == slot) ssa = b.arg_ssa[k];
    }
  }
  for (const Instr& d : f.code) {
    bool defines = d.code == OpCode::kPrim || d.code == OpCode::kConst || d.code == OpCode::kCall ||
                   d.code == OpCode::kUndefined;
    if (defines && d.dst == slot) ssa = d.ssa;
  }
  return "UndefVarError: %" + std::to_string(ssa) + " used before it was assigned";
}

}  // namespace

struct Interpreter::Impl {
  Impl(const Module& m, TrackingContext& c, RandomSource& r, InterpreterOptions o)
      : module(m), ctx(c), random(r), options(std::move(o)) {}

  const Module& module;
  TrackingContext& ctx;
  RandomSource& random;
  InterpreterOptions options;

  TraceWriter* writer = nullptr;
  std::vector<ClassId> cls;  // per uid: the node class
  std::vector<ClassId> alt;  // per uid: calls as Primitive; parameters with a Ref operand
  std::vector<uint8_t> hook;
  std::vector<StatementInfo> infos;

  // Deep recursions grow it to megabytes, on huge-page blocks (GrowStack).
  std::vector<Frame, TensorAllocator<Frame>> frames;
  SlotStack slots;
  std::vector<Value> argbuf;
  std::vector<NodeId> nodebuf;  // per operand: its node, kNoNode for literals
  std::vector<NodeId> refbuf;
  std::string error;

  void DefineClasses();
  Result<Value> Run(int fi, std::span<const Value> args, bool record);
  Result<Value> Fail(const Instr* at);
  void AddTraceMeta(std::string_view status, std::string_view function);

  void PushFrame(const Function& f, uint32_t level, bool rec, const Instr* call) {
    GrowStack(frames);
    frames.push_back(Frame{&f, slots.Push(f.num_slots), call, 0, level, rec});
  }
  void PopFrame() {
    const Frame& fr = frames.back();
    slots.Pop(fr.regs, fr.fn->num_slots);
    frames.pop_back();
  }
  void Hook(uint32_t uid, NodeKind kind, NodeId id, const Value& v) {
    if (hook[uid]) {
      NodeInfo info{kind, infos[uid], v};
      ctx.OnNode(id, info, *writer);
    }
  }
  // Binds %1 and the parameters of the frame on top; `nodes` holds the
  // caller's node for each argument (kNoNode for literals).
  void BindArgs(size_t fi, const Value* vals, const NodeId* nodes, size_t n) {
    Frame& fr = frames.back();
    const Function& f = *fr.fn;
    Slot* regs = fr.regs;
    const Block& entry = f.blocks[0];
    uint32_t uid0 = module.param_uid(fi, 0);
    Slot& self = regs[entry.arg_slots[0]];
    self.v = f.value;
    if (fr.recording) {
      self.node = writer->Append(cls[uid0], f.value, {});
      Hook(uid0, NodeKind::kArgument, self.node, f.value);
    }
    for (size_t k = 0; k < n; ++k) {
      Slot& s = regs[entry.arg_slots[k + 1]];
      s.v = vals[k];
      if (fr.recording) {
        uint32_t uid = uid0 + static_cast<uint32_t>(k + 1);
        if (nodes[k] != kNoNode) {
          s.node = writer->Append(alt[uid], s.v, std::span<const NodeId>(&nodes[k], 1));
        } else {
          s.node = writer->Append(cls[uid], s.v, {});
        }
        Hook(uid, NodeKind::kArgument, s.node, s.v);
      }
    }
  }
};

namespace {

// The control-flow facts of `f` (irt/control_flow.h): its blocks and, in
// each, the branches and return in order, explicit or fall-through, with
// the SSA id of each condition, as the Jump and Return nodes of its calls
// identify them (block and branch position).
ControlFlow ControlFlowOf(const Function& f) {
  std::vector<uint32_t> ssa_of(f.num_slots, 0);
  for (const Block& b : f.blocks) {
    for (size_t k = 0; k < b.arg_slots.size() && k < b.arg_ssa.size(); ++k) {
      if (b.arg_slots[k] < ssa_of.size()) ssa_of[b.arg_slots[k]] = b.arg_ssa[k];
    }
  }
  auto is_branch = [](OpCode c) {
    return c == OpCode::kBr || c == OpCode::kBrUnless || c == OpCode::kReturn;
  };
  for (const Instr& in : f.code) {
    if (!is_branch(in.code) && in.dst < ssa_of.size()) ssa_of[in.dst] = in.ssa;
  }
  ControlFlow out;
  out.blocks = static_cast<uint32_t>(f.blocks.size());
  for (const Instr& in : f.code) {
    if (!is_branch(in.code)) continue;
    BranchFact b;
    b.block = in.block;
    b.pos = in.ssa;
    b.target = in.code == OpCode::kReturn ? 0 : in.target + 1;
    if (in.code == OpCode::kBrUnless) {
      b.conditional = true;
      b.taken_when = false;
      const Operand& c = f.operands[in.first_arg + in.nargs];
      if (!c.is_const && c.index < ssa_of.size()) b.condition = ssa_of[c.index];
    }
    out.branches.push_back(b);
  }
  return out;
}

std::vector<OperandSpec> OperandSpecs(const Function& f, const Instr& in, size_t n) {
  std::vector<OperandSpec> specs;
  for (size_t i = 0; i < n; ++i) {
    const Operand& o = f.operands[in.first_arg + i];
    specs.push_back(o.is_const ? OperandSpec::Literal(f.constants[o.index]) : OperandSpec::Ref());
  }
  return specs;
}

}  // namespace

void Interpreter::Impl::DefineClasses() {
  uint32_t n = module.num_uids();
  cls.assign(n, 0);
  alt.assign(n, 0);
  hook.assign(n, 0);
  infos.assign(n, StatementInfo{});
  const auto& fns = module.functions();
  for (size_t fi = 0; fi < fns.size(); ++fi) {
    const Function& f = fns[fi];
    writer->RegisterFunction(f.name, f.ir_text);
    writer->RegisterControlFlow(f.name, ControlFlowOf(f));
    const Block& entry = f.blocks[0];
    for (size_t k = 0; k <= f.num_params; ++k) {
      uint32_t uid = module.param_uid(fi, k);
      ClassSpec spec;
      spec.kind = NodeKind::kArgument;
      spec.block = 1;
      spec.pos = entry.arg_ssa[k];
      spec.line = entry.arg_pos[k].line;
      spec.col = static_cast<uint16_t>(std::min<uint32_t>(entry.arg_pos[k].col, 0xFFFF));
      infos[uid] =
          StatementInfo{NodeKind::kArgument, false, f.name, "", 1, spec.pos, entry.arg_pos[k]};
      cls[uid] = writer->DefineClass(spec);
      if (k > 0) {
        spec.operands.push_back(OperandSpec::Ref());
        alt[uid] = writer->DefineClass(spec);
      }
    }
    for (size_t bi = 0; bi < f.blocks.size(); ++bi) {
      const Block& b = f.blocks[bi];
      uint32_t number = static_cast<uint32_t>(bi + 1);
      if (bi > 0) {
        for (size_t k = 0; k < b.arg_ssa.size(); ++k) {
          uint32_t uid = b.first_arg_uid + static_cast<uint32_t>(k);
          ClassSpec spec;
          spec.kind = NodeKind::kArgument;
          spec.block = number;
          spec.pos = b.arg_ssa[k];
          spec.aux = static_cast<uint32_t>(k + 1);
          spec.line = b.arg_pos[k].line;
          spec.col = static_cast<uint16_t>(std::min<uint32_t>(b.arg_pos[k].col, 0xFFFF));
          spec.operands.push_back(OperandSpec::Ref());
          infos[uid] =
              StatementInfo{NodeKind::kArgument, false, f.name, "", number, spec.pos, b.arg_pos[k]};
          cls[uid] = writer->DefineClass(std::move(spec));
        }
      }
      size_t end = bi + 1 < f.blocks.size() ? f.blocks[bi + 1].first : f.code.size();
      for (size_t i = b.first; i < end; ++i) {
        const Instr& in = f.code[i];
        ClassSpec spec;
        spec.block = number;
        spec.pos = in.ssa;
        spec.line = in.pos.line;
        spec.col = static_cast<uint16_t>(std::min<uint32_t>(in.pos.col, 0xFFFF));
        StatementInfo info{NodeKind::kPrimitive, false, f.name, in.name, number, in.ssa, in.pos};
        switch (in.code) {
          case OpCode::kPrim:
            spec.kind = NodeKind::kPrimitive;
            spec.op = in.name;
            spec.operands = OperandSpecs(f, in, in.nargs);
            info.builtin = true;
            break;
          case OpCode::kConst:
            spec.kind = NodeKind::kConstant;
            info.kind = NodeKind::kConstant;
            break;
          case OpCode::kCall:
            spec.kind = NodeKind::kCall;
            spec.op = in.name;
            spec.operands = OperandSpecs(f, in, in.nargs);
            info.kind = NodeKind::kCall;
            break;
          case OpCode::kUndefined:
            continue;  // fails when executed; its Error node class is made then
          case OpCode::kBr:
          case OpCode::kBrUnless:
            spec.kind = NodeKind::kJump;
            spec.aux = in.target + 1;
            spec.has_condition = in.code == OpCode::kBrUnless;
            spec.condition_taken_when = false;
            spec.operands = OperandSpecs(f, in, in.nargs + (spec.has_condition ? 1 : 0));
            info.kind = NodeKind::kJump;
            break;
          case OpCode::kReturn:
            spec.kind = NodeKind::kReturn;
            spec.operands = OperandSpecs(f, in, in.nargs);
            info.kind = NodeKind::kReturn;
            break;
        }
        infos[in.uid] = info;
        if (in.code == OpCode::kCall) {
          ClassSpec prim = spec;
          prim.kind = NodeKind::kPrimitive;
          alt[in.uid] = writer->DefineClass(std::move(prim));
        }
        cls[in.uid] = writer->DefineClass(std::move(spec));
      }
    }
  }
  for (uint32_t uid = 0; uid < n; ++uid) {
    if (!infos[uid].function.empty()) hook[uid] = ctx.WantsNodes(infos[uid]) ? 1 : 0;
  }
}

// Records the failure and completes the trace: an Error node closes each
// open traced call, innermost first.
Result<Value> Interpreter::Impl::Fail(const Instr* at) {
  const std::string& file = module.file_name();
  std::string full =
      file + ":" + std::to_string(at->pos.line) + ":" + std::to_string(at->pos.col) + ": " + error;
  std::string root_name = frames.empty() ? "" : frames.front().fn->name;
  if (writer == nullptr || frames.empty() || !frames.front().recording) {
    frames.clear();
    slots.Clear();
    return RuntimeError(full);
  }
  // Untraced frames report at the call that entered them.
  while (!frames.back().recording) {
    at = frames.back().call;
    PopFrame();
  }
  bool first = true;
  while (!frames.empty()) {
    const Frame& fr = frames.back();
    const Function& f = *fr.fn;
    const Slot* regs = fr.regs;
    ClassSpec spec;
    spec.kind = NodeKind::kError;
    spec.block = at->block;
    spec.pos = at->ssa;
    spec.line = at->pos.line;
    spec.col = static_cast<uint16_t>(std::min<uint32_t>(at->pos.col, 0xFFFF));
    switch (at->code) {
      case OpCode::kBr:
      case OpCode::kBrUnless:
        spec.op = "br";
        spec.aux = 1;  // failed at a branch: pos is its branch position
        break;
      case OpCode::kReturn:
        spec.op = "return";
        spec.aux = 1;
        break;
      default:
        spec.op = at->name;
    }
    size_t n = at->nargs + (at->code == OpCode::kBrUnless ? 1 : 0);
    refbuf.clear();
    for (size_t i = 0; i < n; ++i) {
      const Operand& o = f.operands[at->first_arg + i];
      if (o.is_const) {
        spec.operands.push_back(OperandSpec::Literal(f.constants[o.index]));
      } else if (!regs[o.index].v.is_none()) {
        spec.operands.push_back(OperandSpec::Ref());
        refbuf.push_back(regs[o.index].node);
      }
    }
    ClassId c = writer->DefineClass(std::move(spec));
    writer->Append(c, kNoValue, refbuf);
    if (first) writer->AddMeta("error", Value::String(error));
    first = false;
    at = fr.call;
    PopFrame();
  }
  writer->AddTraceMeta("status", Value::String("failed"));
  writer->AddTraceMeta("error", Value::String(full));
  writer->AddTraceMeta("function", Value::String(root_name));
  for (const auto& [k, v] : options.trace_meta) writer->AddTraceMeta(k, v);
  IRT_RETURN_IF_ERROR(writer->Finish());
  return RuntimeError(full);
}

Result<Value> Interpreter::Impl::Run(int fi, std::span<const Value> args, bool record) {
  error.clear();
  frames.clear();
  slots.Clear();
  const auto& fns = module.functions();
  const Function& root = fns[static_cast<size_t>(fi)];
  if (record) {
    ClassSpec spec;
    spec.kind = NodeKind::kCall;
    spec.op = root.name;
    for (const Value& a : args) spec.operands.push_back(OperandSpec::Literal(a));
    writer->Append(writer->DefineClass(std::move(spec)), kNoValue, {});
  }
  PushFrame(root, 1, record, nullptr);
  nodebuf.assign(args.size(), kNoNode);
  BindArgs(static_cast<size_t>(fi), args.data(), nodebuf.data(), args.size());

  Frame* fr = &frames.back();
  const Function* fn = fr->fn;
  Slot* regs = fr->regs;
  const Operand* ops = fn->operands.data();
  const Value* consts = fn->constants.data();
  auto reload = [&]() {
    fr = &frames.back();
    fn = fr->fn;
    regs = fr->regs;
    ops = fn->operands.data();
    consts = fn->constants.data();
  };
  // Gathers operands [first, first + n) into argbuf/nodebuf/refbuf.
  auto gather = [&](const Instr& in, size_t n) -> bool {
    argbuf.clear();
    nodebuf.clear();
    refbuf.clear();
    for (size_t i = 0; i < n; ++i) {
      const Operand& o = ops[in.first_arg + i];
      if (o.is_const) {
        argbuf.push_back(consts[o.index]);
        nodebuf.push_back(kNoNode);
      } else {
        const Slot& s = regs[o.index];
        if (s.v.is_none()) {
          error = UndefinedMessage(*fn, o.index);
          return false;
        }
        argbuf.push_back(s.v);
        nodebuf.push_back(s.node);
        refbuf.push_back(s.node);
      }
    }
    return true;
  };

  const Value* pargs[kMaxPrimArity];
  NodeId prefs[kMaxPrimArity];
  uint64_t budget = options.max_steps == 0 ? ~0ull : options.max_steps;
  for (;;) {
    const Instr& in = fn->code[fr->pc++];
    if (budget-- == 0) [[unlikely]] {
      error = "step limit reached: " + std::to_string(options.max_steps) +
              " statements and branches executed (--max-steps)";
      return Fail(&in);
    }
    switch (in.code) {
      case OpCode::kPrim: {
        pargs[0] = pargs[1] = &kNoValue;  // nullary primitives still get valid pointers
        size_t nref = 0;
        for (size_t i = 0; i < in.nargs; ++i) {
          const Operand& o = ops[in.first_arg + i];
          if (o.is_const) {
            pargs[i] = &consts[o.index];
          } else {
            const Slot& s = regs[o.index];
            if (s.v.is_none()) {
              gather(in, in.nargs);
              return Fail(&in);
            }
            pargs[i] = &s.v;
            prefs[nref++] = s.node;
          }
        }
        Value r;
        if (!EvalOp(*in.op, pargs, in.nargs, random, &r, &error)) {
          return Fail(&in);
        }
        Slot& d = regs[in.dst];
        if (fr->recording) {
          d.node = writer->Append(cls[in.uid], r, std::span<const NodeId>(prefs, nref));
          if (hook[in.uid]) Hook(in.uid, NodeKind::kPrimitive, d.node, r);
        }
        d.v = std::move(r);
        break;
      }
      case OpCode::kConst: {
        Slot& d = regs[in.dst];
        d.v = consts[in.target];
        if (fr->recording) {
          d.node = writer->Append(cls[in.uid], d.v, {});
          if (hook[in.uid]) Hook(in.uid, NodeKind::kConstant, d.node, d.v);
        }
        break;
      }
      case OpCode::kCall: {
        const Function& callee = fns[in.target];
        if (!gather(in, in.nargs)) return Fail(&in);
        if (in.nargs != callee.num_params) {
          std::vector<const Value*> ptrs;
          for (const Value& v : argbuf) ptrs.push_back(&v);
          error = NoMethodMessage(callee.name, OpArgs(ptrs.data(), ptrs.size())) + " (" +
                  callee.name + " takes " + std::to_string(callee.num_params) + " arguments)";
          return Fail(&in);
        }
        if (frames.size() >= options.max_call_depth) {
          error = "StackOverflowError: calls nested more than " +
                  std::to_string(options.max_call_depth) + " deep";
          return Fail(&in);
        }
        bool rec = false;
        if (fr->recording) {
          CallSite site{fn->name, callee.name, in.block, in.ssa, in.pos};
          rec = ctx.CanRecur(site, fr->level + 1);
          if (rec) {
            NodeId m = writer->Append(cls[in.uid], kNoValue, refbuf);
            if (hook[in.uid]) Hook(in.uid, NodeKind::kCall, m, kNoValue);
            if (!writer->status().ok()) return writer->status();
          }
        }
        PushFrame(callee, fr->level + 1, rec, &in);
        BindArgs(in.target, argbuf.data(), nodebuf.data(), argbuf.size());
        reload();
        break;
      }
      case OpCode::kUndefined: {
        if (!gather(in, in.nargs)) return Fail(&in);
        if (FindOp(in.name) != nullptr) {
          std::vector<const Value*> ptrs;
          for (const Value& v : argbuf) ptrs.push_back(&v);
          error = NoMethodMessage(in.name, OpArgs(ptrs.data(), ptrs.size()));
        } else {
          error = "UndefVarError: `" + in.name + "` not defined";
        }
        return Fail(&in);
      }
      case OpCode::kBrUnless: {
        const Operand& c = ops[in.first_arg + in.nargs];
        const Value* cond;
        if (c.is_const) {
          cond = &consts[c.index];
        } else {
          cond = &regs[c.index].v;
          if (cond->is_none()) {
            gather(in, in.nargs + 1u);
            return Fail(&in);
          }
        }
        if (cond->kind() != VKind::kBool) {
          error = "TypeError: non-boolean (" + TypeName(*cond) + ") used in boolean context";
          return Fail(&in);
        }
        if (cond->as_bool()) break;  // not taken
        [[fallthrough]];
      }
      case OpCode::kBr: {
        size_t n = in.nargs + (in.code == OpCode::kBrUnless ? 1u : 0u);
        const Block& b = fn->blocks[in.target];
        if (in.direct && n <= kMaxDirect) {
          // No operand is a slot the jump assigns: copy straight into place.
          NodeId refs[kMaxDirect];
          size_t nref = 0;
          for (size_t i = 0; i < n; ++i) {
            const Operand& o = ops[in.first_arg + i];
            if (!o.is_const) {
              const Slot& s = regs[o.index];
              if (s.v.is_none()) {
                gather(in, n);
                return Fail(&in);
              }
              refs[nref++] = s.node;
            }
          }
          NodeId jump = kNoNode;
          if (fr->recording) {
            jump = writer->Append(cls[in.uid], kNoValue, std::span<const NodeId>(refs, nref));
            if (hook[in.uid]) Hook(in.uid, NodeKind::kJump, jump, kNoValue);
            if (!writer->status().ok()) return writer->status();
          }
          for (size_t k = 0; k < in.nargs; ++k) {
            const Operand& o = ops[in.first_arg + k];
            Slot& d = regs[b.arg_slots[k]];
            d.v = o.is_const ? consts[o.index] : regs[o.index].v;
            if (fr->recording) {
              uint32_t uid = b.first_arg_uid + static_cast<uint32_t>(k);
              d.node = writer->Append(cls[uid], d.v, std::span<const NodeId>(&jump, 1));
              if (hook[uid]) Hook(uid, NodeKind::kArgument, d.node, d.v);
            }
          }
          fr->pc = b.first;
          break;
        }
        // Parallel assignment through a buffer ("br 2 (%6, %5)" into (%5, %6)).
        if (!gather(in, n)) return Fail(&in);
        NodeId jump = kNoNode;
        if (fr->recording) {
          jump = writer->Append(cls[in.uid], kNoValue, refbuf);
          if (hook[in.uid]) Hook(in.uid, NodeKind::kJump, jump, kNoValue);
          if (!writer->status().ok()) return writer->status();
        }
        for (size_t k = 0; k < in.nargs; ++k) {
          Slot& s = regs[b.arg_slots[k]];
          s.v = std::move(argbuf[k]);
          if (fr->recording) {
            uint32_t uid = b.first_arg_uid + static_cast<uint32_t>(k);
            s.node = writer->Append(cls[uid], s.v, std::span<const NodeId>(&jump, 1));
            if (hook[uid]) Hook(uid, NodeKind::kArgument, s.node, s.v);
          }
        }
        fr->pc = b.first;
        break;
      }
      case OpCode::kReturn: {
        const Operand& o = ops[in.first_arg];
        Value result;
        size_t nref = 0;
        if (o.is_const) {
          result = consts[o.index];
        } else {
          const Slot& s = regs[o.index];
          if (s.v.is_none()) {
            gather(in, 1);
            return Fail(&in);
          }
          result = s.v;
          prefs[nref++] = s.node;
        }
        NodeId ret = kNoNode;
        bool callee_rec = fr->recording;
        if (callee_rec) {
          ret = writer->Append(cls[in.uid], result, std::span<const NodeId>(prefs, nref));
          if (hook[in.uid]) Hook(in.uid, NodeKind::kReturn, ret, result);
        }
        const Instr* call = fr->call;
        PopFrame();
        if (frames.empty()) return result;
        reload();
        Slot& d = regs[call->dst];
        if (fr->recording && !callee_rec) {
          // The call was recorded as a primitive: one node, after its value is known.
          refbuf.clear();
          for (size_t i = 0; i < call->nargs; ++i) {
            const Operand& a = ops[call->first_arg + i];
            if (!a.is_const) refbuf.push_back(regs[a.index].node);
          }
          ret = writer->Append(alt[call->uid], result, refbuf);
          if (hook[call->uid]) Hook(call->uid, NodeKind::kPrimitive, ret, result);
        }
        d.v = std::move(result);
        d.node = ret;
        break;
      }
    }
  }
}

void Interpreter::Impl::AddTraceMeta(std::string_view status, std::string_view function) {
  writer->AddTraceMeta("status", Value::String(std::string(status)));
  writer->AddTraceMeta("function", Value::String(std::string(function)));
  for (const auto& [k, v] : options.trace_meta) writer->AddTraceMeta(k, v);
}

Interpreter::Interpreter(const Module& module, TrackingContext& context, RandomSource& random,
                         InterpreterOptions options)
    : impl_(std::make_unique<Impl>(module, context, random, std::move(options))) {}

Interpreter::~Interpreter() = default;

Status Interpreter::CheckCall(std::string_view function, size_t num_args) const {
  const Module& m = impl_->module;
  int fi = m.Find(function);
  if (fi < 0) {
    std::string names;
    for (const Function& f : m.functions()) names += (names.empty() ? "" : ", ") + f.name;
    return UsageError("'" + m.file_name() + "' defines no function '" + std::string(function) +
                      "'" + (names.empty() ? "" : " (it defines " + names + ")"));
  }
  const Function& f = m.functions()[static_cast<size_t>(fi)];
  if (f.num_params != num_args) {
    return UsageError("function '" + f.name + "' takes " + std::to_string(f.num_params) +
                      (f.num_params == 1 ? " argument, " : " arguments, ") +
                      std::to_string(num_args) + " given");
  }
  return Status::Ok();
}

Result<Value> Interpreter::Trace(std::string_view function, std::span<const Value> args,
                                 TraceWriter& writer) {
  IRT_RETURN_IF_ERROR(CheckCall(function, args.size()));
  Impl& m = *impl_;
  m.writer = &writer;
  m.DefineClasses();
  int fi = m.module.Find(function);
  Result<Value> r = m.Run(fi, args, true);
  if (!r.ok()) return r;
  m.AddTraceMeta("ok", function);
  IRT_RETURN_IF_ERROR(writer.Finish());
  return r;
}

Result<Value> Interpreter::Evaluate(std::string_view function, std::span<const Value> args) {
  IRT_RETURN_IF_ERROR(CheckCall(function, args.size()));
  impl_->writer = nullptr;
  return impl_->Run(impl_->module.Find(function), args, false);
}

}  // namespace irt::ir
