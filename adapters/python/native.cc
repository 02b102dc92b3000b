// irtrace._native: the Python package's binding of libtrace's public API —
// the trace writer (irt/writer.h), the reader and its call tree
// (irt/trace.h, irt/graph.h), the printer (irt/print.h) and the derivative
// engine (irt/grad.h). The recording logic itself is in Python
// (irtrace/_record.py); this file only converts values and forwards calls.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "irt/control_flow.h"
#include "irt/grad.h"
#include "irt/graph.h"
#include "irt/npy.h"
#include "irt/output.h"
#include "irt/print.h"
#include "irt/rules.h"
#include "irt/trace.h"
#include "irt/value.h"
#include "irt/writer.h"

namespace py = pybind11;

namespace {

// Raised for errors of libtrace (a bad trace, a failed write).
PyObject* g_error = nullptr;
// Raised when a Python int does not fit in Int64 (an OverflowError).
PyObject* g_overflow = nullptr;

[[noreturn]] void Throw(const irt::Status& s) {
  PyErr_SetString(g_error, s.message().c_str());
  throw py::error_already_set();
}

template <typename T>
T Take(irt::Result<T> r) {
  if (!r.ok()) Throw(r.error());
  return std::move(r).value();
}

// ---------------------------------------------------------------------------
// Python values -> irt::Value

// NumPy's format string of a tensor element type.
const char* NumpyFormat(irt::DType t) {
  switch (t) {
    case irt::DType::kF64:
      return "f8";
    case irt::DType::kF32:
      return "f4";
    case irt::DType::kI64:
      return "i8";
    case irt::DType::kI32:
      return "i4";
    case irt::DType::kBool:
      return "?";
  }
  return "f8";
}

std::optional<irt::DType> DTypeOf(const py::dtype& dt) {
  char kind = dt.kind();
  auto size = dt.itemsize();
  if (kind == 'f' && size == 8) return irt::DType::kF64;
  if (kind == 'f' && size == 4) return irt::DType::kF32;
  if (kind == 'i' && size == 8) return irt::DType::kI64;
  if (kind == 'i' && size == 4) return irt::DType::kI32;
  if (kind == 'b' && size == 1) return irt::DType::kBool;
  return std::nullopt;
}

std::string QualifiedType(py::handle obj) {
  py::handle t = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  std::string mod = py::str(t.attr("__module__"));
  std::string name = py::str(t.attr("__qualname__"));
  return mod == "builtins" ? name : mod + "." + name;
}

struct Converted {
  irt::Value value;
  // The Python type, set when the recorded value does not say it: a value
  // recorded as its repr, or a list recorded as a tuple.
  std::string opaque_type;
};

void Convert(py::handle obj, Converted* out, int depth);

irt::Value ToValue(py::handle obj, std::string* opaque_type, int depth) {
  Converted c;
  Convert(obj, &c, depth);
  if (opaque_type != nullptr && opaque_type->empty()) *opaque_type = c.opaque_type;
  return c.value;
}

void Convert(py::handle obj, Converted* out, int depth) {
  PyObject* p = obj.ptr();
  if (p == Py_None) {
    out->value = irt::Value::Nothing();
  } else if (PyBool_Check(p)) {
    out->value = irt::Value::Bool(p == Py_True);
  } else if (PyLong_Check(p)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow != 0) {
      std::string msg = "the int " + std::string(py::str(obj)) + " does not fit in Int64";
      PyErr_SetString(g_overflow, msg.c_str());
      throw py::error_already_set();
    }
    out->value = irt::Value::I64(v);
  } else if (PyFloat_Check(p)) {
    out->value = irt::Value::F64(PyFloat_AS_DOUBLE(p));
  } else if (PyUnicode_Check(p)) {
    out->value = irt::Value::String(py::cast<std::string>(obj));
  } else if (PyTuple_Check(p) && depth < irt::kMaxLiteralDepth) {
    std::vector<irt::Value> items;
    for (py::handle item : py::reinterpret_borrow<py::tuple>(obj)) {
      items.push_back(ToValue(item, &out->opaque_type, depth + 1));
    }
    out->value = irt::Value::MakeTuple(std::move(items));
  } else if (PyList_Check(p) && depth < irt::kMaxLiteralDepth) {
    // A list is recorded as the tuple of its items at that moment, with
    // python_type = "list" (later mutation does not change the record).
    if (out->opaque_type.empty()) out->opaque_type = "list";
    std::vector<irt::Value> items;
    for (py::handle item : py::reinterpret_borrow<py::list>(obj)) {
      items.push_back(ToValue(item, &out->opaque_type, depth + 1));
    }
    out->value = irt::Value::MakeTuple(std::move(items));
  } else if (py::isinstance<py::array>(obj)) {
    auto arr = py::reinterpret_borrow<py::array>(obj);
    std::optional<irt::DType> dt = DTypeOf(arr.dtype());
    if (!dt || static_cast<size_t>(arr.ndim()) > irt::kMaxTensorDims) {
      out->value = irt::Value::String(py::repr(obj));
      out->opaque_type = QualifiedType(obj) + "{" + std::string(py::str(arr.dtype())) + "}";
      return;
    }
    // A copy in C order, taken now: later mutation of the array does not
    // change what the trace says it was.
    py::array c = py::array::ensure(arr, py::array::c_style);
    irt::Tensor t;
    t.dtype = *dt;
    for (py::ssize_t i = 0; i < c.ndim(); ++i) t.shape.push_back(c.shape(i));
    size_t bytes = static_cast<size_t>(c.nbytes());
    t.data.resize(bytes);
    if (bytes > 0) std::memcpy(t.data.data(), c.data(), bytes);
    out->value = irt::Value::MakeTensor(std::move(t));
  } else if (py::hasattr(obj, "dtype") && py::isinstance<py::dtype>(obj.attr("dtype")) &&
             py::hasattr(obj, "item") && !py::hasattr(obj, "__len__")) {
    // A NumPy scalar (np.float32(1.5), np.int64(2), np.bool_(True)).
    py::dtype dt = obj.attr("dtype");
    std::optional<irt::DType> k = DTypeOf(dt);
    py::object item = obj.attr("item")();
    if (k == irt::DType::kF32) {
      out->value = irt::Value::F32(static_cast<float>(py::cast<double>(item)));
    } else if (k) {
      Convert(item, out, depth);
    } else {
      out->value = irt::Value::String(py::repr(obj));
      out->opaque_type = QualifiedType(obj);
    }
  } else if (PyFunction_Check(p) || PyCFunction_Check(p)) {
    out->value = irt::Value::Function(py::str(obj.attr("__qualname__")));
  } else {
    out->value = irt::Value::String(py::repr(obj));
    out->opaque_type = QualifiedType(obj);
  }
}

// ---------------------------------------------------------------------------
// irt::Value -> Python values

py::object FromValue(const irt::Value& v) {
  switch (v.kind()) {
    case irt::VKind::kNone:
    case irt::VKind::kNothing:
      return py::none();
    case irt::VKind::kBool:
      return py::bool_(v.as_bool());
    case irt::VKind::kI64:
      return py::int_(v.as_i64());
    case irt::VKind::kF64:
      return py::float_(v.as_f64());
    case irt::VKind::kF32:
      return py::module_::import("numpy").attr("float32")(v.as_f32());
    case irt::VKind::kString:
    case irt::VKind::kFunction:
      return py::str(v.str());
    case irt::VKind::kTuple: {
      py::tuple t(v.tuple().size());
      for (size_t i = 0; i < v.tuple().size(); ++i) t[i] = FromValue(v.tuple()[i]);
      return t;
    }
    case irt::VKind::kTensor: {
      const irt::Tensor& t = v.tensor();
      const char* fmt = NumpyFormat(t.dtype);
      py::array a(py::dtype(fmt), std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
      if (!t.data.empty()) std::memcpy(a.mutable_data(), t.data.data(), t.data.size());
      return a;
    }
  }
  return py::none();
}

// ---------------------------------------------------------------------------
// The writer

class Writer {
 public:
  // `path` empty: the trace is kept in memory (bytes()).
  Writer(const std::string& path, const std::string& producer, const std::string& version) {
    if (path.empty()) {
      out_ = irt::Output::Memory();
    } else {
      out_ = Take(irt::Output::Open(path));
    }
    irt::WriterOptions o;
    o.producer_name = producer;
    o.producer_version = version;
    // No second thread in a Python process, which may fork (multiprocessing)
    // while it records; at Python's cost per node, packing is small anyway.
    o.write_behind = false;
    w_ = std::make_unique<irt::TraceWriter>(out_.get(), o);
  }

  // operands: one item per operand, None for a reference, else a 1-tuple
  // holding the literal.
  uint32_t DefineClass(int kind, const std::string& op, uint32_t block, uint32_t pos, uint32_t aux,
                       uint32_t line, uint32_t col, bool has_condition, bool taken_when,
                       const py::list& operands) {
    irt::ClassSpec s;
    s.kind = static_cast<irt::NodeKind>(kind);
    s.op = op;
    s.block = block;
    s.pos = pos;
    s.aux = aux;
    s.line = line;
    s.col = static_cast<uint16_t>(std::min<uint32_t>(col, 0xFFFF));
    s.has_condition = has_condition;
    s.condition_taken_when = taken_when;
    for (py::handle o : operands) {
      if (o.is_none()) {
        s.operands.push_back(irt::OperandSpec::Ref());
      } else {
        s.operands.push_back(irt::OperandSpec::Literal(
            ToValue(py::reinterpret_borrow<py::tuple>(o)[0], nullptr, 0)));
      }
    }
    return w_->DefineClass(std::move(s));
  }

  void RegisterFunction(const std::string& name, const std::string& text) {
    w_->RegisterFunction(name, text);
  }

  // branches: (block, pos, target, conditional, condition, taken_when) each.
  void RegisterControlFlow(
      const std::string& name, uint32_t blocks,
      const std::vector<std::tuple<uint32_t, uint32_t, uint32_t, bool, uint32_t, bool>>& branches) {
    irt::ControlFlow cf;
    cf.blocks = blocks;
    for (const auto& [b, p, t, c, cond, tw] : branches) {
      cf.branches.push_back(irt::BranchFact{b, p, t, c, cond, tw});
    }
    std::string why = irt::CheckControlFlow(cf);
    if (!why.empty()) throw py::value_error("control-flow facts of " + name + ": " + why);
    w_->RegisterControlFlow(name, std::move(cf));
  }

  uint64_t Append(uint32_t cls, py::handle value, const py::tuple& refs) {
    NodeIds ids(refs);
    return AppendIds(cls, value.ptr(), ids.data(), ids.size());
  }

  // A node without a value (Jump, Call marker, Error).
  uint64_t Mark(uint32_t cls, const py::tuple& refs) {
    NodeIds ids(refs);
    return MarkIds(cls, ids.data(), ids.size());
  }

  uint64_t AppendIds(uint32_t cls, PyObject* p, const irt::NodeId* ids, uint32_t n) {
    uint64_t id;
    if (PyFloat_CheckExact(p)) {
      double d = PyFloat_AS_DOUBLE(p);
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      id = w_->AppendScalar(cls, irt::VKind::kF64, bits, ids, n);
    } else if (PyBool_Check(p)) {
      id = w_->AppendScalar(cls, irt::VKind::kBool, p == Py_True ? 1 : 0, ids, n);
    } else {
      std::string opaque;
      irt::Value v = ValueOf(py::handle(p), &opaque);
      id = w_->Append(cls, v, std::span<const irt::NodeId>(ids, n));
      if (!opaque.empty()) w_->AddMeta("python_type", irt::Value::String(opaque));
    }
    Check();
    return id;
  }

  uint64_t MarkIds(uint32_t cls, const irt::NodeId* ids, uint32_t n) {
    uint64_t id = w_->Append(cls, irt::Value(), std::span<const irt::NodeId>(ids, n));
    Check();
    return id;
  }

  void AddMeta(const std::string& key, py::handle v) { w_->AddMeta(key, ToValue(v, nullptr, 0)); }
  void AddTraceMeta(const std::string& key, py::handle v) {
    w_->AddTraceMeta(key, ToValue(v, nullptr, 0));
  }
  uint32_t Depth() const { return w_->depth(); }

  // Finishes the trace; returns its bytes for an in-memory writer.
  py::object Finish() {
    irt::Status s = w_->Finish();
    if (!s.ok()) Throw(s);
    s = out_->Commit();
    if (!s.ok()) Throw(s);
    if (out_->path().empty() || out_->memory().size() > 0) {
      return py::bytes(out_->memory());
    }
    return py::none();
  }

 private:
  struct NodeIds {
    explicit NodeIds(const py::tuple& refs) : n(refs.size()) {
      if (n > kInline) heap.resize(n);
      irt::NodeId* d = data();
      for (size_t i = 0; i < n; ++i) d[i] = PyLong_AsUnsignedLongLong(refs[i].ptr());
    }
    irt::NodeId* data() { return n > kInline ? heap.data() : inline_; }
    uint32_t size() const { return static_cast<uint32_t>(n); }
    static constexpr size_t kInline = 8;
    size_t n;
    irt::NodeId inline_[kInline];
    std::vector<irt::NodeId> heap;
  };
  void Check() {
    if (!w_->status().ok()) Throw(w_->status());
  }
  // A node's value. An array recorded again with the contents it had (the
  // same array passed to every call of a function, its Argument node
  // recorded each time) is given the Tensor recorded before: the writer
  // shares a tensor by object, so the trace holds it once per chunk
  // instead of once per call. Comparing costs a read of the array; a copy
  // was taken, and written, each time before.
  irt::Value ValueOf(py::handle obj, std::string* opaque) {
    const bool array = py::isinstance<py::array>(obj);
    if (array) {
      for (const RecentArray& r : recent_) {
        if (r.object == obj.ptr() && SameContents(obj, r.value.tensor())) return r.value;
      }
    }
    irt::Value v = ToValue(obj, opaque, 0);
    if (array && v.kind() == irt::VKind::kTensor) {
      recent_[recent_next_] = {obj.ptr(), v};
      recent_next_ = (recent_next_ + 1) % recent_.size();
    }
    return v;
  }
  // Whether the array holds what tensor t does: its type, dimensions and
  // bytes (C-contiguous arrays only; others are copied again).
  static bool SameContents(py::handle obj, const irt::Tensor& t) {
    auto arr = py::reinterpret_borrow<py::array>(obj);
    std::optional<irt::DType> dt = DTypeOf(arr.dtype());
    if (!dt || *dt != t.dtype || static_cast<size_t>(arr.ndim()) != t.shape.size() ||
        !(arr.flags() & py::array::c_style)) {
      return false;
    }
    for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
      if (arr.shape(i) != t.shape[static_cast<size_t>(i)]) return false;
    }
    const size_t bytes = static_cast<size_t>(arr.nbytes());
    return bytes == t.data.size() &&
           (bytes == 0 || std::memcmp(arr.data(), t.data.data(), bytes) == 0);
  }
  struct RecentArray {
    PyObject* object = nullptr;  // not a reference: only compared, never used
    irt::Value value;
  };
  std::array<RecentArray, 8> recent_;
  size_t recent_next_ = 0;
  std::unique_ptr<irt::Output> out_;
  std::unique_ptr<irt::TraceWriter> w_;
};

// ---------------------------------------------------------------------------
// The reader

struct TraceHandle {
  std::string bytes;  // for a trace read from memory
  std::unique_ptr<irt::Trace> trace;
};

// A tensor value as a read-only NumPy array over the trace's own bytes (the
// mapped file): no copy. The array keeps the trace open.
py::object TensorArray(const std::shared_ptr<TraceHandle>& h, const irt::TensorView& t) {
  const char* fmt = NumpyFormat(t.dtype);
  py::capsule owner(new std::shared_ptr<TraceHandle>(h),
                    [](void* p) { delete static_cast<std::shared_ptr<TraceHandle>*>(p); });
  static const uint8_t kEmpty[8] = {};
  const void* data = t.data.empty() ? kEmpty : t.data.data();
  py::array a(py::dtype(fmt), std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()), data,
              owner);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

// A node's value: tensors in place, the rest decoded.
py::object NodeValue(const std::shared_ptr<TraceHandle>& h, const irt::NodeView& v) {
  if (std::optional<irt::TensorView> t = v.tensor()) return TensorArray(h, *t);
  return FromValue(v.value());
}

class Node;

class PyTrace {
 public:
  static PyTrace Open(const std::string& path) {
    auto h = std::make_shared<TraceHandle>();
    h->trace = std::make_unique<irt::Trace>(Take(irt::Trace::Open(path)));
    return PyTrace(h);
  }
  static PyTrace FromBytes(const py::bytes& b, const std::string& name) {
    auto h = std::make_shared<TraceHandle>();
    h->bytes = b;
    h->trace = std::make_unique<irt::Trace>(Take(irt::Trace::FromBytes(
        reinterpret_cast<const uint8_t*>(h->bytes.data()), h->bytes.size(), name)));
    return PyTrace(h);
  }
  explicit PyTrace(std::shared_ptr<TraceHandle> h) : h_(std::move(h)) {}
  const irt::Trace& t() const { return *h_->trace; }
  std::shared_ptr<TraceHandle> handle() const { return h_; }

  std::string Print(uint32_t levels, const std::string& node, bool meta) const {
    irt::PrintOptions o;
    o.levels = levels;
    o.node_path = node;
    o.show_meta = meta;
    auto out = irt::Output::Memory();
    irt::Status s = irt::PrintText(t(), o, *out);
    if (!s.ok()) Throw(s);
    s = out->Commit();
    if (!s.ok()) Throw(s);
    return out->memory();
  }
  std::string Json(uint32_t levels) const {
    irt::PrintOptions o;
    o.levels = levels;
    auto out = irt::Output::Memory();
    irt::Status s = irt::PrintJson(t(), o, *out);
    if (!s.ok()) Throw(s);
    s = out->Commit();
    if (!s.ok()) Throw(s);
    return out->memory();
  }
  py::dict Meta() const {
    py::dict d;
    for (const irt::MetaEntry& m : t().trace_meta())
      d[py::str(std::string(m.key))] = FromValue(m.value);
    return d;
  }

 private:
  std::shared_ptr<TraceHandle> h_;
};

// A node of the call tree, as IRTracker.jl's nodes: its parent call (nullptr
// for the root) and its 0-based position in that call's body. A call loads
// its body (irt::CallBody: segments, not nodes) once, when it is first
// asked for, and its copies and children share it; the dependency queries
// are CallBody's, the analysis irt-slice makes within one call.
class Node {
 public:
  Node(std::shared_ptr<TraceHandle> h, irt::Child c, std::shared_ptr<const Node> parent,
       int64_t pos)
      : h_(std::move(h)), c_(c), parent_(std::move(parent)), pos_(pos) {}
  const irt::Trace& t() const { return *h_->trace; }
  irt::NodeView view() const { return Take(t().node(c_.id)); }

  uint64_t id() const { return c_.id; }
  std::string Kind() const { return std::string(irt::NodeKindName(view().kind())); }
  std::string Op() const { return std::string(view().op()); }
  bool IsCall() const { return c_.is_call(); }
  py::object Value() const {
    // A call's value is the value its Return gives.
    if (c_.is_call() && c_.end == irt::kNoNode) return py::none();
    return NodeValue(h_, c_.is_call() ? Take(t().node(c_.end)) : view());
  }
  py::dict Location() const {
    irt::Location l = view().location();
    py::dict d;
    d["block"] = l.block;
    d["pos"] = l.pos;
    d["is_branch"] = l.is_branch;
    d["line"] = l.line;
    d["col"] = l.col;
    return d;
  }
  py::dict Meta() const {
    py::dict d;
    for (const irt::MetaEntry& m : view().meta()) {
      d[py::str(std::string(m.key))] = FromValue(m.value);
    }
    return d;
  }
  py::list Operands() const {
    irt::NodeView v = view();
    py::list l;
    for (size_t i = 0; i < v.num_operands(); ++i) {
      irt::Operand o = v.operand(i);
      if (o.is_ref) {
        l.append(py::make_tuple("ref", o.ref));
      } else {
        l.append(py::make_tuple("literal", FromValue(o.literal)));
      }
    }
    return l;
  }
  static std::vector<Node> Children(const std::shared_ptr<const Node>& self) {
    std::vector<Node> out;
    if (!self->c_.is_call()) return out;
    const irt::CallBody& b = self->Body();
    out.reserve(b.size());
    for (size_t i = 0; i < b.size(); ++i) out.emplace_back(self->h_, b[i], self, i);
    return out;
  }
  std::optional<Node> Parent() const {
    if (!parent_) return std::nullopt;
    return *parent_;
  }
  // @i in the parent's body (1-based); None for the root.
  std::optional<uint64_t> Position() const {
    if (!parent_) return std::nullopt;
    return static_cast<uint64_t>(pos_) + 1;
  }
  // "@8/@4" from the root ("@" for the root), as irt-print --node takes it.
  std::string Path() const {
    std::vector<int64_t> steps;
    for (const Node* n = this; n->parent_; n = n->parent_.get()) steps.push_back(n->pos_ + 1);
    if (steps.empty()) return "@";
    std::string out;
    for (size_t i = steps.size(); i-- > 0;) {
      if (!out.empty()) out += '/';
      out += '@' + std::to_string(steps[i]);
    }
    return out;
  }
  // The node's line as irt-print shows it (the root: its call line).
  std::string Repr() const {
    irt::PrintOptions o;
    o.show_meta = false;
    if (!parent_) {
      o.levels = 1;
      auto out = irt::Output::Memory();
      irt::Status s = irt::PrintText(t(), o, *out);
      if (s.ok()) s = out->Commit();
      if (!s.ok()) Throw(s);
      std::string text = out->memory();
      return text.substr(0, text.find('\n'));
    }
    return Take(irt::FormatNode(t(), parent_->Body(), static_cast<size_t>(pos_), o));
  }

  // IRTracker's graph API, within the call holding the node.
  py::list Referenced(bool numbered) const {
    py::list l;
    if (!parent_) return l;
    const irt::CallBody& b = parent_->Body();
    if (numbered) {
      for (const auto& [arg, p] : Take(b.ReferencedNumbered(static_cast<size_t>(pos_)))) {
        l.append(py::make_tuple(arg, Sibling(p)));
      }
    } else {
      for (size_t p : Take(b.Referenced(static_cast<size_t>(pos_)))) l.append(Sibling(p));
    }
    return l;
  }
  py::list Backward() const { return Siblings(&irt::CallBody::Backward); }
  py::list Dependents() const { return Siblings(&irt::CallBody::Dependents); }
  py::list Forward() const { return Siblings(&irt::CallBody::Forward); }

  bool operator==(const Node& o) const { return h_ == o.h_ && c_.id == o.c_.id; }
  size_t Hash() const { return std::hash<uint64_t>()(c_.id); }

 private:
  struct BodyCache {
    std::optional<irt::CallBody> body;
  };
  const irt::CallBody& Body() const {
    if (!body_->body) body_->body = Take(irt::CallBody::Load(t(), c_));
    return *body_->body;
  }
  Node Sibling(size_t p) const {
    return Node(h_, parent_->Body()[p], parent_, static_cast<int64_t>(p));
  }
  py::list Siblings(irt::Result<std::vector<size_t>> (irt::CallBody::*query)(size_t) const) const {
    py::list l;
    if (!parent_) return l;
    for (size_t p : Take((parent_->Body().*query)(static_cast<size_t>(pos_)))) {
      l.append(Sibling(p));
    }
    return l;
  }

  std::shared_ptr<TraceHandle> h_;
  irt::Child c_;
  std::shared_ptr<const Node> parent_;  // the call whose body holds this node
  int64_t pos_ = -1;                    // in parent_'s body
  std::shared_ptr<BodyCache> body_ = std::make_shared<BodyCache>();
};

// The node at "@8/@4" (as irt-print --node), with its parents.
std::shared_ptr<Node> NodeAt(const PyTrace& tr, const std::string& path) {
  std::vector<uint64_t> steps = Take(irt::ParseNodePath(path));
  auto n = std::make_shared<Node>(tr.handle(), Take(irt::RootCall(tr.t())), nullptr, -1);
  std::string at = "@";
  for (uint64_t step : steps) {
    if (!n->IsCall()) {
      throw py::key_error(at + " is not a call: " + path + " goes below it");
    }
    std::vector<Node> children = Node::Children(n);
    if (step > children.size()) {
      throw py::key_error("no node " + path + ": " + at + " has " +
                          std::to_string(children.size()) + " children");
    }
    n = std::make_shared<Node>(children[step - 1]);
    at = n->Path();
  }
  return n;
}

// A command-line argument as irt-trace reads it: a literal, or @FILE.npy.
// ValueError for a malformed literal, TraceError for a file that cannot
// be read.
py::object ParseArgument(const std::string& text) {
  irt::Result<irt::Value> v = irt::ParseValueArgument(text);
  if (!v.ok() && v.error().code() == irt::Code::kUsage) throw py::value_error(v.error().message());
  return FromValue(Take(std::move(v)));
}

// `extra`: (rule text, where it comes from) pairs merged over the file's
// rules, in order (the rules of functions marked irtrace.primitive).
py::dict Grad(const PyTrace& tr, const std::string& rules_path, const std::vector<uint32_t>& wrt,
              bool forward, const std::vector<std::pair<uint32_t, py::object>>& tangents,
              const std::vector<std::pair<std::string, std::string>>& extra) {
  irt::RuleSet rules = Take(irt::RuleSet::Load(rules_path));
  for (const auto& [text, origin] : extra) rules.Merge(Take(irt::RuleSet::Parse(text, origin)));
  irt::GradOptions o;
  o.mode = forward ? irt::GradMode::kForward : irt::GradMode::kReverse;
  o.wrt = wrt;
  for (const auto& [p, v] : tangents) o.tangents.emplace_back(p, ToValue(v, nullptr, 0));
  irt::GradResult r = Take(irt::Differentiate(tr.t(), rules, o));
  auto out = irt::Output::Memory();
  irt::Status s = irt::PrintGradient(r, {}, *out);
  if (!s.ok()) Throw(s);
  s = out->Commit();
  if (!s.ok()) Throw(s);
  py::dict d;
  d["function"] = r.function;
  d["result"] = FromValue(r.result);
  d["tangent"] = FromValue(r.tangent);
  py::list args;
  for (const irt::ArgumentDerivative& a : r.arguments) {
    py::dict ad;
    ad["pos"] = a.pos;
    ad["value"] = FromValue(a.value);
    ad["differentiable"] = a.differentiable;
    ad["chosen"] = a.chosen;
    ad["derivative"] = FromValue(a.derivative);
    args.append(ad);
  }
  d["arguments"] = args;
  d["text"] = out->memory();
  return d;
}

}  // namespace

// ---------------------------------------------------------------------------
// The recording hot path: append(cls, value, ref...) and mark(cls, ref...)
// as plain CPython vectorcall functions bound to one Writer. pybind11's
// general dispatch and the tuple of references cost more than the append
// itself; these take their arguments from the caller's stack.

constexpr const char* kWriterCapsule = "irtrace._native.Writer";

template <bool kHasValue>
PyObject* FastAppend(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  constexpr Py_ssize_t kFirstRef = kHasValue ? 2 : 1;
  auto* w = static_cast<Writer*>(PyCapsule_GetPointer(self, kWriterCapsule));
  if (w == nullptr) return nullptr;
  if (nargs < kFirstRef) {
    PyErr_SetString(PyExc_TypeError,
                    kHasValue ? "append(cls, value, ref...)" : "mark(cls, ref...)");
    return nullptr;
  }
  constexpr Py_ssize_t kInline = 16;
  irt::NodeId inline_ids[kInline];
  std::vector<irt::NodeId> heap;
  Py_ssize_t n = nargs - kFirstRef;
  irt::NodeId* ids = inline_ids;
  if (n > kInline) {
    heap.resize(static_cast<size_t>(n));
    ids = heap.data();
  }
  unsigned long cls = PyLong_AsUnsignedLong(args[0]);
  for (Py_ssize_t i = 0; i < n; ++i) ids[i] = PyLong_AsUnsignedLongLong(args[kFirstRef + i]);
  if (PyErr_Occurred()) return nullptr;
  try {
    uint64_t id =
        kHasValue ? w->AppendIds(static_cast<uint32_t>(cls), args[1], ids, static_cast<uint32_t>(n))
                  : w->MarkIds(static_cast<uint32_t>(cls), ids, static_cast<uint32_t>(n));
    return PyLong_FromUnsignedLongLong(id);
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(g_error, e.what());
  }
  return nullptr;
}

PyMethodDef g_fast_append = {
    "append", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(FastAppend<true>)),
    METH_FASTCALL, "append(cls, value, ref...) -> node id"};
PyMethodDef g_fast_mark = {
    "mark", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(FastAppend<false>)),
    METH_FASTCALL, "mark(cls, ref...) -> node id"};

// resume(gen, value): gen.send(value) without StopIteration: what gen
// yields or, when it returns, what it returns (the recording driver tells
// them apart by their shapes). An exception inside gen propagates.
PyObject* Resume(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "resume(generator, value)");
    return nullptr;
  }
  PyObject* result = nullptr;
  if (PyIter_Send(args[0], args[1], &result) == PYGEN_ERROR) return nullptr;
  return result;
}

PyMethodDef g_resume = {
    "resume", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Resume)), METH_FASTCALL,
    "resume(gen, value): gen.send(value), returning (not raising) its result"};

// The fast function `def` bound to the Writer `obj` (kept alive by it).
py::object FastFunction(py::object obj, PyMethodDef* def) {
  Writer* w = obj.cast<Writer*>();
  PyObject* cap = PyCapsule_New(w, kWriterCapsule, [](PyObject* c) {
    Py_XDECREF(static_cast<PyObject*>(PyCapsule_GetContext(c)));
  });
  if (cap == nullptr) throw py::error_already_set();
  PyCapsule_SetContext(cap, obj.release().ptr());
  PyObject* f = PyCFunction_New(def, cap);
  Py_DECREF(cap);
  if (f == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(f);
}

PYBIND11_MODULE(_native, m) {
  m.doc() = "libtrace's writer, reader, printer and derivative engine";
  m.add_object("resume", py::reinterpret_steal<py::object>(PyCFunction_New(&g_resume, nullptr)));
  static py::exception<std::runtime_error> err(m, "TraceError");
  g_error = err.ptr();
  static py::exception<std::overflow_error> overflow(m, "Int64Overflow", PyExc_OverflowError);
  g_overflow = overflow.ptr();

  m.attr("KIND_ARGUMENT") = static_cast<int>(irt::NodeKind::kArgument);
  m.attr("KIND_CONSTANT") = static_cast<int>(irt::NodeKind::kConstant);
  m.attr("KIND_PRIMITIVE") = static_cast<int>(irt::NodeKind::kPrimitive);
  m.attr("KIND_CALL") = static_cast<int>(irt::NodeKind::kCall);
  m.attr("KIND_SPECIAL") = static_cast<int>(irt::NodeKind::kSpecial);
  m.attr("KIND_JUMP") = static_cast<int>(irt::NodeKind::kJump);
  m.attr("KIND_RETURN") = static_cast<int>(irt::NodeKind::kReturn);
  m.attr("KIND_ERROR") = static_cast<int>(irt::NodeKind::kError);
#ifdef IRT_VERSION
  m.attr("__version__") = IRT_VERSION;
#endif

  py::class_<Writer>(m, "Writer")
      .def(py::init<const std::string&, const std::string&, const std::string&>(), py::arg("path"),
           py::arg("producer"), py::arg("version"))
      .def("define_class", &Writer::DefineClass)
      .def("register_function", &Writer::RegisterFunction)
      .def("register_control_flow", &Writer::RegisterControlFlow)
      .def("append", &Writer::Append)
      .def("mark", &Writer::Mark)
      .def("fast_append", [](py::object self) { return FastFunction(self, &g_fast_append); })
      .def("fast_mark", [](py::object self) { return FastFunction(self, &g_fast_mark); })
      .def("add_meta", &Writer::AddMeta)
      .def("add_trace_meta", &Writer::AddTraceMeta)
      .def("depth", &Writer::Depth)
      .def("finish", &Writer::Finish);

  py::class_<Node, std::shared_ptr<Node>>(m, "Node")
      .def_property_readonly("id", &Node::id)
      .def_property_readonly("kind", &Node::Kind)
      .def_property_readonly("op", &Node::Op)
      .def_property_readonly("is_call", &Node::IsCall)
      .def_property_readonly("value", &Node::Value)
      .def_property_readonly("location", &Node::Location)
      .def_property_readonly("metadata", &Node::Meta)
      .def_property_readonly("operands", &Node::Operands)
      .def_property_readonly("children",
                             [](const std::shared_ptr<Node>& n) { return Node::Children(n); })
      .def_property_readonly("parent", &Node::Parent)
      .def_property_readonly("position", &Node::Position)
      .def_property_readonly("path", &Node::Path)
      .def("referenced", &Node::Referenced, py::arg("numbered") = false)
      .def("backward", &Node::Backward)
      .def("dependents", &Node::Dependents)
      .def("forward", &Node::Forward)
      .def("__eq__", [](const Node& a, const Node& b) { return a == b; })
      .def("__hash__", &Node::Hash)
      .def("__repr__", &Node::Repr);

  py::class_<PyTrace>(m, "Trace")
      .def_static("open", &PyTrace::Open)
      .def_static("from_bytes", &PyTrace::FromBytes)
      .def_property_readonly("root",
                             [](const PyTrace& t) {
                               return std::make_shared<Node>(t.handle(), Take(irt::RootCall(t.t())),
                                                             nullptr, -1);
                             })
      .def_property_readonly("size", [](const PyTrace& t) { return t.t().size(); })
      .def_property_readonly("complete", [](const PyTrace& t) { return t.t().complete(); })
      .def_property_readonly("metadata", &PyTrace::Meta)
      .def_property_readonly("producer",
                             [](const PyTrace& t) { return std::string(t.t().producer_name()); })
      .def("function_ir",
           [](const PyTrace& t, const std::string& name) -> std::optional<std::string> {
             auto ir = t.t().FunctionIR(name, 0);
             if (!ir) return std::nullopt;
             return std::string(*ir);
           })
      .def("print", &PyTrace::Print, py::arg("levels") = 0, py::arg("node") = "",
           py::arg("meta") = true)
      .def("json", &PyTrace::Json, py::arg("levels") = 0)
      .def("node", &NodeAt, py::arg("path"));

  m.def("parse_argument", &ParseArgument, py::arg("text"));
  m.def("grad", &Grad, py::arg("trace"), py::arg("rules"), py::arg("wrt"), py::arg("forward"),
        py::arg("tangents"), py::arg("extra") = std::vector<std::pair<std::string, std::string>>());
}
