// The trace fuzzer's body: every read-side entry point of libtrace over one
// byte string, and the analyses of the tools (irt-grad, irt-slice, irt-diff,
// irt-replay, irt-stats, irt-dot), with work bounded so that one input stays
// fast.
#include "trace_fuzz_body.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "irt/check.h"
#include "irt/convert.h"
#include "irt/diff.h"
#include "irt/dot.h"
#include "irt/export.h"
#include "irt/grad.h"
#include "irt/graph.h"
#include "irt/output.h"
#include "irt/print.h"
#include "irt/replay.h"
#include "irt/rules.h"
#include "irt/slice.h"
#include "irt/stats.h"
#include "irt/trace.h"
#include "trace_mutator.h"

namespace irt::fuzz {

namespace {

// Nodes formatted per input, and the largest body on which the quadratic
// queries (Dependents, Forward) run.
constexpr size_t kNodeBudget = 4096;
constexpr size_t kQueryBodyLimit = 128;
// The largest trace on which the tools' analyses run.
constexpr uint64_t kAnalysisNodeLimit = 4096;

void WalkNode(const Trace& trace, const CallBody& body, size_t pos) {
  PrintOptions opts;
  (void)FormatNode(trace, body, pos, opts);
  (void)body.Referenced(pos);
  (void)body.ReferencedNumbered(pos);
  if (body.size() <= kQueryBodyLimit) {
    (void)body.Backward(pos);
    (void)body.Dependents(pos);
    (void)body.Forward(pos);
  }
  Child c = body[pos];
  auto v = trace.node(c.id);
  if (!v.ok()) return;
  (void)v->value();
  (void)v->meta();
  (void)v->location();
  (void)v->closes();
  for (size_t i = 0; i < v->num_operands(); ++i) (void)v->operand(i);
  if (!v->op().empty()) (void)trace.FunctionIR(v->op(), c.id);
}

// Depth-first over the call tree with an explicit stack.
void WalkTree(const Trace& trace) {
  auto root = RootCall(trace);
  if (!root.ok()) return;
  size_t budget = kNodeBudget;
  std::vector<Child> stack{*root};
  while (!stack.empty() && budget > 0) {
    Child call = stack.back();
    stack.pop_back();
    auto body = CallBody::Load(trace, call);
    if (!body.ok()) continue;
    (void)Children(trace, call);
    for (size_t pos = 0; pos < body->size() && budget > 0; ++pos, --budget) {
      WalkNode(trace, *body, pos);
      Child c = (*body)[pos];
      if (pos < 4) (void)Parent(trace, c.id);
      if (c.is_call()) stack.push_back(c);
    }
  }
  (void)ResolvePath(trace, "@2/@1");
}

void Print(const Trace& trace) {
  auto out = Output::Open("-");  // standard output: /dev/null while fuzzing
  if (!out.ok()) return;
  PrintOptions opts;
  (void)PrintText(trace, opts, **out);
  opts.levels = 2;
  opts.node_path = "@2";
  (void)PrintText(trace, opts, **out);
  PrintOptions json;
  (void)PrintJson(trace, json, **out);
  (void)trace.trace_meta();
  (void)trace.producer_name();
  (void)(*out)->Commit();
}

// The checker and irt-stats take a path: give them a memfd (mapped, like a
// regular file).
void CheckMapped(const uint8_t* data, size_t size) {
  static int fd = memfd_create("irt-fuzz", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0) return;
  size_t done = 0;
  while (done < size) {
    ssize_t w = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
  std::string path = "/dev/fd/" + std::to_string(fd);
  (void)CheckTrace(path);
  auto out = Output::Open("/dev/null");
  if (!out.ok()) return;
  StatsOptions opts;
  (void)PrintStats(path, opts, false, **out);
  opts.chunks = true;
  opts.top = 3;
  (void)PrintStats(path, opts, true, **out);
  // irt-export streams the path too, in every format.
  for (ExportFormat f : {ExportFormat::kJsonl, ExportFormat::kSpeedscope,
                         ExportFormat::kChromeTrace, ExportFormat::kPython, ExportFormat::kC}) {
    ExportOptions eo;
    eo.format = f;
    eo.max_elements = 64;
    (void)ExportTrace(path, eo, **out);
  }
  // irt-convert into both formats; what it writes of a valid trace is one.
  for (uint16_t major : {uint16_t{1}, uint16_t{2}}) {
    ConvertOptions co;
    co.format_major = major;
    std::unique_ptr<Output> mem = Output::Memory();
    if (ConvertTrace(path, *mem, co).ok() && mem->Commit().ok() && CheckTrace(path).ok()) {
      const std::string& bytes = mem->memory();
      Result<Trace> again = Trace::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()),
                                             bytes.size(), "converted");
      if (!again.ok()) __builtin_trap();
      for (uint32_t i = 0; i < again->chunks().size(); ++i) {
        if (!again->VerifyChunk(i).ok()) __builtin_trap();
      }
    }
  }
}

const RuleSet& DefaultRules() {
  static const RuleSet* rules = [] {
    auto r = RuleSet::Load(std::string(IRT_SOURCE_DIR) + "/rules/default.rules");
    return new RuleSet(r.ok() ? std::move(r).value() : RuleSet());
  }();
  return *rules;
}

void Grad(const Trace& trace, Output& out) {
  GradOptions reverse;
  auto r = Differentiate(trace, DefaultRules(), reverse);
  if (r.ok()) (void)PrintGradient(*r, {}, out);
  reverse.keep_adjoints = true;
  (void)EmitGradientTrace(trace, DefaultRules(), reverse, out);
  // The passes again, then the trace copied with each node's adjoint, in
  // the smallest set of decoded chunks (every chunk given back and decoded
  // again as the walks come back to it).
  GradOptions annotate;
  annotate.column_budget = 1;
  (void)WriteAnnotated(trace, DefaultRules(), annotate, out);
  GradOptions forward;
  forward.mode = GradMode::kForward;
  forward.tangents = {{2, Value::F64(1.0)}};
  auto f = Differentiate(trace, DefaultRules(), forward);
  if (f.ok()) (void)PrintGradient(*f, {.json = true}, out);
}

void Slices(const Trace& trace, Output& out) {
  for (const char* path : {"@", "@2", "@3/@2"}) {
    for (int variant = 0; variant < 3; ++variant) {
      SliceOptions opts;
      opts.direction = variant == 1 ? SliceDirection::kForward : SliceDirection::kBackward;
      opts.through_calls = variant != 0;
      opts.control = variant == 2;
      auto slice = ComputeSlice(trace, path, opts);
      if (!slice.ok()) continue;
      (void)PrintSliceList(trace, *slice, {}, out);
      if (variant == 2) {
        (void)WriteSliceTrace(trace, *slice, out);
        DotOptions dot;
        dot.max_nodes = 200;
        dot.highlight = &*slice;
        (void)WriteDot(trace, dot, out);
      }
    }
  }
}

void Diff(const Trace& trace, const uint8_t* data, size_t size, Output& out) {
  DiffOptions opts;
  opts.max_edits = 200;
  (void)DiffTraces(trace, trace, opts, out);
  std::vector<uint8_t> other = MutateTrace({data, size}, size, size + 4096);
  auto b = Trace::FromBytes(other.data(), other.size(), "fuzz-b", {.allow_partial = true});
  if (!b.ok() || b->size() > kAnalysisNodeLimit) return;
  (void)DiffTraces(trace, *b, opts, out);
  opts.format = DiffFormat::kJson;
  (void)DiffTraces(*b, trace, opts, out);
}

void ReplayWithChange(const Trace& trace, Output& out) {
  for (const char* spec : {"@2=2.5", "@2=-1", "@3=0.0"}) {
    auto change = ParseReplayChange(spec);
    if (!change.ok()) continue;
    auto r = Replay::Run(trace, std::span<const ReplayChange>(&*change, 1));
    if (r.ok() && r->has_output()) (void)r->Write(out);
  }
}

// The tools' analyses, on traces small enough to keep one input fast.
void Analyses(const Trace& trace, const uint8_t* data, size_t size) {
  if (trace.size() > kAnalysisNodeLimit) return;
  auto out = Output::Open("/dev/null");
  if (!out.ok()) return;
  Grad(trace, **out);
  Slices(trace, **out);
  Diff(trace, data, size, **out);
  ReplayWithChange(trace, **out);
  DotOptions dot;
  dot.max_nodes = 300;
  (void)WriteDot(trace, dot, **out);
}

// ...and a pipe (read chunk by chunk), when the input fits in its buffer.
void CheckPiped(const uint8_t* data, size_t size) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return;
  int cap = fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
  if (cap < 0) cap = fcntl(p[1], F_GETPIPE_SZ);
  bool ok = cap > 0 && size <= static_cast<size_t>(cap);
  size_t done = 0;
  while (ok && done < size) {
    ssize_t w = write(p[1], data + done, size - done);
    if (w <= 0)
      ok = false;
    else
      done += static_cast<size_t>(w);
  }
  close(p[1]);
  if (ok) (void)CheckTrace("/dev/fd/" + std::to_string(p[0]));
  close(p[0]);
}

}  // namespace

void RunOne(const uint8_t* data, size_t size) {
  {
    auto trace = Trace::FromBytes(data, size, "fuzz", {.allow_partial = true});
    if (trace.ok()) {
      WalkTree(*trace);
      Print(*trace);
      Analyses(*trace, data, size);
    }
  }
  CheckMapped(data, size);
  CheckPiped(data, size);
}

}  // namespace irt::fuzz
