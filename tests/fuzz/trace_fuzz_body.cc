// The trace fuzzer's body: every read-side entry point of libtrace over one
// byte string, with work bounded so that one input stays fast.
#include "trace_fuzz_body.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "irt/check.h"
#include "irt/graph.h"
#include "irt/output.h"
#include "irt/print.h"
#include "irt/trace.h"

namespace irt::fuzz {

namespace {

// Nodes formatted per input, and the largest body on which the quadratic
// queries (Dependents, Forward) run.
constexpr size_t kNodeBudget = 4096;
constexpr size_t kQueryBodyLimit = 128;

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

// The checker takes a path: give it a memfd (mapped, like a regular file).
void CheckMapped(const uint8_t* data, size_t size) {
  static int fd = memfd_create("irt-fuzz", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0) return;
  size_t done = 0;
  while (done < size) {
    ssize_t w = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
  (void)CheckTrace("/dev/fd/" + std::to_string(fd));
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
    }
  }
  CheckMapped(data, size);
  CheckPiped(data, size);
}

}  // namespace irt::fuzz
