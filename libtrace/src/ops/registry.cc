// The standard operation set, one row per operation (irt/ops.h). Adding an
// operation: a row here (and, for a new scalar function, its case in
// scalar_ops.h), its derivative rule in rules/default.rules, and a test.
#include <algorithm>
#include <array>

#include "ops_internal.h"

namespace irt {

namespace {

using ops::SOp;
constexpr uint8_t V = kOpVariadic;
constexpr uint32_t E = kOpElementwise;
constexpr uint32_t L = kOpLinear;
constexpr uint32_t N = kOpNondiff;
constexpr uint32_t R = kOpRandom;

constexpr uint8_t S(SOp s) { return static_cast<uint8_t>(s); }

// An elementwise row: scalars by their scalar evaluation, tensors element by
// element with broadcasting.
constexpr OpDef Elem(std::string_view name, uint8_t arity, uint32_t flags, SOp s,
                     std::string_view signature, std::string_view meaning) {
  return OpDef{name,
               arity,
               arity,
               E | flags,
               S(s),
               (flags & N) ? std::string_view() : name,
               ops::ScalarElementwise,
               ops::TensorElementwise,
               meaning,
               signature};
}

// A row whose one evaluation takes scalars and tensors alike.
constexpr OpDef Op(std::string_view name, uint8_t min, uint8_t max, uint32_t flags, OpFn fn,
                   std::string_view signature, std::string_view meaning) {
  return OpDef{name, min, max,     flags,    0, (flags & (N | R)) ? std::string_view() : name,
               fn,   fn,  meaning, signature};
}

Result<Value> RandomDraw(const OpDef& op, OpArgs) {
  return Unsupported("'" + std::string(op.name) + "' is a random draw; its value is only recorded");
}

// Sorted by name, then by arity.
constexpr auto kOps = std::to_array<OpDef>({
    Elem("!", 1, N, SOp::kNot, "!a", "logical not of a Bool"),
    Elem("!=", 2, N, SOp::kNe, "a != b", "not equal (as ==)"),
    Elem("&", 2, N, SOp::kNone, "a & b", "bitwise and of integers, logical and of Bools"),
    Elem("*", 2, 0, SOp::kMul, "a * b", "product"),
    Elem("+", 2, L, SOp::kAdd, "a + b", "sum"),
    Elem("-", 1, L, SOp::kNeg, "-a", "negation"),
    Elem("-", 2, L, SOp::kSub, "a - b", "difference"),
    Elem("/", 2, 0, SOp::kDiv, "a / b", "quotient, always floating point"),
    Elem("<", 2, N, SOp::kLt, "a < b", "less than (exact between integers and floats)"),
    Elem("<=", 2, N, SOp::kLe, "a <= b", "less than or equal"),
    Elem("==", 2, N, SOp::kEq, "a == b",
         "equal: numbers exactly, strings and tuples as wholes, tensors element by element"),
    Elem(">", 2, N, SOp::kGt, "a > b", "greater than"),
    Elem(">=", 2, N, SOp::kGe, "a >= b", "greater than or equal"),
    Elem("^", 2, 0, SOp::kPow, "a ^ b", "power (an integer to a negative power is an error)"),
    Elem("abs", 1, 0, SOp::kAbs, "abs(a)", "absolute value"),
    Elem("acos", 1, 0, SOp::kAcos, "acos(a)", "arc cosine (NaN outside [-1, 1])"),
    Elem("acosh", 1, 0, SOp::kAcosh, "acosh(a)", "inverse hyperbolic cosine (NaN below 1)"),
    Op("addindex", 3, V, L, ops::AddIndex, "addindex(x, v, i...)",
       "x with v added to element i... (the adjoint of getindex)"),
    Op("additem", 3, V, L, ops::AddItem, "additem(x, v, i...)",
       "x with v added to its item i... (the adjoint of getitem)"),
    Elem("asin", 1, 0, SOp::kAsin, "asin(a)", "arc sine (NaN outside [-1, 1])"),
    Elem("asinh", 1, 0, SOp::kAsinh, "asinh(a)", "inverse hyperbolic sine"),
    Elem("atan", 1, 0, SOp::kAtan, "atan(a)", "arc tangent"),
    Elem("atan2", 2, 0, SOp::kAtan2, "atan2(y, x)", "angle of the point (x, y), in (-pi, pi]"),
    Elem("atanh", 1, 0, SOp::kAtanh, "atanh(a)", "inverse hyperbolic tangent"),
    Op("broadcast_to", 2, 2, L, ops::BroadcastTo, "broadcast_to(x, like)",
       "x stretched to the shape of like, as broadcasting does"),
    Op("cat", 3, V, L, ops::Cat, "cat(d, x1, x2, ...)",
       "tensors joined along dimension d; tuples (d = 1) joined: their items in order, "
       "derivatives passing through item by item"),
    Elem("cbrt", 1, 0, SOp::kCbrt, "cbrt(a)", "cube root (real, also below 0)"),
    // Derivatives pass through in the engine, item by item, as for tuple.
    OpDef{"collect",
          1,
          1,
          kOpTuple | L,
          0,
          {},
          ops::Collect,
          ops::Collect,
          "a vector of a tuple's numbers, in the type that holds them all (as cat)",
          "collect(t)"},
    Elem("cos", 1, 0, SOp::kCos, "cos(a)", "cosine"),
    Elem("cosh", 1, 0, SOp::kCosh, "cosh(a)", "hyperbolic cosine"),
    Op("cumsum", 1, 2, L, ops::Cumsum, "cumsum(x[, d])",
       "running sums along dimension d (of a vector when d is left out), added in order"),
    Elem("digamma", 1, 0, SOp::kDigamma, "digamma(a)", "the derivative of lgamma"),
    Elem("div", 2, N, SOp::kNone, "div(a, b)", "quotient rounded toward zero (C's /)"),
    Op("dot", 2, 2, 0, ops::Dot, "dot(x, y)", "sum of the products of two vectors' elements"),
    Elem("erf", 1, 0, SOp::kErf, "erf(a)", "error function"),
    Elem("erfc", 1, 0, SOp::kErfc, "erfc(a)", "1 - erf(a), accurate for large a"),
    Elem("exp", 1, 0, SOp::kExp, "exp(a)", "exponential"),
    Elem("exp2", 1, 0, SOp::kExp2, "exp2(a)", "2 to the power a"),
    Elem("expm1", 1, 0, SOp::kExpm1, "expm1(a)", "exp(a) - 1, accurate near 0"),
    Op("fill", 1, V, 0, ops::Fill, "fill(v, dims...)", "a tensor of the given dimensions, all v"),
    Elem("fld", 2, N, SOp::kFld, "fld(a, b)", "quotient rounded toward -Inf (Python's //)"),
    Op("getindex", 2, V, L, ops::GetIndex, "getindex(x, i...)",
       "element i... of a tensor (1-based; one index is row-major linear), item i of a tuple"),
    Op("getitem", 2, V, L, ops::GetItem, "getitem(x, i...)",
       "Python's x[i, ...]: 0-based, negative from the end, nothing for a whole dimension "
       "(`:`); k indices into a tensor of n dimensions give the tensor of the dimensions taken "
       "whole and its last n - k (the element when all k = n are integers); item i of a tuple"),
    Op("getslice", 4, 5, L, ops::GetSlice, "getslice(x, d, start, stop[, step])",
       "Python's x[start:stop:step] along dimension d: 0-based, stop excluded, negative from "
       "the end, nothing for the default, clamped to the dimension; of a tuple when d = 1"),
    Elem("hypot", 2, 0, SOp::kHypot, "hypot(a, b)", "sqrt(a^2 + b^2) without overflow"),
    Elem("identity", 1, L, SOp::kCopy, "identity(a)", "a itself"),
    Elem("ifelse", 3, 0, SOp::kIfElse, "ifelse(c, a, b)",
         "a where c is true, b where it is false (elementwise on tensors)"),
    Op("length", 1, 1, N, ops::Length, "length(x)",
       "number of elements of a tensor or tuple; 1 for a number"),
    Elem("lgamma", 1, 0, SOp::kLgamma, "lgamma(a)",
         "log of the absolute value of the gamma function"),
    Elem("log", 1, 0, SOp::kLog, "log(a)", "natural logarithm (NaN below 0)"),
    Elem("log10", 1, 0, SOp::kLog10, "log10(a)", "base-10 logarithm"),
    Elem("log1p", 1, 0, SOp::kLog1p, "log1p(a)", "log(1 + a), accurate near 0"),
    Elem("log2", 1, 0, SOp::kLog2, "log2(a)", "base-2 logarithm"),
    Op("matmul", 2, 2, 0, ops::Matmul, "matmul(A, B)",
       "matrix product; a vector is a column (matrix times vector is a vector)"),
    Elem("max", 2, 0, SOp::kMax, "max(a, b)", "the larger (NaN if either is; -0.0 < 0.0)"),
    Op("maximum", 1, 2, 0, ops::Reduce, "maximum(x[, d])",
       "largest element, or largest along dimension d"),
    Op("mean", 1, 2, L, ops::Reduce, "mean(x[, d])", "mean of the elements, or along dimension d"),
    Elem("min", 2, 0, SOp::kMin, "min(a, b)", "the smaller (NaN if either is; -0.0 < 0.0)"),
    Op("minimum", 1, 2, 0, ops::Reduce, "minimum(x[, d])",
       "smallest element, or smallest along dimension d"),
    Elem("mod", 2, 0, SOp::kMod, "mod(a, b)", "remainder with the sign of b (Python's %)"),
    Elem("one", 1, N, SOp::kOne, "one(a)", "1 of a's type (ones shaped like a tensor)"),
    Op("ones", 0, V, N, ops::Fill, "ones(dims...)", "a Float64 tensor of ones"),
    Elem("polygamma", 2, 0, SOp::kPolygamma, "polygamma(n, a)",
         "the n-th derivative of digamma (n = 0, 1, ..., 100; NaN below x = -10^4)"),
    Op("rand", 0, 0, R, RandomDraw, "rand()", "a uniform draw from [0, 1)"),
    Op("randn", 0, 0, R, RandomDraw, "randn()", "a standard normal draw"),
    Elem("rem", 2, 0, SOp::kRem, "rem(a, b)", "remainder with the sign of a (C's %)"),
    Op("reshape", 2, V, L, ops::Reshape, "reshape(x, dims...)",
       "x with new dimensions, elements in row-major order"),
    Elem("sign", 1, N, SOp::kSign, "sign(a)", "-1, 0 or 1 (NaN stays NaN)"),
    Elem("sin", 1, 0, SOp::kSin, "sin(a)", "sine"),
    Elem("sinh", 1, 0, SOp::kSinh, "sinh(a)", "hyperbolic sine"),
    Op("size", 1, 2, N, ops::Size, "size(x[, d])", "dimensions as a tuple, or dimension d"),
    Op("slice", 4, 5, L, ops::Slice, "slice(x, d, first, last[, step])",
       "elements first, first + step, ..., last (1-based, inclusive) along dimension d"),
    Elem("sqrt", 1, 0, SOp::kSqrt, "sqrt(a)", "square root (NaN below 0)"),
    Op("sum", 1, 2, L, ops::Reduce, "sum(x[, d])", "sum of the elements, or along dimension d"),
    Op("sum_to", 2, 2, L, ops::SumTo, "sum_to(x, like)",
       "x summed over the dimensions broadcasting stretched, to the shape of like"),
    Elem("tan", 1, 0, SOp::kTan, "tan(a)", "tangent"),
    Elem("tanh", 1, 0, SOp::kTanh, "tanh(a)", "hyperbolic tangent"),
    Op("transpose", 1, 1, L, ops::Transpose, "transpose(x)",
       "a matrix transposed; a vector becomes a 1×n matrix"),
    // Derivatives pass through tuples in the engine, item by item, not by a
    // rule (a tuple's adjoint is a tuple of its items').
    OpDef{"tuple",
          0,
          V,
          kOpTuple | L,
          0,
          {},
          ops::MakeTuple,
          ops::MakeTuple,
          "a tuple of the arguments",
          "tuple(a...)"},
    Op("ungetslice", 5, 6, L, ops::UngetSlice, "ungetslice(t, x, d, start, stop[, step])",
       "zeros shaped like x with t added where getslice takes its elements (its adjoint)"),
    Op("unslice", 5, 6, L, ops::Unslice, "unslice(t, x, d, first, last[, step])",
       "zeros shaped like x with t added where slice takes its elements (its adjoint)"),
    Elem("xor", 2, N, SOp::kNone, "xor(a, b)", "bitwise exclusive or"),
    Elem("zero", 1, N, SOp::kZero, "zero(a)", "0 of a's type (zeros shaped like a tensor)"),
    Op("zeros", 0, V, N, ops::Fill, "zeros(dims...)", "a Float64 tensor of zeros"),
    Elem("|", 2, N, SOp::kNone, "a | b", "bitwise or of integers, logical or of Bools"),
});

constexpr bool Sorted() {
  for (size_t i = 1; i < kOps.size(); ++i) {
    if (kOps[i].name < kOps[i - 1].name) return false;
    if (kOps[i].name == kOps[i - 1].name && kOps[i].min_arity <= kOps[i - 1].max_arity) {
      return false;
    }
  }
  return true;
}
static_assert(Sorted(), "rows sorted by name, then by arity, arities disjoint");

}  // namespace

std::span<const OpDef> StandardOps() { return kOps; }

const OpDef* FindOp(std::string_view name, size_t arity) {
  auto it = std::lower_bound(kOps.begin(), kOps.end(), name,
                             [](const OpDef& d, std::string_view n) { return d.name < n; });
  for (; it != kOps.end() && it->name == name; ++it) {
    if (it->TakesArity(arity)) return &*it;
  }
  return nullptr;
}

const OpDef* FindOp(std::string_view name) {
  auto it = std::lower_bound(kOps.begin(), kOps.end(), name,
                             [](const OpDef& d, std::string_view n) { return d.name < n; });
  return it != kOps.end() && it->name == name ? &*it : nullptr;
}

std::string NoMethodMessage(std::string_view name, OpArgs args) {
  std::string m = "MethodError: no method matching ";
  m += name;
  m += '(';
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) m += ", ";
    m += "::";
    m += TypeName(args[i]);
  }
  m += ')';
  return m;
}

Result<Value> ApplyOp(const OpDef& op, OpArgs args) {
  if (op.tensor != nullptr) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].kind() == VKind::kTensor) return op.tensor(op, args);
    }
  }
  return op.scalar(op, args);
}

Result<Value> ApplyOp(std::string_view name, OpArgs args) {
  const OpDef* op = FindOp(name, args.size());
  if (op == nullptr) {
    if (FindOp(name) != nullptr) return RuntimeError(NoMethodMessage(name, args));
    return NotFound("no operation '" + std::string(name) + "' in the standard set");
  }
  return ApplyOp(*op, args);
}

namespace internal {

SOp ScalarOpFor(std::string_view op, size_t arity) {
  const OpDef* d = FindOp(op, arity);
  if (d == nullptr) return SOp::kNone;
  SOp s = static_cast<SOp>(d->scalar_op);
  if (s != SOp::kNone) return s;
  // On scalars these are the identity.
  if (op == "transpose" || op == "sum" || op == "mean" || op == "maximum" || op == "minimum" ||
      op == "sum_to" || op == "broadcast_to") {
    return arity == 1 || op == "sum_to" || op == "broadcast_to" ? SOp::kCopy : SOp::kNone;
  }
  return SOp::kNone;
}

}  // namespace internal

}  // namespace irt
