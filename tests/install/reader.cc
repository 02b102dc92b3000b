// An example program that uses an installed libtrace: opens a trace, walks
// its call tree and prints the root call's result, how many nodes and calls
// it holds, how deep the calls nest, and the root call's body as irt-print
// lists it. tests/install/run.sh builds it against the installed CMake
// package (static and shared) and through pkg-config, and compares what it
// prints with what the installed tools say about the same trace.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "irt/graph.h"
#include "irt/print.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace {

irt::Status Run(const std::string& path) {
  IRT_ASSIGN_OR_RETURN(irt::Trace trace, irt::Trace::Open(path));
  IRT_ASSIGN_OR_RETURN(irt::Child root, irt::RootCall(trace));
  // The call's result is the value of the node that closes it.
  IRT_ASSIGN_OR_RETURN(irt::NodeView end, trace.node(root.end));
  irt::Value result = end.value();
  std::printf("result: %s::%s\n", irt::FormatValue(result).c_str(), irt::TypeName(result).c_str());

  // Every node under the root, with an explicit stack of (call, depth).
  uint64_t nodes = 1, calls = 1, max_depth = 1;
  std::vector<std::pair<irt::Child, uint64_t>> stack = {{root, 1}};
  while (!stack.empty()) {
    auto [call, depth] = stack.back();
    stack.pop_back();
    IRT_ASSIGN_OR_RETURN(std::vector<irt::Child> children, irt::Children(trace, call));
    for (const irt::Child& child : children) {
      ++nodes;
      if (child.is_call()) {
        ++calls;
        max_depth = std::max(max_depth, depth + 1);
        stack.emplace_back(child, depth + 1);
      }
    }
  }
  std::printf("nodes: %llu\ncalls: %llu\nmax depth: %llu\n", static_cast<unsigned long long>(nodes),
              static_cast<unsigned long long>(calls), static_cast<unsigned long long>(max_depth));

  IRT_ASSIGN_OR_RETURN(irt::CallBody body, irt::CallBody::Load(trace, root));
  irt::PrintOptions opts;
  for (size_t pos = 0; pos < body.size(); ++pos) {
    IRT_ASSIGN_OR_RETURN(std::string line, irt::FormatNode(trace, body, pos, opts));
    std::printf("%s\n", line.c_str());
  }
  return irt::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TRACE\n", argv[0]);
    return 2;
  }
  irt::Status status = Run(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], status.message().c_str());
    return 1;
  }
  return 0;
}
