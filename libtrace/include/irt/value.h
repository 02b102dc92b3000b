// Values recorded in traces: scalars, strings, function references, dense
// tensors and tuples. One owning representation shared by adapters (which
// compute with it), the writer (which encodes it) and the reader (which
// decodes it), plus the shortest round-trip text form every tool prints and
// the literal syntax that reads it back. Files of values are in irt/npy.h.
#ifndef IRT_VALUE_H_
#define IRT_VALUE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "irt/status.h"

namespace irt {

/// Mirrors fb::VKind (schema/irtrace.fbs); numeric values are the format's.
enum class VKind : uint8_t {
  kNone = 0,
  kNothing = 1,
  kBool = 2,
  kI64 = 3,
  kF64 = 4,
  kF32 = 5,
  kString = 6,
  kFunction = 7,
  kTensor = 8,
  kTuple = 9,
};
inline constexpr int kNumVKinds = 10;

/// Mirrors fb::DType.
enum class DType : uint8_t { kF64 = 0, kF32 = 1, kI64 = 2, kI32 = 3, kBool = 4 };
inline constexpr int kNumDTypes = 5;

/// Size in bytes of one element.
size_t DTypeSize(DType t);
/// "Float64", "Float32", "Int64", "Int32", "Bool".
std::string_view DTypeName(DType t);

/// The most dimensions a tensor may have: the format's limit
/// (schema/README.md §6), checked where tensors are made, written and read.
inline constexpr size_t kMaxTensorDims = 32;

/// The most elements a tensor may have, 2^28 (2 GiB of Float64): the cap
/// every kernel, evaluator and interpreter applies to the tensors it makes,
/// so a shape computed from data (zeros(n, m), a broadcast, a matrix
/// product) is refused before anything is allocated.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 28;

/// The number of elements of a tensor of `shape`, computed without
/// overflow. kDataError when a dimension is negative, there are more
/// than kMaxTensorDims of them or more than kMaxTensorElements elements.
Result<int64_t> CheckedNumel(std::span<const int64_t> shape);

namespace internal {
/// Storage of this many bytes or more is a tensor block (TensorAllocator).
inline constexpr size_t kTensorBlockBytes = size_t{2} << 20;
/// A block of at least `bytes`, in whole 2 MiB pages aligned to 2 MiB and
/// mapped for transparent huge pages (one page fault per 2 MiB, not per
/// 4 KiB: on a virtual machine a fault costs microseconds), zero-filled
/// unless `zero` is false (a reused block then holds what it held). Throws
/// std::bad_alloc when there is no memory for it. Tensors of
/// kTensorBlockBytes or more live in blocks, and so do the large buffers
/// of the readers and the gradient engine (decoded columns, adjoints).
void* AllocateTensorBlock(size_t bytes, bool zero = true);
/// The bytes a block from AllocateTensorBlock(bytes) can hold (whole 2 MiB
/// pages; `bytes` itself in a sanitizer build, which bounds it exactly).
size_t TensorBlockCapacity(size_t bytes);
/// Gives back a block from AllocateTensorBlock(bytes), same `bytes` (or
/// any up to its capacity).
void FreeTensorBlock(void* block, size_t bytes) noexcept;
/// The bytes of freed blocks kept for reuse (at most 64 MiB).
size_t CachedTensorBlockBytes();
/// Storage of this many bytes or more, below kTensorBlockBytes, is a piece:
/// from operator new, and kept for reuse when freed.
inline constexpr size_t kTensorPieceBytes = size_t{64} << 10;
/// Uninitialized storage of exactly `bytes` (kTensorPieceBytes <= bytes <
/// kTensorBlockBytes): a freed piece of that size if one is kept, else
/// from operator new.
void* AllocateTensorPiece(size_t bytes);
/// Gives back a piece from AllocateTensorPiece(bytes), same `bytes`.
void FreeTensorPiece(void* piece, size_t bytes) noexcept;
/// The bytes of freed pieces kept for reuse (at most 4 MiB).
size_t CachedTensorPieceBytes();
}  // namespace internal

/// The allocator of tensor elements. Storage of 2 MiB or more is mapped on
/// 2 MiB boundaries with transparent huge pages asked for, so that a new
/// matrix costs one page fault per 2 MiB instead of 512, and the blocks
/// freed last are kept, up to 64 MiB, for the next tensors of their size.
/// Smaller storage comes from operator new; from 64 KiB up, the pieces
/// freed last are kept too, up to 4 MiB, for the next tensors of exactly
/// their size. Under AddressSanitizer every
/// size comes from operator new, so that tensors stay checked.
///
/// Elements made without a value are left uninitialized, as by new T[n]:
/// `resize(n)` and `TensorBytes(n)` do not write what the caller is about
/// to overwrite. Tensor::Make and Tensor::Zeros give zeros, and storage of
/// kTensorBlockBytes or more is zero-filled when allocated, so a large
/// result that a kernel accumulates into is written once, not twice.
template <class T>
struct TensorAllocator {
  using value_type = T;
  /// Storage of this many bytes or more is on 2 MiB pages, aligned to
  /// 2 MiB (transparent huge pages: one page fault per 2 MiB).
  static constexpr size_t kBlockBytes = internal::kTensorBlockBytes;
  TensorAllocator() = default;
  template <class U>
  TensorAllocator(const TensorAllocator<U>&) noexcept {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    size_t bytes = n * sizeof(T);
    if (bytes >= internal::kTensorBlockBytes) {
      return static_cast<T*>(internal::AllocateTensorBlock(bytes));
    }
    if (bytes >= internal::kTensorPieceBytes) {
      return static_cast<T*>(internal::AllocateTensorPiece(bytes));
    }
    return static_cast<T*>(::operator new(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    size_t bytes = n * sizeof(T);
    if (bytes >= internal::kTensorBlockBytes) {
      internal::FreeTensorBlock(p, bytes);
    } else if (bytes >= internal::kTensorPieceBytes) {
      internal::FreeTensorPiece(p, bytes);
    } else {
      ::operator delete(p);
    }
  }
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const TensorAllocator<U>&) const noexcept {
    return true;
  }
};

/// Makes room for one more element in a stack that may grow deep (the
/// frames of a recursion): once full at `from` elements or more, it grows
/// straight to a block (2 MiB or more, on huge pages) and doubles from
/// there, instead of through ever larger heap arrays below 2 MiB, whose
/// pages are first touched 4 KiB at a time, each a page fault.
template <class T>
void GrowStack(std::vector<T, TensorAllocator<T>>& v, size_t from = 1024) {
  if (v.size() == v.capacity() && v.size() >= from) {
    constexpr size_t kBlock = (internal::kTensorBlockBytes + sizeof(T) - 1) / sizeof(T);
    v.reserve(v.size() * 2 > kBlock ? v.size() * 2 : kBlock);
  }
}

/// The bytes of a tensor's elements.
using TensorBytes = std::vector<uint8_t, TensorAllocator<uint8_t>>;

/// A dense, row-major (C order) tensor. `data` holds numel() little-endian
/// elements of `dtype`. A 0-dimensional tensor has an empty shape and one element.
struct Tensor {
  DType dtype = DType::kF64;
  std::vector<int64_t> shape;
  TensorBytes data;

  int64_t numel() const;
  /// Typed element access; the dtype must match (checked by assert only).
  double* f64() { return reinterpret_cast<double*>(data.data()); }
  const double* f64() const { return reinterpret_cast<const double*>(data.data()); }
  float* f32() { return reinterpret_cast<float*>(data.data()); }
  const float* f32() const { return reinterpret_cast<const float*>(data.data()); }
  /// Element i converted to double (any dtype).
  double at(int64_t i) const;

  static Tensor Zeros(DType dtype, std::vector<int64_t> shape);
  /// A zero-filled tensor whose shape comes from data: checked with
  /// CheckedNumel, and a failed allocation is an error (kIoError), not an
  /// exception. Use it for every tensor a computation makes.
  static Result<Tensor> Make(DType dtype, std::vector<int64_t> shape);
  static Tensor FromF64(std::vector<int64_t> shape, std::span<const double> values);
  static Tensor FromF32(std::vector<int64_t> shape, std::span<const float> values);
};

/// An immutable value. Scalars are held inline; strings, tensors and tuples
/// are shared, so copying a Value never copies their contents.
class Value {
 public:
  Value() = default;  // kNone: no value
  static Value Nothing() { return Value(VKind::kNothing, 0); }
  static Value Bool(bool b) { return Value(VKind::kBool, b ? 1 : 0); }
  static Value I64(int64_t i) { return Value(VKind::kI64, static_cast<uint64_t>(i)); }
  static Value F64(double d);
  static Value F32(float f);
  static Value String(std::string s);
  static Value Function(std::string name);
  static Value MakeTensor(Tensor t);
  /// The tensor of a tensor value: moved out, without a copy, when `v` is
  /// the only holder of it, and copied otherwise (for another kind, what
  /// tensor() gives). `v` is left without a value (kNone).
  static Tensor TakeTensor(Value&& v);
  static Value MakeTuple(std::vector<Value> items);
  /// Rebuilds a scalar from its format bits (kNone, kNothing, kBool, kI64, kF64, kF32 only).
  static Value FromBits(VKind kind, uint64_t bits) { return Value(kind, bits); }

  VKind kind() const { return kind_; }
  bool is_none() const { return kind_ == VKind::kNone; }
  bool is_scalar() const { return kind_ <= VKind::kF32; }
  bool is_float() const { return kind_ == VKind::kF64 || kind_ == VKind::kF32; }
  /// The format's bits for scalars (Value.bits); 0 for heap kinds.
  uint64_t bits() const { return bits_; }

  bool as_bool() const { return bits_ != 0; }
  int64_t as_i64() const { return static_cast<int64_t>(bits_); }
  double as_f64() const;
  float as_f32() const;
  /// Any real scalar (Bool, I64, F64, F32) as double.
  double to_double() const;
  /// String contents or function name.
  const std::string& str() const;
  const Tensor& tensor() const;
  const std::vector<Value>& tuple() const;

 private:
  struct Heap;
  Value(VKind kind, uint64_t bits) : kind_(kind), bits_(bits) {}
  VKind kind_ = VKind::kNone;
  uint64_t bits_ = 0;
  std::shared_ptr<const Heap> heap_;
};

/// True when both values have the same kind, shape and bit patterns.
bool BitEqual(const Value& a, const Value& b);

/// Shortest text that reads back to the same double, Julia style:
/// "1.0", "0.8414709848078965", "1.0e-7", "1.0e16", "NaN", "Inf", "-Inf".
std::string FormatDouble(double d);
/// Same for binary32 ("1.5f0" as Julia prints Float32).
std::string FormatFloat(float f);

struct FormatOptions {
  /// Tensors with more elements are abbreviated: the first and last few
  /// elements and the shape; the text of a tuple is cut after 64 KiB. 0
  /// means never abbreviate.
  int64_t max_elements = 10;
};
/// Strings from a trace (names, string values, metadata keys) are cut to
/// this many bytes when shown.
inline constexpr size_t kMaxDisplayBytes = 1024;

/// A string from a trace as tools show it in text and in messages: control
/// characters (C0, DEL, C1) and bytes that are not UTF-8 escaped Julia style
/// (\n, \e, \x9f, \u9b), and past kMaxDisplayBytes cut with "…(N bytes)",
/// so that a trace cannot forge output lines, colour a terminal or flood it.
std::string DisplayString(std::string_view s);

/// The value as irt-print shows it: 1.0, 2, true, nothing, "s", geom,
/// [1.0, 2.0], [1.0 2.0; 3.0 4.0], (1, 2.0).
std::string FormatValue(const Value& v, const FormatOptions& opts = {});
/// Julia-style type name: Float64, Int64, Bool, Nothing, String,
/// typeof(geom), Vector{Float64}, Matrix{Float32}, Array{Float64, 3},
/// Tuple{Int64, Float64}.
std::string TypeName(const Value& v);
/// FormatValue and TypeName of a tensor given by its parts (little-endian
/// elements, row-major), wherever they are: a trace's, in place.
std::string FormatTensor(DType dtype, std::span<const int64_t> shape, std::span<const uint8_t> data,
                         const FormatOptions& opts = {});
std::string TensorTypeName(DType dtype, size_t rank);
/// An exact key for a value: equal keys mean equal values (kind, bits,
/// string, tensor dtype, shape and data, tuple structure). A tuple item
/// that shares a tuple already keyed is written as a back-reference, so the
/// key's length follows the distinct tuples, not the decoded size.
std::string ValueKey(const Value& v);

/// Parses a literal as written in IR and on command lines: 2, -3, 2.0, 1e-3,
/// Inf, NaN, 1.5f0, true, false, nothing, "text", [1.0, 2.0], [1.0 2.0; 3.0 4.0],
/// (1, 2.0). Integers are Int64, numbers with '.', 'e' or Inf/NaN are Float64.
/// Everything FormatValue prints reads back, except abbreviated tensors and
/// function names: also Float32[1.5, 2.0], Int32[1, 2], Float64[] (element
/// type prefix), [1.0; 2.0;;] (n×1 matrix), 2×2×2[1.0, ...] and
/// 0×3 Float64[] (shape prefix, row-major elements), fill(1.0) (0-dimensional).
/// Tuples nest at most kMaxLiteralDepth deep. Errors are kDataError.
Result<Value> ParseLiteral(std::string_view text);
/// Parses the literal at the start of `text` and stores the number of bytes
/// it spans in `*length`. On error, `*error_offset` (if given) is the byte
/// offset in `text` where the problem was found.
Result<Value> ParseLiteralPrefix(std::string_view text, size_t* length,
                                 size_t* error_offset = nullptr);
inline constexpr int kMaxLiteralDepth = 64;

}  // namespace irt

#endif  // IRT_VALUE_H_
