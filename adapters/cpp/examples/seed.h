// The seed's programs written with irt/record.h: f(x) = sin(x) + x, the
// loop h(x, n) = sum of x^i for i < n, and the recursion geom(n, beta) =
// rand() < beta ? n : geom(n + 1, beta); plus a call chain that throws.
#ifndef IRT_RECORD_EXAMPLES_SEED_H_
#define IRT_RECORD_EXAMPLES_SEED_H_

#include <random>
#include <stdexcept>

#include "irt/record.h"

namespace seed {

using irt::rec::Bool;
using irt::rec::Int;
using irt::rec::Real;

inline Real f(Real x) {
  IRT_FUNCTION(f, x);
  return IRT_RETURN(sin(x) + x);
}

inline Real h(Real x, Int n) {
  IRT_FUNCTION(h, x, n);
  Real r = 0.0;
  Int i = 0;
  while (IRT_WHILE(i, r)(i < n)) {
    r = r + pow(x, i);
    i = i + 1;
  }
  return IRT_RETURN(r);
}

inline Int geom(Int n, Real beta, std::mt19937_64& rng) {
  IRT_FUNCTION(geom, n, beta);
  if (IRT_IF(irt::rec::rand(rng) < beta)) return IRT_RETURN(n);
  return IRT_RETURN(geom(n + 1, beta, rng));
}

// fails(x) calls g1, which calls g2, which throws when x > 1.
inline Real g2(Real x) {
  IRT_FUNCTION(g2, x);
  Real y = x * x;
  if (IRT_IF(y > 1.0)) throw std::domain_error("g2: x * x > 1");
  return IRT_RETURN(sqrt(1.0 - y));
}
inline Real g1(Real x) {
  IRT_FUNCTION(g1, x);
  return IRT_RETURN(g2(x + 0.5) * 2.0);
}
inline Real fails(Real x) {
  IRT_FUNCTION(fails, x);
  Real y = cos(x);
  return IRT_RETURN(g1(y + x) + y);
}

}  // namespace seed

#endif  // IRT_RECORD_EXAMPLES_SEED_H_
