// The text fuzzer's body (text_fuzz_body.h): the IR parser and interpreter,
// the rule parser, value literals, command-line specs and .npy files, with
// the properties their documentation promises checked on every input.
#include "text_fuzz_body.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "irt/check.h"
#include "irt/grad.h"
#include "irt/graph.h"
#include "irt/ir/context.h"
#include "irt/ir/interpreter.h"
#include "irt/ir/module.h"
#include "irt/npy.h"
#include "irt/output.h"
#include "irt/replay.h"
#include "irt/rules.h"
#include "irt/trace.h"
#include "irt/value.h"
#include "irt/writer.h"

namespace irt::fuzz {

namespace {

// Work per input: statements and call depth of a fuzzed program, the bytes
// of the values it may compute (a loop that grows a tuple makes a trace
// quadratic in its steps), the largest number among its constants
// (sizes of tensors), functions of a module run, the largest trace
// differentiated. A program beyond them is a program's demand, not a bug:
// it is not run, or its run is abandoned.
constexpr uint64_t kMaxSteps = 2000;
constexpr uint64_t kMaxCallDepth = 200;
constexpr uint64_t kMaxValueBytes = uint64_t{16} << 20;
constexpr int64_t kMaxConstant = 64;
constexpr size_t kMaxFunctions = 3;
constexpr uint64_t kGradNodeLimit = 4096;

// A broken promise: the fuzzer reports the abort with this message.
[[noreturn]] void Broken(const std::string& what) {
  std::fprintf(stderr, "text fuzzer: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// The bytes in a memfd, for readers that take a path.
std::string MemfdPath(std::string_view bytes) {
  static int fd = memfd_create("irt-text-fuzz", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0) return "";
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (w <= 0) return "";
    done += static_cast<size_t>(w);
  }
  return "/dev/fd/" + std::to_string(fd);
}

// irt-check's verdict on bytes written by a producer of this library.
void MustCheck(std::string_view bytes, const std::string& what) {
  std::string path = MemfdPath(bytes);
  if (path.empty()) return;
  auto r = CheckTrace(path);
  if (!r.ok()) Broken(what + " wrote a trace the checker refuses: " + r.error().message());
}

const RuleSet& DefaultRules() {
  static const RuleSet* rules = [] {
    auto r = RuleSet::Load(std::string(IRT_SOURCE_DIR) + "/rules/default.rules");
    if (!r.ok()) Broken("cannot load the default rules: " + r.error().message());
    return new RuleSet(std::move(r).value());
  }();
  return *rules;
}

// Bytes a value holds (tensors' elements, tuples' items), without recursion.
uint64_t ValueBytes(const Value& v) {
  uint64_t bytes = 0;
  std::vector<const Value*> todo = {&v};
  while (!todo.empty()) {
    const Value* x = todo.back();
    todo.pop_back();
    bytes += 16;
    if (x->kind() == VKind::kTensor) {
      bytes += static_cast<uint64_t>(x->tensor().numel()) * 8;
    } else if (x->kind() == VKind::kTuple) {
      for (const Value& item : x->tuple()) todo.push_back(&item);
    } else if (x->kind() == VKind::kString) {
      bytes += x->str().size();
    }
  }
  return bytes;
}

// Abandons a run whose values exceed kMaxValueBytes (thrown from OnNode).
struct TooMuch {};
class Budget : public ir::TrackingContext {
 public:
  bool WantsNodes(const ir::StatementInfo&) override { return true; }
  void OnNode(NodeId, const ir::NodeInfo& node, TraceWriter&) override {
    used_ += ValueBytes(node.value);
    if (used_ > kMaxValueBytes) throw TooMuch{};
  }

 private:
  uint64_t used_ = 0;
};

// Whether `m` starts from small numbers only (see kMaxConstant).
bool SmallConstants(const ir::Module& m) {
  for (const ir::Function& f : m.functions()) {
    for (const Value& c : f.constants) {
      if (c.kind() == VKind::kI64 && (c.as_i64() > kMaxConstant || c.as_i64() < -kMaxConstant))
        return false;
      if (c.kind() == VKind::kF64 || c.kind() == VKind::kF32) {
        const double d = c.to_double();
        if (d > kMaxConstant || d < -kMaxConstant) return false;
      }
    }
  }
  return true;
}

struct Recorded {
  Result<Value> result = Value();
  std::string bytes;       // the trace, when the writer finished it
  bool abandoned = false;  // over the value budget
};

// Runs function(args) of `m` into a trace in memory.
Recorded Record(const ir::Module& m, std::string_view function, const std::vector<Value>& args,
                uint32_t chunk_nodes) {
  Recorded out;
  Budget ctx;
  ir::RandomSource rs = ir::RandomSource::Seeded(7);
  ir::InterpreterOptions io;
  io.max_steps = kMaxSteps;
  io.max_call_depth = kMaxCallDepth;
  ir::Interpreter interp(m, ctx, rs, io);
  std::unique_ptr<Output> mem = Output::Memory();
  WriterOptions wo;
  wo.chunk_nodes = chunk_nodes;
  try {
    TraceWriter w(mem.get(), wo);
    out.result = interp.Trace(function, args, w);
  } catch (const TooMuch&) {
    out.abandoned = true;
    return out;
  }
  if (mem->Commit().ok()) out.bytes = mem->memory();
  return out;
}

// The two fixed traces that rules and replay changes are tried on: scalar
// control flow (a branch, a loop, a nested call) and tensors.
const char kScalarIr[] = R"(function g
1: (%1, %2, %3)
  %4 = %2 * %3
  %5 = Main.sin(%4)
  %6 = %5 < 0.5
  br 3 unless %6
  br 2
2:
  %7 = Main.k(%4, 3)
  return %7
3:
  %8 = Main.exp(%2)
  %9 = %8 / %3
  return %9
end
function k
1: (%1, %2, %3)
  br 2 (0, %2)
2: (%4, %5)
  %6 = %4 < %3
  br 4 unless %6
  br 3
3:
  %7 = %5 ^ 2
  %8 = Main.log(%7)
  %9 = %8 - %5
  %10 = %4 + 1
  br 2 (%10, %9)
4:
  return %5
end
)";

const Trace* FixedTrace(int which) {
  static std::string bytes[2];
  static const Trace* traces[2] = {nullptr, nullptr};
  if (traces[which] != nullptr) return traces[which];
  Result<ir::Module> m =
      which == 0 ? ir::Module::Parse(kScalarIr, "scalar.ir")
                 : ir::Module::Load(std::string(IRT_SOURCE_DIR) + "/testdata/ir/mlp.ir");
  if (!m.ok()) Broken("fixed program: " + m.error().message());
  std::vector<Value> args;
  if (which == 0) {
    args = {Value::F64(0.3), Value::F64(1.7)};
  } else {
    for (const char* lit : {"[0.5 -1.0 0.25 2.0; 1.0 0.5 -0.5 0.1; 0.3 0.2 0.1 -1.0]",
                            "[0.1, -0.2, 0.3]", "[1.5, -0.5, 0.25, 2.0]"}) {
      auto v = ParseLiteral(lit);
      if (!v.ok()) Broken("fixed argument: " + v.error().message());
      args.push_back(*v);
    }
  }
  Recorded r = Record(*m, which == 0 ? "g" : "mlp", args, 8);
  if (!r.result.ok()) Broken("fixed program: " + r.result.error().message());
  bytes[which] = r.bytes;
  auto t = Trace::FromBytes(reinterpret_cast<const uint8_t*>(bytes[which].data()),
                            bytes[which].size(), "fixed");
  if (!t.ok()) Broken("fixed trace: " + t.error().message());
  traces[which] = new Trace(std::move(t).value());
  return traces[which];
}

void Differentiate2(const Trace& trace, const RuleSet& rules) {
  GradOptions reverse;
  (void)Differentiate(trace, rules, reverse);
  GradOptions forward;
  forward.mode = GradMode::kForward;
  forward.tangents = {{2, Value::F64(1.0)}};
  (void)Differentiate(trace, rules, forward);
}

// irt-replay evaluates primitives with the one operation table the
// interpreter uses: setting the first argument to the value it had replays
// the run as it was (no branch goes another way, no primitive that
// succeeded fails), into a valid trace.
void ReplaySame(const Trace& trace, const Value& first, const std::string& fn) {
  const ReplayChange change{"@2", first};
  auto r = Replay::Run(trace, std::span<const ReplayChange>(&change, 1));
  if (!r.ok()) return;  // e.g. an operation replay does not know
  const std::optional<ReplayDivergence>& d = r->result().divergence;
  if (d && d->kind != ReplayDivergence::Kind::kRecordedFailure) {
    Broken(fn + ": replaying the recorded arguments diverges: " + d->message);
  }
  if (!r->has_output()) return;
  auto bytes = r->Bytes();
  if (bytes.ok()) {
    MustCheck({reinterpret_cast<const char*>(bytes->data()), bytes->size()}, "a replay of " + fn);
  }
}

// The arguments a fuzzed function is called with: a few of each kind.
Value ArgumentFor(size_t pattern, size_t i) {
  switch ((pattern + i) % 6) {
    case 0:
      return Value::F64(0.5);
    case 1:
      return Value::I64(3);
    case 2:
      return Value::Bool(true);
    case 3:
      return Value::F64(-2.0);
    case 4:
      return Value::I64(0);
    default: {
      static const Value v = *ParseLiteral("[1.5, -0.5, 2.0]");
      return v;
    }
  }
}

void RunIr(std::string_view text) {
  Result<ir::Module> m = ir::Module::Parse(text, "fuzz.ir");
  if (!m.ok() || !SmallConstants(*m)) return;
  const size_t nf = std::min(m->functions().size(), kMaxFunctions);
  for (size_t f = 0; f < nf; ++f) {
    const ir::Function& fn = m->functions()[f];
    for (size_t pattern : {size_t{0}, size_t{1}}) {
      std::vector<Value> args;
      for (uint32_t i = 0; i < fn.num_params; ++i) args.push_back(ArgumentFor(pattern, i));
      Recorded r = Record(*m, fn.name, args, pattern == 0 ? 4 : 1024);
      if (r.abandoned) continue;
      const bool ran = r.result.ok() || r.result.error().code() == Code::kRuntimeError;
      if (!ran) continue;
      if (r.bytes.empty()) Broken("a run of " + fn.name + " left no trace");
      MustCheck(r.bytes, "the interpreter (" + fn.name + ")");
      // Without recording: the same outcome, the same value.
      ir::TrackingContext ctx;
      ir::RandomSource rs = ir::RandomSource::Seeded(7);
      ir::InterpreterOptions io;
      io.max_steps = kMaxSteps;
      io.max_call_depth = kMaxCallDepth;
      ir::Interpreter interp(*m, ctx, rs, io);
      Result<Value> e = interp.Evaluate(fn.name, args);
      if (e.ok() != r.result.ok()) {
        Broken(fn.name + ": recorded " +
               (r.result.ok() ? std::string("ok") : r.result.error().message()) + ", evaluated " +
               (e.ok() ? std::string("ok") : e.error().message()));
      }
      if (e.ok() &&
          FormatValue(*e, {.max_elements = 0}) != FormatValue(*r.result, {.max_elements = 0})) {
        Broken(fn.name + ": recorded " + FormatValue(*r.result) + ", evaluated " + FormatValue(*e));
      }
      auto t = Trace::FromBytes(reinterpret_cast<const uint8_t*>(r.bytes.data()), r.bytes.size(),
                                "fuzz");
      if (!t.ok()) Broken("a checked trace does not open: " + t.error().message());
      if (t->size() <= kGradNodeLimit) {
        Differentiate2(*t, DefaultRules());
        if (!args.empty()) ReplaySame(*t, args[0], fn.name);
      }
    }
  }
}

void RunRules(std::string_view text) {
  Result<RuleSet> rules = RuleSet::Parse(text, "fuzz.rules");
  if (!rules.ok()) return;
  Differentiate2(*FixedTrace(0), *rules);
  Differentiate2(*FixedTrace(1), *rules);
}

void RunLiteral(std::string_view text) {
  Result<Value> v = ParseLiteral(text);
  size_t length = 0, offset = 0;
  (void)ParseLiteralPrefix(text, &length, &offset);
  if (!v.ok()) return;
  // Everything FormatValue prints reads back (value.h), except abbreviated
  // text and function names.
  const std::string s = FormatValue(*v, {.max_elements = 0});
  if (v->kind() == VKind::kFunction || s.find("…") != std::string::npos) return;
  Result<Value> again = ParseLiteral(s);
  if (!again.ok()) Broken("FormatValue printed " + s + ", which does not read back");
  if (FormatValue(*again, {.max_elements = 0}) != s || TypeName(*again) != TypeName(*v)) {
    Broken("FormatValue printed " + s + ", which reads back as " + TypeName(*again) + " " +
           FormatValue(*again));
  }
}

void RunSpecs(std::string_view text) {
  (void)ParseNodePath(text);
  (void)ir::ParseRandValues(text);
  // A value naming a file ("@FILE") is ReadNpy's input: case 4.
  const size_t eq = text.find('=');
  if (eq != std::string_view::npos && text.find('@', eq) != std::string_view::npos) return;
  Result<ReplayChange> change = ParseReplayChange(text);
  if (!change.ok()) return;
  for (int which : {0, 1}) {
    auto r = Replay::Run(*FixedTrace(which), std::span<const ReplayChange>(&*change, 1));
    if (!r.ok() || !r->has_output()) continue;
    auto bytes = r->Bytes();
    if (!bytes.ok()) continue;
    MustCheck({reinterpret_cast<const char*>(bytes->data()), bytes->size()}, "a replay");
  }
}

void RunNpy(std::string_view bytes) {
  std::string path = MemfdPath(bytes);
  if (!path.empty()) (void)ReadNpy(path);
}

}  // namespace

void RunText(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (static_cast<uint8_t>(data[0] - '0') % 5) {
    case 0:
      RunIr(text);
      break;
    case 1:
      RunRules(text);
      break;
    case 2:
      RunLiteral(text);
      break;
    case 3:
      RunSpecs(text);
      break;
    default:
      RunNpy(text);
      break;
  }
}

}  // namespace irt::fuzz
