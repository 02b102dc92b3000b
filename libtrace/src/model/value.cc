// The value model: Tensor construction, checked shapes and element access,
// and Value's constructors and accessors. Text forms live in format.cc
// (FormatValue) and literal.cc (ParseLiteral); .npy files in io/npy.cc.
#include "irt/value.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>

namespace irt {

struct Value::Heap {
  std::string str;
  Tensor tensor;
  std::vector<Value> items;
  ~Heap();
};

Value::Heap::~Heap() {
  // Releases nested tuples iteratively, so that a long chain of tuples
  // nested in tuples does not recurse once per level.
  std::vector<Value> pending = std::move(items);
  while (!pending.empty()) {
    Value v = std::move(pending.back());
    pending.pop_back();
    if (v.kind_ == VKind::kTuple && v.heap_ && v.heap_.use_count() == 1) {
      auto& inner = const_cast<Heap&>(*v.heap_).items;
      for (Value& x : inner) pending.push_back(std::move(x));
      inner.clear();
    }
  }
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF64:
    case DType::kI64:
      return 8;
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kBool:
      return 1;
  }
  return 0;
}

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF64:
      return "Float64";
    case DType::kF32:
      return "Float32";
    case DType::kI64:
      return "Int64";
    case DType::kI32:
      return "Int32";
    case DType::kBool:
      return "Bool";
  }
  return "Unknown";
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

double Tensor::at(int64_t i) const {
  size_t size = DTypeSize(dtype);
  size_t off = static_cast<size_t>(i) * size;
  if (i < 0 || size == 0 || off + size > data.size()) return std::nan("");
  const uint8_t* p = data.data() + off;
  switch (dtype) {
    case DType::kF64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::kI64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      return static_cast<double>(x);
    }
    case DType::kI32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case DType::kBool:
      return *p != 0 ? 1.0 : 0.0;
  }
  return std::nan("");
}

Result<int64_t> CheckedNumel(std::span<const int64_t> shape) {
  auto text = [&] {
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "×" : "") + std::to_string(shape[i]);
    return s;
  };
  if (shape.size() > kMaxTensorDims) {
    return DataError(std::to_string(shape.size()) + " dimensions, more than " +
                     std::to_string(kMaxTensorDims));
  }
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return DataError("negative dimension in shape " + text());
    empty = empty || d == 0;
  }
  // The cap holds for the dimensions' product with zeros counted as ones,
  // so that no product of some of a shape's dimensions (a stride, the rows
  // of one dimension) can overflow, not even for a tensor without elements.
  int64_t n = 1;
  for (int64_t d : shape) {
    int64_t e = d == 0 ? 1 : d;
    if (e > kMaxTensorElements / n) {
      return DataError("shape " + text() + " has more than " + std::to_string(kMaxTensorElements) +
                       (empty ? " elements with its zero dimensions counted as 1" : " elements"));
    }
    n *= e;
  }
  return empty ? int64_t{0} : n;
}

namespace {

// Makes empty `data` `bytes` zeros long, writing them only where the
// allocator has not: a tensor block comes zero-filled.
void ZeroFill(TensorBytes& data, size_t bytes) {
  data.resize(bytes);
  if (data.capacity() < internal::kTensorBlockBytes && bytes > 0) {
    std::memset(data.data(), 0, bytes);
  }
}

}  // namespace

Result<Tensor> Tensor::Make(DType dtype, std::vector<int64_t> shape) {
  IRT_ASSIGN_OR_RETURN(int64_t n, CheckedNumel(shape));
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  size_t bytes = static_cast<size_t>(n) * DTypeSize(dtype);
  try {
    ZeroFill(t.data, bytes);
  } catch (const std::bad_alloc&) {
    return IoError("out of memory for a tensor of " + std::to_string(bytes) + " bytes");
  }
  return t;
}

Tensor Tensor::Zeros(DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  ZeroFill(t.data, static_cast<size_t>(t.numel()) * DTypeSize(dtype));
  return t;
}

Tensor Tensor::FromF64(std::vector<int64_t> shape, std::span<const double> values) {
  Tensor t = Zeros(DType::kF64, std::move(shape));
  size_t n = std::min(values.size(), t.data.size() / 8);
  if (n > 0) std::memcpy(t.data.data(), values.data(), n * 8);
  return t;
}

Tensor Tensor::FromF32(std::vector<int64_t> shape, std::span<const float> values) {
  Tensor t = Zeros(DType::kF32, std::move(shape));
  size_t n = std::min(values.size(), t.data.size() / 4);
  if (n > 0) std::memcpy(t.data.data(), values.data(), n * 4);
  return t;
}

Value Value::F64(double d) { return Value(VKind::kF64, std::bit_cast<uint64_t>(d)); }

Value Value::F32(float f) { return Value(VKind::kF32, std::bit_cast<uint32_t>(f)); }

Value Value::String(std::string s) {
  Value v(VKind::kString, 0);
  auto h = std::make_shared<Heap>();
  h->str = std::move(s);
  v.heap_ = std::move(h);
  return v;
}

Value Value::Function(std::string name) {
  Value v = String(std::move(name));
  v.kind_ = VKind::kFunction;
  return v;
}

Value Value::MakeTensor(Tensor t) {
  Value v(VKind::kTensor, 0);
  auto h = std::make_shared<Heap>();
  h->tensor = std::move(t);
  v.heap_ = std::move(h);
  return v;
}

Tensor Value::TakeTensor(Value&& v) {
  if (v.kind_ != VKind::kTensor || !v.heap_) {
    Tensor t = v.tensor();
    v = Value();
    return t;
  }
  std::shared_ptr<const Heap> h = std::move(v.heap_);
  v = Value();
  // The only holder: no other Value can see the tensor change (every Heap
  // is made non-const, by make_shared, so casting the const away is sound).
  if (h.use_count() == 1) return std::move(const_cast<Heap&>(*h).tensor);
  return h->tensor;
}

Value Value::MakeTuple(std::vector<Value> items) {
  Value v(VKind::kTuple, 0);
  auto h = std::make_shared<Heap>();
  h->items = std::move(items);
  v.heap_ = std::move(h);
  return v;
}

double Value::as_f64() const { return std::bit_cast<double>(bits_); }

float Value::as_f32() const { return std::bit_cast<float>(static_cast<uint32_t>(bits_)); }

double Value::to_double() const {
  switch (kind_) {
    case VKind::kBool:
      return bits_ != 0 ? 1.0 : 0.0;
    case VKind::kI64:
      return static_cast<double>(as_i64());
    case VKind::kF64:
      return as_f64();
    case VKind::kF32:
      return as_f32();
    default:
      return std::nan("");
  }
}

const std::string& Value::str() const {
  static const std::string kEmpty;
  if (heap_ && (kind_ == VKind::kString || kind_ == VKind::kFunction)) return heap_->str;
  return kEmpty;
}

const Tensor& Value::tensor() const {
  static const Tensor kEmpty;
  if (heap_ && kind_ == VKind::kTensor) return heap_->tensor;
  return kEmpty;
}

const std::vector<Value>& Value::tuple() const {
  static const std::vector<Value> kEmpty;
  if (heap_ && kind_ == VKind::kTuple) return heap_->items;
  return kEmpty;
}

bool BitEqual(const Value& a, const Value& b) {
  std::vector<std::pair<const Value*, const Value*>> stack;
  stack.emplace_back(&a, &b);
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    if (x->kind() != y->kind()) return false;
    switch (x->kind()) {
      case VKind::kString:
      case VKind::kFunction:
        if (x->str() != y->str()) return false;
        break;
      case VKind::kTensor: {
        const Tensor& s = x->tensor();
        const Tensor& t = y->tensor();
        if (s.dtype != t.dtype || s.shape != t.shape || s.data != t.data) return false;
        break;
      }
      case VKind::kTuple: {
        const auto& s = x->tuple();
        const auto& t = y->tuple();
        if (s.size() != t.size()) return false;
        for (size_t i = 0; i < s.size(); ++i) stack.emplace_back(&s[i], &t[i]);
        break;
      }
      default:
        if (x->bits() != y->bits()) return false;
        break;
    }
  }
  return true;
}

}  // namespace irt
