// An outside program that records itself with the installed irt/record.h
// (irtrace::record): model(x, n, k) calls square(x) in the first k rounds
// of a loop and sin(x) in the others, so its trace has nested calls, a
// loop with block arguments and a branch:
//   model(x, n, k) = k x^2 + (n - k) sin(x)   for 0 <= k <= n.
//
//   recorder X N K TRACE    prints the result, writes the trace
#include <irt/record.h>

#include <cstdio>
#include <string>

using irt::rec::Int;
using irt::rec::Real;

Real square(Real x) {
  IRT_FUNCTION(square, x);
  return IRT_RETURN(x * x);
}

Real model(Real x, Int n, Int k) {
  IRT_FUNCTION(model, x, n, k);
  Real r = 0.0;
  Int i = 0;
  while (IRT_WHILE(i, r)(i < n)) {
    if (IRT_IF(i < k)) {
      r = r + square(x);
    } else {
      r = r + sin(x);
    }
    i = i + 1;
  }
  return IRT_RETURN(r);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: recorder X N K TRACE\n");
    return 2;
  }
  irt::rec::Recorder rec(argv[4]);
  Real y = rec.Run(model, std::stod(argv[1]), std::stoll(argv[2]), std::stoll(argv[3]));
  irt::Status s = rec.Finish();
  if (!s.ok()) {
    std::fprintf(stderr, "recorder: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("%.17g\n", y.value());
  return 0;
}
