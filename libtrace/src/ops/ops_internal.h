// Internal to the operation set: the evaluation functions the rows of
// registry.cc point to (scalars in scalar.cc, tensors in tensor.cc) and the
// helpers they share.
#ifndef IRT_SRC_OPS_OPS_INTERNAL_H_
#define IRT_SRC_OPS_OPS_INTERNAL_H_

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "irt/ops.h"
#include "irt/status.h"
#include "irt/value.h"
#include "ops/scalar_ops.h"

namespace irt::ops {

using internal::SOp;

inline SOp SOpOf(const OpDef& op) { return static_cast<SOp>(op.scalar_op); }

/// Dimension argument d (1-based) of a tensor of `rank` dimensions, 0-based.
Result<size_t> DimArg(std::string_view name, const Value& d, size_t rank);

/// Python's slice start:stop:step (`parts`, nothing for a part left out;
/// negative from the end; clamped) over a dimension of n, as
/// slice.indices and len(range(...)) read it: the first position
/// (0-based), the step and the count. kInvalidArgument for a part that is
/// no integer, or a zero step.
Status PythonSlice(std::string_view name, int64_t n, OpArgs parts, int64_t* first, int64_t* step,
                   int64_t* count);

// Promotion rank of a real scalar: Bool 0 < Int64 1 < Float32 2 < Float64 3; -1 otherwise.
inline int Rank(VKind k) {
  switch (k) {
    case VKind::kBool:
      return 0;
    case VKind::kI64:
      return 1;
    case VKind::kF32:
      return 2;
    case VKind::kF64:
      return 3;
    default:
      return -1;
  }
}
inline bool IsReal(const Value& v) { return Rank(v.kind()) >= 0; }
inline bool IsTensor(const Value& v) { return v.kind() == VKind::kTensor; }
inline bool IsFloatDType(DType t) { return t == DType::kF64 || t == DType::kF32; }
inline Value F64(double d) { return Value::FromBits(VKind::kF64, std::bit_cast<uint64_t>(d)); }
inline Value F32(float f) { return Value::FromBits(VKind::kF32, std::bit_cast<uint32_t>(f)); }
inline double AsF64(const Value& v) { return std::bit_cast<double>(v.bits()); }
inline float AsF32(const Value& v) { return std::bit_cast<float>(static_cast<uint32_t>(v.bits())); }
inline int64_t AsInt(const Value& v) {
  return v.kind() == VKind::kBool ? (v.bits() != 0 ? 1 : 0) : v.as_i64();
}
inline int64_t Wrap(uint64_t u) { return static_cast<int64_t>(u); }
double ToF64(const Value& v);
float ToF32(const Value& v);

/// "MethodError: no method matching name(::T...)".
Status NoMethod(std::string_view name, OpArgs args);
/// "DimensionMismatch: name: what".
Status ShapeError(std::string_view name, const std::string& what);
/// "ArgumentError: name: what".
Status ArgError(std::string_view name, const std::string& what);
/// "BoundsError: name: what".
Status BoundsError(std::string_view name, const std::string& what);
/// "2×3", "()" for a scalar.
std::string ShapeText(const std::vector<int64_t>& shape);
/// An integer argument: Int64, Bool, or a float with an integral value
/// (numbers in derivative rules are floats).
bool ToIndex(const Value& v, int64_t* out);

// ---- scalar.cc: numbers, strings, tuples (no tensor operand)
Result<Value> ScalarElementwise(const OpDef& op, OpArgs a);  // dispatch by scalar_op / name
Result<Value> ScalarEqual(const OpDef& op, OpArgs a);        // == and !=, Julia's
Result<Value> ScalarIfElse(const OpDef& op, OpArgs a);
Result<Value> MakeTuple(const OpDef& op, OpArgs a);
/// Julia's ==: exact across number types, element by element through tuples.
bool Equal(const Value& a, const Value& b);

// ---- tensor.cc
Result<Value> TensorElementwise(const OpDef& op, OpArgs a);
Result<Value> Matmul(const OpDef& op, OpArgs a);
Result<Value> Transpose(const OpDef& op, OpArgs a);
Result<Value> Reduce(const OpDef& op, OpArgs a);  // sum mean maximum minimum
Result<Value> SumTo(const OpDef& op, OpArgs a);
Result<Value> BroadcastTo(const OpDef& op, OpArgs a);
Result<Value> Reshape(const OpDef& op, OpArgs a);
Result<Value> Fill(const OpDef& op, OpArgs a);  // fill zeros ones
Result<Value> Size(const OpDef& op, OpArgs a);
Result<Value> Length(const OpDef& op, OpArgs a);
Result<Value> GetIndex(const OpDef& op, OpArgs a);
Result<Value> AddIndex(const OpDef& op, OpArgs a);
Result<Value> GetItem(const OpDef& op, OpArgs a);
Result<Value> Dot(const OpDef& op, OpArgs a);
Result<Value> AddItem(const OpDef& op, OpArgs a);
Result<Value> Slice(const OpDef& op, OpArgs a);
Result<Value> Unslice(const OpDef& op, OpArgs a);
Result<Value> GetSlice(const OpDef& op, OpArgs a);
Result<Value> UngetSlice(const OpDef& op, OpArgs a);
Result<Value> Cat(const OpDef& op, OpArgs a);
Result<Value> Collect(const OpDef& op, OpArgs a);
Result<Value> Cumsum(const OpDef& op, OpArgs a);

}  // namespace irt::ops

#endif  // IRT_SRC_OPS_OPS_INTERNAL_H_
