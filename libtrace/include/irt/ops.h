// The standard operation set: every operation a trace may record with a
// meaning that tools rely on, one row each (schema/README.md §9 is the
// contract; irt-ops(7) is the table generated from these rows). A row holds
// the operation's name and arity, its flags, the name its derivative rule is
// found under, and its evaluation: scalars with Julia's promotion, tensors
// with NumPy's broadcasting, a binary64 fast path. The IR adapter's
// interpreter, irt-replay's evaluator, the derivative rules and irt-grad all
// evaluate operations here, so that a recorded value, a replayed value and a
// derivative computed from the same operation agree bit for bit.
//
// Conventions. Numbers promote along Bool < Int64 < Float32 < Float64;
// Int64 + - * wrap around; `/` is always floating point; integer division by
// zero is an error. Floating-point domain errors are not errors: they give
// NaN or ±Inf as IEEE 754 does (log(-1) is NaN, 1/0 is Inf). Tensors are
// dense and row-major; elementwise operations broadcast as NumPy does;
// dimensions and indices are 1-based; a linear index runs in row-major
// order, the order reshape keeps. A scalar combined with a Float32 tensor
// takes the tensor's element type.
#ifndef IRT_OPS_H_
#define IRT_OPS_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/status.h"
#include "irt/value.h"

namespace irt {

/// The arguments of an operation: a span of values, or of pointers to
/// values (the interpreter's registers), without copying either.
class OpArgs {
 public:
  OpArgs(std::span<const Value> v) : vals_(v.data()), n_(v.size()) {}     // NOLINT: implicit
  OpArgs(const std::vector<Value>& v) : vals_(v.data()), n_(v.size()) {}  // NOLINT: implicit
  OpArgs(const Value* const* ptrs, size_t n) : ptrs_(ptrs), n_(n) {}
  const Value& operator[](size_t i) const { return ptrs_ != nullptr ? *ptrs_[i] : vals_[i]; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  /// Arguments [from, size()).
  OpArgs from(size_t from) const {
    OpArgs r = *this;
    if (ptrs_ != nullptr) {
      r.ptrs_ += from;
    } else {
      r.vals_ += from;
    }
    r.n_ -= from;
    return r;
  }
  std::vector<Value> ToVector() const {
    std::vector<Value> out;
    out.reserve(n_);
    for (size_t i = 0; i < n_; ++i) out.push_back((*this)[i]);
    return out;
  }

 private:
  const Value* vals_ = nullptr;
  const Value* const* ptrs_ = nullptr;
  size_t n_ = 0;
};

struct OpDef;
/// Evaluates `op` on `args` (arity already checked). Errors are values:
/// kRuntimeError with a Julia-style message ("DivideError: integer division
/// error", "MethodError: no method matching +(::String, ::Int64)",
/// "DimensionMismatch: matmul: ...").
using OpFn = Result<Value> (*)(const OpDef& op, OpArgs args);

/// Row flags.
enum OpFlag : uint32_t {
  /// Applies element by element to tensors, with broadcasting.
  kOpElementwise = 1u << 0,
  /// A random draw: its value is recorded, never recomputed.
  kOpRandom = 1u << 1,
  /// Linear in its differentiable arguments (sum, transpose, reshape, +...).
  kOpLinear = 1u << 2,
  /// Its result carries no derivative (comparisons, logic, integer division,
  /// shapes, constants).
  kOpNondiff = 1u << 3,
  /// Derivatives pass through it without a rule (tuple: each item's to its
  /// argument), as through getitem and getindex of a tuple.
  kOpTuple = 1u << 4,
};

/// Arity bound meaning "any number".
inline constexpr uint8_t kOpVariadic = 255;

struct OpDef {
  std::string_view name;
  uint8_t min_arity = 0;
  uint8_t max_arity = 0;  // kOpVariadic: no bound
  uint32_t flags = 0;
  /// The binary64 operation of scalar_ops.h (internal), 0 if none: the
  /// fast path for Float64 operands and the compiled derivative programs.
  uint8_t scalar_op = 0;
  /// The name its derivative rule is found under in a rules file; empty for
  /// kOpNondiff rows and random draws.
  std::string_view rule;
  /// Scalars (no tensor operand).
  OpFn scalar = nullptr;
  /// Some operand is a tensor; nullptr when the operation takes no tensors.
  OpFn tensor = nullptr;
  /// One line: the operation's meaning, for the documentation.
  std::string_view meaning;
  /// The call as documented: "atan2(y, x)".
  std::string_view signature;

  bool Has(OpFlag f) const { return (flags & f) != 0; }
  bool TakesArity(size_t n) const {
    return n >= min_arity && (max_arity == kOpVariadic || n <= max_arity);
  }
};

/// Every row, sorted by name.
std::span<const OpDef> StandardOps();
/// The row named `name` that takes `arity` arguments, or nullptr.
const OpDef* FindOp(std::string_view name, size_t arity);
/// The row named `name` (any arity), or nullptr.
const OpDef* FindOp(std::string_view name);

/// Evaluates `op` on `args`: its tensor evaluation when an argument is a
/// tensor, else its scalar one. Random draws are errors (kUnsupported): only
/// their recorded value exists.
Result<Value> ApplyOp(const OpDef& op, OpArgs args);
/// FindOp(name, args.size()) then ApplyOp; kNotFound naming the operation
/// when the set has no such row.
Result<Value> ApplyOp(std::string_view name, OpArgs args);

/// For Int64 or Float64 operands of the same kind, the common binary
/// operations (+ - * / < <= > >= == !=) without a call: true and `*out` set
/// when it applied. The same arithmetic as ApplyOp.
inline bool ApplyFastBinary(const OpDef& op, const Value& a, const Value& b, Value* out);

/// The element getindex(x, index...) gives, when x holds Float64 and the
/// indices name an element (1-based; one index is a linear index in
/// row-major order): true and `*out` set, without building values. False
/// leaves the call to ApplyOp, which handles the other cases and says why
/// an index is wrong.
bool ElementF64(const Tensor& x, std::span<const int64_t> index, double* out);

/// The row-major offset of the element that 1-based `index` names in a
/// tensor of dimensions `shape` (one index: a linear index), as getindex
/// reads it; -1 when it names none.
int64_t ElementOffset(const std::vector<int64_t>& shape, std::span<const int64_t> index);
/// The same for Python's and NumPy's indexing, as getitem reads an element:
/// one 0-based index per dimension, a negative one counting from the end;
/// -1 when they name no single element.
int64_t ItemElementOffset(const std::vector<int64_t>& shape, std::span<const int64_t> index);

/// "MethodError: no method matching name(::T1, ::T2)".
std::string NoMethodMessage(std::string_view name, OpArgs args);

namespace internal {
// Codes of scalar_op shared with scalar_ops.h for the inline fast path.
inline constexpr uint8_t kFastAdd = 1, kFastSub = 2, kFastMul = 3, kFastDiv = 4, kFastLt = 8,
                         kFastLe = 9, kFastGt = 10, kFastGe = 11, kFastEq = 12, kFastNe = 13;
}  // namespace internal

inline bool ApplyFastBinary(const OpDef& op, const Value& a, const Value& b, Value* out) {
  VKind k = a.kind();
  if (k != b.kind()) return false;
  uint8_t s = op.scalar_op;
  if (k == VKind::kF64) {
    double x = std::bit_cast<double>(a.bits()), y = std::bit_cast<double>(b.bits());
    auto f64 = [](double d) { return Value::FromBits(VKind::kF64, std::bit_cast<uint64_t>(d)); };
    switch (s) {
      case internal::kFastAdd:
        *out = f64(x + y);
        return true;
      case internal::kFastSub:
        *out = f64(x - y);
        return true;
      case internal::kFastMul:
        *out = f64(x * y);
        return true;
      case internal::kFastDiv:
        *out = f64(x / y);
        return true;
      case internal::kFastLt:
        *out = Value::Bool(x < y);
        return true;
      case internal::kFastLe:
        *out = Value::Bool(x <= y);
        return true;
      case internal::kFastGt:
        *out = Value::Bool(x > y);
        return true;
      case internal::kFastGe:
        *out = Value::Bool(x >= y);
        return true;
      case internal::kFastEq:
        *out = Value::Bool(x == y);
        return true;
      case internal::kFastNe:
        *out = Value::Bool(x != y);
        return true;
      default:
        return false;
    }
  }
  if (k == VKind::kI64) {
    uint64_t ux = a.bits(), uy = b.bits();
    int64_t x = a.as_i64(), y = b.as_i64();
    switch (s) {
      case internal::kFastAdd:
        *out = Value::I64(static_cast<int64_t>(ux + uy));
        return true;
      case internal::kFastSub:
        *out = Value::I64(static_cast<int64_t>(ux - uy));
        return true;
      case internal::kFastMul:
        *out = Value::I64(static_cast<int64_t>(ux * uy));
        return true;
      case internal::kFastLt:
        *out = Value::Bool(x < y);
        return true;
      case internal::kFastLe:
        *out = Value::Bool(x <= y);
        return true;
      case internal::kFastGt:
        *out = Value::Bool(x > y);
        return true;
      case internal::kFastGe:
        *out = Value::Bool(x >= y);
        return true;
      case internal::kFastEq:
        *out = Value::Bool(x == y);
        return true;
      case internal::kFastNe:
        *out = Value::Bool(x != y);
        return true;
      default:
        return false;
    }
  }
  return false;
}

}  // namespace irt

#endif  // IRT_OPS_H_
