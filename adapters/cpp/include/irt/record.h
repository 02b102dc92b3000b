// irt/record.h: recording real C++ programs as irtrace traces.
//
// Active scalar types (Real, Real32, Int, Bool) compute like double, float,
// int64_t and bool and record every operation applied to them as a
// Primitive node of the standard operation set, with its value and source
// location; IRT_FUNCTION opens a recorded call (closed by IRT_RETURN, by
// falling off the end, or with Error nodes when an exception unwinds
// through it); IRT_IF and IRT_WHILE record the branches taken as Jumps
// with their conditions and loop-carried block arguments, plus the
// control-flow facts that `irt-slice --control` and `irt-replay` read.
//
//   irt::rec::Real h(irt::rec::Real x, irt::rec::Int n) {
//     IRT_FUNCTION(h, x, n);
//     irt::rec::Real r = 0.0;
//     irt::rec::Int i = 0;
//     while (IRT_WHILE(i, r)(i < n)) {
//       r = r + pow(x, i);
//       i = i + 1;
//     }
//     return IRT_RETURN(r);
//   }
//
//   irt::rec::Recorder rec("h.fb");            // a file, "-" for stdout, or
//   rec.Run(h, 2.0, int64_t{2});               // Recorder::InMemory()
//   rec.Finish();                              // then: irt-print h.fb
//
// Rules: active arguments are passed by value or const reference; a value
// computed in one recorded call and used in another (a global, a capture,
// an out-parameter) is recorded there as a Constant; `break`, `continue`
// and `goto` out of an IRT_WHILE loop are not seen (leave such loops
// through the condition). Plain numbers combined with active values are
// recorded as literals. A Recorder records the calls of its own thread.
#ifndef IRT_RECORD_H_
#define IRT_RECORD_H_

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <source_location>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "irt/output.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"
#include "irt/writer.h"

namespace irt::rec {

class Recorder;

/// A value that records the operations applied to it. `id` is the node
/// that computed it (kNoNode for a plain number), `serial` the recorded
/// call it belongs to, `pos` that node's SSA id.
template <class T>
struct Active {
  T v{};
  uint32_t serial = 0;
  uint32_t pos = 0;
  NodeId id = kNoNode;

  Active() = default;
  Active(T x) : v(x) {}  // NOLINT: plain numbers convert implicitly
  template <class U>
  requires(std::is_arithmetic_v<U> && !std::is_same_v<U, T> && !std::is_same_v<T, bool> &&
           !std::is_same_v<U, bool>) Active(U x)
      : v(static_cast<T>(x)) {}  // NOLINT
  /// The computed value (reading it records nothing).
  T value() const { return v; }
  bool recorded() const { return id != kNoNode; }
};

using Real = Active<double>;
using Real32 = Active<float>;
using Int = Active<int64_t>;
using Bool = Active<bool>;

/// What a tracking context sees of a call about to be made.
struct CallInfo {
  std::string_view callee;
  uint32_t level = 0;  // the root call is level 1, its calls level 2, ...
};

/// One recorded node, as Context::OnNode sees it.
struct NodeInfo {
  NodeId id = kNoNode;
  NodeKind kind = NodeKind::kPrimitive;
  std::string_view op;        // primitive or callee name; "" for none
  std::string_view function;  // the recorded function holding the node
  uint32_t line = 0, col = 0;
};

/// What is recorded, after IRTracker's contexts and irt-trace's options.
class Context {
 public:
  virtual ~Context() = default;
  /// Calls at this nesting level or deeper are recorded as one Primitive
  /// node (their values still computed); the root call is level 1 and is
  /// always recorded; 0: no limit.
  uint32_t max_depth = 0;
  /// Functions recorded as Primitive nodes wherever they are called.
  std::set<std::string, std::less<>> primitives;
  /// Random draws get metadata random = "uniform" / "normal".
  bool tag_random = false;

  /// Whether a call is recorded with its body. The default applies
  /// max_depth and primitives.
  virtual bool CanRecur(const CallInfo& call) const {
    if (max_depth != 0 && call.level >= max_depth) return false;
    return !primitives.contains(call.callee);
  }
  /// Whether OnNode is called at all (asked once per Recorder).
  virtual bool WantsNodes() const { return false; }
  /// Called after each node is appended; writer.AddMeta attaches metadata.
  virtual void OnNode(const NodeInfo& node, TraceWriter& writer) {
    (void)node;
    (void)writer;
  }
};

struct RecorderOptions {
  std::string producer = "irt-record";
  WriterOptions writer;
  /// Not owned; null: the default context.
  Context* context = nullptr;
  /// Trace metadata added to the final chunk.
  std::vector<std::pair<std::string, Value>> trace_meta;
};

namespace detail {

struct Function;

// The standard operations the front end records, and their names.
enum class Op : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kNeg,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kNot,
  kAnd,
  kOr,
  kSin,
  kCos,
  kTan,
  kExp,
  kLog,
  kSqrt,
  kTanh,
  kAbs,
  kAtan,
  kLog1p,
  kExpm1,
  kMax,
  kMin,
  kRand,
  kRandn,
  kConst,
  kMatmul,
  kSum,
  kTranspose,
  kGetindex,
  kReshape,
  kMean,
  kMaximum,  // last (detail::Evaluate sizes a table by it)
};
std::string_view OpName(Op op);

struct Loc {
  const char* file = nullptr;
  uint32_t line = 0, col = 0;
  static Loc Of(const std::source_location& l) { return {l.file_name(), l.line(), l.column()}; }
};

// The element types an Active may record (KindOf's cases).
template <class T>
constexpr bool Recordable() {
  return std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, float> ||
         std::is_same_v<T, double>;
}
template <class T>
constexpr VKind KindOf() {
  if constexpr (std::is_same_v<T, bool>)
    return VKind::kBool;
  else if constexpr (std::is_same_v<T, int64_t>)
    return VKind::kI64;
  else if constexpr (std::is_same_v<T, float>)
    return VKind::kF32;
  else
    return VKind::kF64;
}
template <class T>
uint64_t BitsOf(T v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? 1 : 0;
  else if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<uint64_t>(v);
  else if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<uint32_t>(v);
  else
    return std::bit_cast<uint64_t>(v);
}

// An operand as the recorder sees it: a node of some call, or a number.
struct Operand {
  uint32_t serial;
  uint32_t pos;
  NodeId id;
  VKind vk;
  uint64_t bits;
  const Value* big;  // a tensor's value (never a class literal), or null
};
template <class T>
Operand OperandOf(const Active<T>& a) {
  return {a.serial, a.pos, a.id, KindOf<T>(), BitsOf(a.v), nullptr};
}

extern constinit thread_local Recorder* t_current;

// A statement the recorder has seen, by source position, function and
// block: its node class, and which operands are literals of the class.
struct FastSlot {
  const char* file = nullptr;
  uint32_t line = 0, col = 0, fn = 0, block = 0;
  uint8_t op = 0;
  uint8_t mask = 0;
  uint32_t n = 0;
  ClassId cls = 0;
  uint32_t pos = 0;
  uint64_t lit[2] = {0, 0};
  VKind lit_vk[2] = {VKind::kNone, VKind::kNone};
};
inline constexpr uint32_t kFastSlots = 4096;
inline uint32_t FastSlotIndex(uint32_t line, uint32_t col, uint32_t block, uint8_t op) {
  uint32_t h =
      (line * 0x9E3779B1u) ^ (col * 0x85EBCA77u) ^ (block * 0xC2B2AE3Du) ^ (op * 0x27D4EB2Fu);
  return (h ^ (h >> 15)) & (kFastSlots - 1);
}

// The innermost recorded call as the inline path of the operators reads
// it; the recorder keeps it up to date (active: a call is open, recorded
// with its body, and no OnNode hook watches).
struct FastFrame {
  bool active = false;
  uint32_t serial = 0, fn = 0, block = 0;
  NodeId marker = 0;
  TraceWriter* w = nullptr;
  const FastSlot* slots = nullptr;
};
extern constinit thread_local FastFrame t_fast;

}  // namespace detail

/// Records one program run into a trace. Writes to a file (atomically, on
/// Finish), to standard output ("-"), to a FIFO, or to memory; holds at
/// most one chunk in memory plus the call stack.
class Recorder {
 public:
  explicit Recorder(const std::string& path, RecorderOptions options = {});
  /// A recorder whose trace is kept in memory (bytes() after Finish).
  static std::unique_ptr<Recorder> InMemory(RecorderOptions options = {});
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// Runs `f(args...)` as the root call (f must open it with IRT_FUNCTION)
  /// and returns its result. An exception from f is recorded (Error nodes,
  /// trace metadata status = "failed", error = its what()) and rethrown.
  template <class F, class... A>
  auto Run(F&& f, A&&... args) {
    Activate();
    struct Deactivate {
      Recorder* r;
      ~Deactivate() { r->Deactivate(); }
    } guard{this};
    try {
      return std::invoke(std::forward<F>(f), std::forward<A>(args)...);
    } catch (const std::exception& e) {
      Failed(e.what());
      throw;
    } catch (...) {
      Failed("an exception that is not a std::exception");
      throw;
    }
  }

  /// Writes the final chunk and commits the output. The first error of the
  /// recording (misuse, a failed write) or of the output.
  Status Finish();
  /// The trace, for an in-memory recorder after Finish.
  const std::string& bytes() const;
  /// The first error so far.
  Status status() const;
  /// Nodes appended so far.
  NodeId nodes() const;

  /// The recorder of this thread's Run, or null.
  static Recorder* current() { return detail::t_current; }

  // The front end's interface (used by the operators and macros below).
  struct Impl;
  Impl& impl() { return *impl_; }
  TraceWriter& writer();

 private:
  Recorder();
  void Activate();
  void Deactivate();
  void Failed(std::string_view what);
  std::unique_ptr<Impl> impl_;
};

namespace detail {

// Records `op` applied to `ops`, giving `result`; returns the node and
// its SSA id through *out (serial, pos, id), or leaves *out plain when
// nothing is recorded.
void Record(Op op, const Loc& loc, const Operand* ops, uint32_t n, VKind vk, uint64_t bits,
            uint32_t* serial, uint32_t* pos, NodeId* id, const Value* big = nullptr);

// The inline path of a statement seen before (its FastSlot): when every
// operand is a node of the innermost call or the class's literal, appends
// the node and returns true; false leaves the statement to Record. A
// tensor operand (bits 0, no literal of a class) must be a node.
[[gnu::always_inline]] inline bool AppendFast(Op op, const std::source_location& l, uint32_t n,
                                              const uint32_t* serial, const NodeId* ids,
                                              const uint64_t* bits, VKind vk, uint64_t result,
                                              uint32_t* out_serial, uint32_t* out_pos,
                                              NodeId* out_id) {
  const FastFrame& ff = t_fast;
  if (!ff.active) return false;
  const uint32_t line = l.line(), col = l.column();
  const FastSlot& s = ff.slots[FastSlotIndex(line, col, ff.block, static_cast<uint8_t>(op))];
  if (s.line != line || s.col != col || s.fn != ff.fn || s.block != ff.block ||
      s.op != static_cast<uint8_t>(op) || s.n != n || s.file != l.file_name()) {
    return false;
  }
  NodeId refs[2];
  uint32_t nr = 0;
  bool ok = true;
  for (uint32_t i = 0; i < n; ++i) {
    if (s.mask & (1u << i)) {
      ok = ok && ids[i] == kNoNode && bits[i] == s.lit[i];
    } else {
      ok = ok && serial[i] == ff.serial && ids[i] != kNoNode && ids[i] >= ff.marker;
      refs[nr++] = ids[i];
    }
  }
  if (!ok) return false;
  *out_id = ff.w->AppendScalar(s.cls, vk, result, refs, nr);
  *out_serial = ff.serial;
  *out_pos = s.pos;
  return true;
}

template <class R, class... T>
[[gnu::noinline]] Active<R> Apply(Op op, const std::source_location& l, R result,
                                  const Active<T>&... args) {
  Active<R> out(result);
  if constexpr (sizeof...(T) >= 1 && sizeof...(T) <= 2) {
    const uint32_t serial[] = {args.serial...};
    const NodeId ids[] = {args.id...};
    const uint64_t bits[] = {BitsOf(args.v)...};
    if (AppendFast(op, l, sizeof...(T), serial, ids, bits, KindOf<R>(), BitsOf(result), &out.serial,
                   &out.pos, &out.id)) {
      return out;
    }
  }
  if (t_current == nullptr) return out;
  Operand ops[] = {OperandOf(args)...};
  Record(op, Loc::Of(l), ops, sizeof...(T), KindOf<R>(), BitsOf(result), &out.serial, &out.pos,
         &out.id);
  return out;
}

// A first operand that remembers where the operation was written (the
// default argument is evaluated at the operator's use).
template <class T>
struct At {
  Active<T> a;
  std::source_location l;
  At(const Active<T>& x, std::source_location l = std::source_location::current()) : a(x), l(l) {}
  At(T x, std::source_location l = std::source_location::current()) : a(x), l(l) {}
};

// The same for an operand that must already be active (mixed Real and
// Int operations, where a plain number would be ambiguous).
template <class T>
struct AtActive {
  Active<T> a;
  std::source_location l;
  AtActive(const Active<T>& x, std::source_location l = std::source_location::current())  // NOLINT
      : a(x), l(l) {}
};

}  // namespace detail

// Arithmetic and comparisons, for Real, Real32 and Int: both operands
// active, or one a plain number.
#define IRT_REC_BINARY(T, OP, CODE, R, EXPR)                                                 \
  inline Active<R> operator OP(detail::At<T> x, const Active<T>& y) {                        \
    const T a = x.a.v, b = y.v;                                                              \
    return detail::Apply<R>(detail::Op::CODE, x.l, static_cast<R>(EXPR), x.a, y);            \
  }                                                                                          \
  template <class U>                                                                         \
  requires std::is_arithmetic_v<U>                                                           \
  inline Active<R> operator OP(detail::At<T> x, U plain) {                                   \
    const T a = x.a.v, b = static_cast<T>(plain);                                            \
    return detail::Apply<R>(detail::Op::CODE, x.l, static_cast<R>(EXPR), x.a, Active<T>(b)); \
  }
// == and != take the location from the right operand: with one overload
// per type, `x == 0`, `0 == x` (rewritten) and `x == y` all resolve.
#define IRT_REC_EQUALITY(T, OP, CODE, EXPR)                          \
  inline Bool operator OP(const Active<T>& x, detail::At<T> y) {     \
    const T a = x.v, b = y.a.v;                                      \
    return detail::Apply<bool>(detail::Op::CODE, y.l, EXPR, x, y.a); \
  }
#define IRT_REC_ARITH(T)                                                         \
  IRT_REC_BINARY(T, +, kAdd, T, a + b)                                           \
  IRT_REC_BINARY(T, -, kSub, T, a - b)                                           \
  IRT_REC_BINARY(T, *, kMul, T, a* b)                                            \
  IRT_REC_BINARY(T, <, kLt, bool, a < b)                                         \
  IRT_REC_BINARY(T, <=, kLe, bool, a <= b)                                       \
  IRT_REC_BINARY(T, >, kGt, bool, a > b)                                         \
  IRT_REC_BINARY(T, >=, kGe, bool, a >= b)                                       \
  IRT_REC_EQUALITY(T, ==, kEq, a == b)                                           \
  IRT_REC_EQUALITY(T, !=, kNe, a != b)                                           \
  inline Active<T> operator-(detail::At<T> x) {                                  \
    return detail::Apply<T>(detail::Op::kNeg, x.l, static_cast<T>(-x.a.v), x.a); \
  }
IRT_REC_ARITH(double)
IRT_REC_ARITH(float)
IRT_REC_ARITH(int64_t)
IRT_REC_BINARY(double, /, kDiv, double, a / b)
IRT_REC_BINARY(float, /, kDiv, float, a / b)
#undef IRT_REC_ARITH

// Real with Int: the integer promotes to Float64, as the standard set's
// arithmetic and exact comparisons do.
#define IRT_REC_MIXED(OP, CODE, R)                                                  \
  inline Active<R> operator OP(detail::AtActive<double> x, const Int& y) {          \
    const double a = x.a.v, b = static_cast<double>(y.v);                           \
    return detail::Apply<R>(detail::Op::CODE, x.l, static_cast<R>(a OP b), x.a, y); \
  }                                                                                 \
  inline Active<R> operator OP(detail::AtActive<int64_t> x, const Real& y) {        \
    const double a = static_cast<double>(x.a.v), b = y.v;                           \
    return detail::Apply<R>(detail::Op::CODE, x.l, static_cast<R>(a OP b), x.a, y); \
  }
IRT_REC_MIXED(+, kAdd, double)
IRT_REC_MIXED(-, kSub, double)
IRT_REC_MIXED(*, kMul, double)
IRT_REC_MIXED(/, kDiv, double)
IRT_REC_MIXED(<, kLt, bool)
IRT_REC_MIXED(<=, kLe, bool)
IRT_REC_MIXED(>, kGt, bool)
IRT_REC_MIXED(>=, kGe, bool)
#undef IRT_REC_MIXED
/// Int / Int is Float64 (the standard `/`).
inline Real operator/(detail::AtActive<int64_t> x, const Int& y) {
  return detail::Apply<double>(detail::Op::kDiv, x.l,
                               static_cast<double>(x.a.v) / static_cast<double>(y.v), x.a, y);
}

#undef IRT_REC_BINARY

// Bool: !, &, | (both operands evaluated: no short circuit is recorded).
inline Bool operator!(detail::At<bool> x) {
  return detail::Apply<bool>(detail::Op::kNot, x.l, !x.a.v, x.a);
}
inline Bool operator&(detail::At<bool> x, const Bool& y) {
  return detail::Apply<bool>(detail::Op::kAnd, x.l, x.a.v && y.v, x.a, y);
}
inline Bool operator|(detail::At<bool> x, const Bool& y) {
  return detail::Apply<bool>(detail::Op::kOr, x.l, x.a.v || y.v, x.a, y);
}

// Floating-point functions of Real and Real32.
#define IRT_REC_UNARY(NAME, CODE)                                                     \
  template <class T>                                                                  \
  requires std::is_floating_point_v<T> Active<T> NAME(                                \
      const Active<T>& x, std::source_location l = std::source_location::current()) { \
    return detail::Apply<T>(detail::Op::CODE, l, static_cast<T>(std::NAME(x.v)), x);  \
  }
IRT_REC_UNARY(sin, kSin)
IRT_REC_UNARY(cos, kCos)
IRT_REC_UNARY(tan, kTan)
IRT_REC_UNARY(exp, kExp)
IRT_REC_UNARY(log, kLog)
IRT_REC_UNARY(sqrt, kSqrt)
IRT_REC_UNARY(tanh, kTanh)
IRT_REC_UNARY(abs, kAbs)
IRT_REC_UNARY(atan, kAtan)
IRT_REC_UNARY(log1p, kLog1p)
IRT_REC_UNARY(expm1, kExpm1)
#undef IRT_REC_UNARY

/// x ^ y (the standard `^`): a Real or Real32 to an active or plain power
/// of its own type or an Int.
template <class T>
requires std::is_floating_point_v<T> Active<T> pow(
    const Active<T>& x, const Active<T>& y,
    std::source_location l = std::source_location::current()) {
  return detail::Apply<T>(detail::Op::kPow, l, static_cast<T>(std::pow(x.v, y.v)), x, y);
}
template <class T>
requires std::is_floating_point_v<T> Active<T> pow(
    const Active<T>& x, const Int& y, std::source_location l = std::source_location::current()) {
  return detail::Apply<T>(detail::Op::kPow, l, static_cast<T>(std::pow(x.v, y.v)), x, y);
}
template <class T>
requires std::is_floating_point_v<T> Active<T> pow(
    const Active<T>& x, std::type_identity_t<T> y,
    std::source_location l = std::source_location::current()) {
  return pow(x, Active<T>(y), l);
}
template <class T>
requires std::is_floating_point_v<T> Active<T> max(
    const Active<T>& x, const Active<T>& y,
    std::source_location l = std::source_location::current()) {
  return detail::Apply<T>(detail::Op::kMax, l, std::fmax(x.v, y.v), x, y);
}
template <class T>
requires std::is_floating_point_v<T> Active<T> min(
    const Active<T>& x, const Active<T>& y,
    std::source_location l = std::source_location::current()) {
  return detail::Apply<T>(detail::Op::kMin, l, std::fmin(x.v, y.v), x, y);
}

/// A random draw recorded as such (`rand`: uniform on [0, 1), `randn`:
/// standard normal), never recomputed by replay; tagged random = "uniform"
/// / "normal" when the context's tag_random is set.
template <class G>
Real rand(G& gen, std::source_location l = std::source_location::current()) {
  return detail::Apply<double>(detail::Op::kRand, l,
                               std::uniform_real_distribution<double>(0.0, 1.0)(gen));
}
template <class G>
Real randn(G& gen, std::source_location l = std::source_location::current()) {
  return detail::Apply<double>(detail::Op::kRandn, l, std::normal_distribution<double>()(gen));
}

/// An error of an operation on active values (a shape mismatch, a bad
/// index): thrown where the operation is written, so that the run fails
/// like any C++ exception (Error nodes close the trace).
class OpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A dense, row-major tensor (Float64, Float32, Int64, Int32 or Bool) that
/// records the operations applied to it. Its operations are the standard
/// set's, evaluated by libtrace (irt/eval.h), so recorded values are the
/// values irt-replay recomputes; Eigen views read its data.
class Tensor {
 public:
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Tensor() = default;
  /// From a tensor Value (throws OpError for any other value).
  explicit Tensor(Value v);
  /// A Float64 tensor of `shape` holding `data` in row-major order.
  Tensor(std::vector<int64_t> shape, const std::vector<double>& data);
  /// A Float64 matrix (copied, row-major).
  static Tensor FromEigen(const Eigen::Ref<const Eigen::MatrixXd>& m);

  const Value& value() const { return v_; }
  const irt::Tensor& data() const { return v_.tensor(); }
  const std::vector<int64_t>& shape() const { return v_.tensor().shape; }
  /// A Float64 tensor of 1 or 2 dimensions as an Eigen matrix (a vector as
  /// one row), without copying.
  Eigen::Map<const Matrix> matrix() const;
  bool recorded() const { return id != kNoNode; }

  uint32_t serial = 0;
  uint32_t pos = 0;
  NodeId id = kNoNode;

 private:
  Value v_;
};

namespace detail {
inline Operand OperandOf(const Tensor& t) {
  return {t.serial, t.pos, t.id, VKind::kTensor, 0, &t.value()};
}
inline Value ValueOf(const Tensor& t) { return t.value(); }
template <class T>
Value ValueOf(const Active<T>& a) {
  return Value::FromBits(KindOf<T>(), BitsOf(a.v));
}
// Evaluates a standard operation with libtrace (throws OpError).
Value Evaluate(Op op, std::span<const Value> args);
// Records `op` on `args` giving the tensor or scalar `result`.
template <class... A>
Value ApplyValue(Op op, const std::source_location& l, Value result, uint32_t* serial,
                 uint32_t* pos, NodeId* id, const A&... args) {
  if (t_current == nullptr) return result;
  Operand ops[] = {OperandOf(args)...};
  const Value* big = result.kind() == VKind::kTensor || result.kind() == VKind::kTuple ||
                             result.kind() == VKind::kString
                         ? &result
                         : nullptr;
  Record(op, Loc::Of(l), ops, sizeof...(A), result.kind(), result.bits(), serial, pos, id, big);
  return result;
}
template <class... A>
Tensor TensorOp(Op op, const std::source_location& l, const A&... args) {
  Value in[] = {ValueOf(args)...};
  Tensor t(Evaluate(op, in));
  ApplyValue(op, l, t.value(), &t.serial, &t.pos, &t.id, args...);
  return t;
}
template <class... A>
Real RealOp(Op op, const std::source_location& l, const A&... args) {
  Value in[] = {ValueOf(args)...};
  Value v = Evaluate(op, in);
  if (v.kind() != VKind::kF64)
    throw OpError(std::string(OpName(op)) + ": the result is not a Float64");
  Real r(v.as_f64());
  ApplyValue(op, l, v, &r.serial, &r.pos, &r.id, args...);
  return r;
}
// The element of a Float64 tensor named by in-bounds indices, read directly
// (libtrace's ElementF64); anything else is evaluated as by RealOp.
bool ElementOf(const Tensor& x, std::span<const int64_t> index, double* out);
template <class... I>
Real GetIndex(const std::source_location& l, const Tensor& x, const I&... idx) {
  const int64_t index[] = {idx.v...};
  double v;
  if (!ElementOf(x, index, &v)) return RealOp(Op::kGetindex, l, x, idx...);
  Real r(v);
  if constexpr (sizeof...(I) == 1) {
    // The common loop body's x[i]: inline, as Apply's scalar operations.
    const uint32_t serial[] = {x.serial, idx.serial...};
    const NodeId ids[] = {x.id, idx.id...};
    const uint64_t bits[] = {0, BitsOf(idx.v)...};
    if (AppendFast(Op::kGetindex, l, 2, serial, ids, bits, VKind::kF64, BitsOf(v), &r.serial,
                   &r.pos, &r.id)) {
      return r;
    }
  }
  ApplyValue(Op::kGetindex, l, Value::F64(v), &r.serial, &r.pos, &r.id, x, idx...);
  return r;
}
}  // namespace detail

namespace detail {
// A first tensor operand that remembers where the operation was written.
struct TensorAt {
  const Tensor& t;
  std::source_location l;
  TensorAt(const Tensor& x, std::source_location l = std::source_location::current())  // NOLINT
      : t(x), l(l) {}
};
}  // namespace detail

// Tensor operations (NumPy broadcasting for the elementwise ones; a Real
// operand broadcasts as a scalar).
#define IRT_REC_TENSOR_BINARY(OP, CODE)                              \
  inline Tensor operator OP(detail::At<double> x, const Tensor& y) { \
    return detail::TensorOp(detail::Op::CODE, x.l, x.a, y);          \
  }                                                                  \
  inline Tensor operator OP(const Tensor& x, detail::At<double> y) { \
    return detail::TensorOp(detail::Op::CODE, y.l, x, y.a);          \
  }                                                                  \
  inline Tensor operator OP(detail::TensorAt x, const Tensor& y) {   \
    return detail::TensorOp(detail::Op::CODE, x.l, x.t, y);          \
  }
IRT_REC_TENSOR_BINARY(+, kAdd)
IRT_REC_TENSOR_BINARY(-, kSub)
IRT_REC_TENSOR_BINARY(*, kMul)
IRT_REC_TENSOR_BINARY(/, kDiv)
#undef IRT_REC_TENSOR_BINARY

#define IRT_REC_TENSOR_UNARY(NAME, CODE)                                                          \
  inline Tensor NAME(const Tensor& x, std::source_location l = std::source_location::current()) { \
    return detail::TensorOp(detail::Op::CODE, l, x);                                              \
  }
IRT_REC_TENSOR_UNARY(sin, kSin)
IRT_REC_TENSOR_UNARY(cos, kCos)
IRT_REC_TENSOR_UNARY(exp, kExp)
IRT_REC_TENSOR_UNARY(log, kLog)
IRT_REC_TENSOR_UNARY(sqrt, kSqrt)
IRT_REC_TENSOR_UNARY(tanh, kTanh)
IRT_REC_TENSOR_UNARY(abs, kAbs)
IRT_REC_TENSOR_UNARY(transpose, kTranspose)
#undef IRT_REC_TENSOR_UNARY

/// Matrix product of two 2-D tensors (or a vector and a matrix).
inline Tensor matmul(const Tensor& a, const Tensor& b,
                     std::source_location l = std::source_location::current()) {
  return detail::TensorOp(detail::Op::kMatmul, l, a, b);
}
/// The sum of all elements of a Float64 tensor.
inline Real sum(const Tensor& x, std::source_location l = std::source_location::current()) {
  return detail::RealOp(detail::Op::kSum, l, x);
}
/// The mean of all elements of a Float64 tensor.
inline Real mean(const Tensor& x, std::source_location l = std::source_location::current()) {
  return detail::RealOp(detail::Op::kMean, l, x);
}
/// Element i (1-based, row-major linear index) of a Float64 tensor.
inline Real getindex(const Tensor& x, const Int& i,
                     std::source_location l = std::source_location::current()) {
  return detail::GetIndex(l, x, i);
}
/// Element (i, j) (1-based) of a Float64 matrix.
inline Real getindex(const Tensor& x, const Int& i, const Int& j,
                     std::source_location l = std::source_location::current()) {
  return detail::GetIndex(l, x, i, j);
}

namespace detail {

// One recorded function: its name and the control-flow facts seen so far.
// One static instance per IRT_FUNCTION.
struct Function {
  std::string_view name;  // a literal's: its length known without strlen
  Loc loc;
  // The recorder that used it last, and its index there.
  uint64_t generation = 0;
  uint32_t index = ~0u;
};

// An argument of IRT_FUNCTION: an active value or a plain number. Only
// where the parameter is and what it holds (16 bytes): a recursion keeps
// one list of these per level on the stack, and the call's constructor
// reads them once.
struct ArgRef {
  const void* obj;  // the parameter: an Active<T> of kind `kind`, or a Tensor
  VKind kind;       // KindOf<T>(), or kTensor
  bool rebind;      // rebound to its Argument node (not a const parameter)
  ArgRef(Tensor& t) : obj(&t), kind(VKind::kTensor), rebind(true) {}         // NOLINT
  ArgRef(const Tensor& t) : obj(&t), kind(VKind::kTensor), rebind(false) {}  // NOLINT
  template <class T>
  ArgRef(Active<T>& a) : obj(&a), kind(KindOf<T>()), rebind(true) {  // NOLINT
    static_assert(Recordable<T>());
  }
  template <class T>
  ArgRef(const Active<T>& a) : obj(&a), kind(KindOf<T>()), rebind(false) {  // NOLINT
    static_assert(Recordable<T>());
  }
};

/// The RAII scope of one recorded call (IRT_FUNCTION).
class CallScope {
 public:
  CallScope(Function& fn, std::initializer_list<ArgRef> args);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  /// IRT_RETURN: records the Return and gives the caller's view of the
  /// result (the Return node, or the Primitive node of a call recorded as
  /// a primitive).
  template <class T>
  Active<T> Return(const Active<T>& v) {
    Active<T> out(v.v);
    if (recorder_ != nullptr) {
      Operand o = OperandOf(v);
      DoReturn(&o, &out.serial, &out.pos, &out.id);
    }
    return out;
  }
  Tensor Return(const Tensor& v) {
    Tensor out = v;
    out.serial = 0;
    out.pos = 0;
    out.id = kNoNode;
    if (recorder_ != nullptr) {
      Operand o = OperandOf(v);
      DoReturn(&o, &out.serial, &out.pos, &out.id);
    }
    return out;
  }

 private:
  void DoReturn(const Operand* v, uint32_t* serial, uint32_t* pos, NodeId* id);
  Recorder* recorder_ = nullptr;
  uint32_t frame_ = 0;
  int exceptions_ = 0;
};

// IRT_IF: a conditional branch on an active Bool.
class IfSite;
class IfScope {
 public:
  IfScope(IfSite& site, const Bool& c, Loc loc);
  ~IfScope();
  IfScope(const IfScope&) = delete;
  IfScope& operator=(const IfScope&) = delete;
  explicit operator bool() const { return taken_; }

 private:
  Recorder* recorder_ = nullptr;
  IfSite* site_ = nullptr;
  uint32_t frame_ = 0;
  uint32_t serial_ = 0;
  uint32_t join_ = 0;
  bool taken_ = false;
  int exceptions_ = 0;
};

// A branch site: one static instance per IRT_IF or IRT_WHILE.
class IfSite {
 public:
  // The last recorder and function that used the site, and its blocks there.
  uint64_t generation = 0;
  uint32_t fn = 0;
  void* blocks = nullptr;
};

// A loop variable of IRT_WHILE.
struct LoopVar {
  NodeId* id;
  uint32_t* serial;
  uint32_t* pos;
  VKind vk;
  uint64_t bits;
  template <class T>
  LoopVar(Active<T>& a)  // NOLINT
      : id(&a.id), serial(&a.serial), pos(&a.pos), vk(KindOf<T>()), bits(BitsOf(a.v)) {}
};

// IRT_WHILE: jumps to the loop header with the loop variables as block
// arguments, then tests the condition in the header.
bool LoopHead(IfSite& site, Loc loc, std::initializer_list<LoopVar> vars);
bool LoopTest(IfSite& site, Loc loc, const Bool& c);

// IRT_WHILE(vars...) records the jump into the header (C++ evaluates the
// called expression before its argument, the condition), then (c) tests.
class LoopTester {
 public:
  LoopTester(IfSite& site, Loc loc) : site_(&site), loc_(loc) {}
  bool operator()(const Bool& c) const { return LoopTest(*site_, loc_, c); }

 private:
  IfSite* site_;
  Loc loc_;
};
inline LoopTester LoopStart(IfSite& site, std::initializer_list<LoopVar> vars,
                            std::source_location l = std::source_location::current()) {
  Loc loc = Loc::Of(l);
  LoopHead(site, loc, vars);
  return LoopTester(site, loc);
}

// IRT_IF's first half: (c) makes the scope of the if statement.
struct IfStart {
  IfSite& site;
  IfScope operator()(const Bool& c,
                     std::source_location l = std::source_location::current()) const {
    return IfScope(site, c, Loc::Of(l));
  }
};

}  // namespace detail

}  // namespace irt::rec

#define IRT_REC_CAT2(a, b) a##b
#define IRT_REC_CAT(a, b) IRT_REC_CAT2(a, b)

/// Opens the recorded call of the enclosing function NAME with its active
/// (or plain) arguments; closes it when the function returns or throws.
#define IRT_FUNCTION(NAME, ...)                                             \
  static ::irt::rec::detail::Function irt_rec_function_{                    \
      #NAME, ::irt::rec::detail::Loc::Of(std::source_location::current())}; \
  ::irt::rec::detail::CallScope irt_rec_scope_(irt_rec_function_, {__VA_ARGS__})

// The three macros below are object-like: what follows them in
// parentheses is the user's own code, so that every operation in a
// condition or a returned expression keeps its own source position (an
// expression passed as a macro argument would take the macro's).

/// `return IRT_RETURN(v);` records the Return of the enclosing IRT_FUNCTION.
#define IRT_RETURN irt_rec_scope_.Return

/// `if (IRT_IF(c)) ... else ...`: records the branch taken on the active
/// Bool c and, after the whole if statement, the jump to the join block.
#define IRT_IF                                                            \
  ::irt::rec::detail::IfScope irt_rec_if_ = ::irt::rec::detail::IfStart { \
    []() -> ::irt::rec::detail::IfSite& {                                 \
      static ::irt::rec::detail::IfSite s;                                \
      return s;                                                           \
    }()                                                                   \
  }

/// `while (IRT_WHILE(vars...)(c))`, or `for (init; IRT_WHILE(vars...)(c);
/// step)`: records the jump into the loop header with the loop-carried
/// active variables `vars` as block arguments (rebound to them), then the
/// condition c, evaluated in the header, and the branch taken.
#define IRT_WHILE(...)                       \
  ::irt::rec::detail::LoopStart(             \
      []() -> ::irt::rec::detail::IfSite& {  \
        static ::irt::rec::detail::IfSite s; \
        return s;                            \
      }(),                                   \
      {__VA_ARGS__})

#endif  // IRT_RECORD_H_
