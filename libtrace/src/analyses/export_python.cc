// A trace as straight-line Python: one assignment per recorded node, in
// execution order, nested calls inlined, branches resolved as recorded
// (each recorded conditional jump becomes a guard that raises Diverged when
// the condition comes out otherwise), random draws as their recorded values.
// The prelude below gives each standard operation libtrace's scalar meaning
// (Julia's promotion Bool < Int64 < Float32 < Float64, Int64 that wraps,
// IEEE results instead of Python's exceptions) and takes every
// floating-point function from the C library through ctypes, the library
// libtrace's kernels call, so that the code reproduces the recorded values
// bit for bit. Variables are named by global node number (n7), so memory is
// bounded by the call depth: one small frame per open call.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/export_walk.h"
#include "irt/json.h"
#include "irt/value.h"
#include "print/notation.h"

namespace irt::internal {

namespace {

constexpr std::string_view kPrelude = R"PY(import ctypes
import ctypes.util
import math
import struct

import numpy as np

np.seterr(all="ignore")
_libm = ctypes.CDLL(ctypes.util.find_library("m"))


def _cfn(name, argc, ctype):
    f = getattr(_libm, name)
    f.restype = ctype
    f.argtypes = [ctype] * argc
    return f


def f64(bits):
    """The Float64 with these bits (NaN payloads and signed zeros kept)."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def f32(bits):
    """The Float32 with these bits."""
    return np.frombuffer(struct.pack("<I", bits), dtype=np.float32)[0]


class Fn:
    """A function value, as recorded (the callee passed as argument 1)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Fn(%r)" % self.name


class Diverged(Exception):
    """A branch came out otherwise than the trace recorded."""


def _rank(x):
    t = type(x)
    if t is bool:
        return 0
    if t is int:
        return 1
    if t is np.float32:
        return 2
    if t is float:
        return 3
    raise TypeError("not a real number: %r" % (x,))


def _wrap(i):
    i &= 0xFFFFFFFFFFFFFFFF
    return i - (1 << 64) if i >> 63 else i


def _fl(r, x):
    return np.float32(x) if r == 2 else float(x)


def _rank2(a, b):
    return max(_rank(a), _rank(b))


def _math1(name):
    d, f = _cfn(name, 1, ctypes.c_double), _cfn(name + "f", 1, ctypes.c_float)

    def op(a):
        return np.float32(f(a)) if _rank(a) == 2 else d(float(a))
    return op


def _math2(name):
    d, f = _cfn(name, 2, ctypes.c_double), _cfn(name + "f", 2, ctypes.c_float)

    def op(a, b):
        if _rank2(a, b) == 2:
            return np.float32(f(np.float32(a), np.float32(b)))
        return d(float(a), float(b))
    return op


for _name in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan", "log1p", "expm1",
              "lgamma", "sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh", "log2",
              "log10", "exp2", "cbrt", "erf", "erfc"):
    globals()[_name] = _math1(_name)
atan2 = _math2("atan2")
hypot = _math2("hypot")
_pow = _math2("pow")
_cpow = _cfn("pow", 2, ctypes.c_double)


def add(a, b):
    r = _rank2(a, b)
    return _wrap(a + b) if r <= 1 else _fl(r, a) + _fl(r, b)


def sub(a, b):
    r = _rank2(a, b)
    return _wrap(a - b) if r <= 1 else _fl(r, a) - _fl(r, b)


def mul(a, b):
    r = _rank2(a, b)
    return _wrap(a * b) if r <= 1 else _fl(r, a) * _fl(r, b)


def div(a, b):
    if _rank2(a, b) == 2:
        return np.float32(a) / np.float32(b)
    return float(np.float64(a) / np.float64(b))


def pow_(a, b):
    ra, rb = _rank(a), _rank(b)
    if ra <= 1 and rb <= 1:
        if b < 0:
            if ra == 0 and not a or ra == 1 and a not in (1, -1):
                raise ValueError("an integer to a negative power")
            return a if ra == 0 else (1 if a == 1 or b % 2 == 0 else -1)
        return (b == 0 or a) if ra == 0 else _wrap(pow(a, b, 1 << 64))
    if rb <= 1:
        if ra == 2:
            return np.float32(_cpow(float(a), float(int(b))))
        return _cpow(a, float(int(b)))
    return _pow(a, b)


def _real(x):
    return float(x) if type(x) is np.float32 else x


def lt(a, b):
    return _real(a) < _real(b)


def le(a, b):
    return _real(a) <= _real(b)


def gt(a, b):
    return _real(a) > _real(b)


def ge(a, b):
    return _real(a) >= _real(b)


def eq(a, b):
    return _real(a) == _real(b)


def ne(a, b):
    return not eq(a, b)


def _fmax(x, y):
    if math.isnan(x) or math.isnan(y):
        return x if math.isnan(x) else y
    return x if (x > y or (x == y and not math.copysign(1.0, x) < 0)) else y


def _fmin(x, y):
    if math.isnan(x) or math.isnan(y):
        return x if math.isnan(x) else y
    return x if (x < y or (x == y and math.copysign(1.0, x) < 0)) else y


def max_(a, b):
    r = _rank2(a, b)
    if r == 0:
        return a or b
    if r == 1:
        return max(int(a), int(b))
    return _fl(r, _fmax(float(a), float(b)))


def min_(a, b):
    r = _rank2(a, b)
    if r == 0:
        return a and b
    if r == 1:
        return min(int(a), int(b))
    return _fl(r, _fmin(float(a), float(b)))


def _bits(a, b, f):
    z = f(int(a), int(b))
    return z != 0 if _rank(a) == 0 and _rank(b) == 0 else z


def and_(a, b):
    return _bits(a, b, lambda x, y: x & y)


def or_(a, b):
    return _bits(a, b, lambda x, y: x | y)


def xor(a, b):
    return _bits(a, b, lambda x, y: x ^ y)


def not_(a):
    return not a


def neg(a):
    r = _rank(a)
    return _wrap(-int(a)) if r <= 1 else -a


def abs_(a):
    r = _rank(a)
    if r == 0:
        return a
    return _wrap(abs(a)) if r == 1 else _fl(r, math.fabs(a))


def sign(a):
    r = _rank(a)
    if r <= 1:
        return (a > 0) - (a < 0)
    if math.isnan(a) or a == 0:
        return a
    return _fl(r, 1.0 if a > 0 else -1.0)


def zero(a):
    r = _rank(a)
    return False if r == 0 else 0 if r == 1 else _fl(r, 0.0)


def one(a):
    r = _rank(a)
    return True if r == 0 else 1 if r == 1 else _fl(r, 1.0)


def identity(a):
    return a


def ifelse(c, a, b):
    return a if c else b


def _idiv(a, b, kind):
    r = _rank2(a, b)
    if r <= 1:
        x, y = int(a), int(b)
        quotient = kind in ("div", "fld")
        if y == 0 or (quotient and y == -1 and x == -(1 << 63)):
            raise ZeroDivisionError("integer division error")
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        rem = x - q * y
        if not quotient:
            q = rem
        if kind in ("fld", "mod") and rem != 0 and (rem < 0) != (y < 0):
            q = q - 1 if kind == "fld" else q + y
        q = _wrap(q)
        return q != 0 if r == 0 else q
    t = np.float32 if r == 2 else np.float64
    x, y = t(a), t(b)
    if kind == "rem":
        z = np.fmod(x, y)
    elif kind == "div":
        if y == 0 or not np.isfinite(x) or not np.isfinite(y):
            z = np.trunc(x / y)
        else:
            z = np.rint((x - np.fmod(x, y)) / y)
    elif kind == "mod":
        z = np.fmod(x, y)
        if y != 0:
            if z != 0:
                if (y < 0) != (z < 0):
                    z = z + y
            else:
                z = np.copysign(t(0), y)
    elif y == 0 or not np.isfinite(x) or not np.isfinite(y):
        z = np.floor(x / y)
    else:
        m = np.fmod(x, y)
        q = (x - m) / y
        if m != 0 and (y < 0) != (m < 0):
            q = q - t(1)
        if q == 0:
            z = np.copysign(t(0), x / y)
        else:
            z = np.floor(q)
            if q - z > t(0.5):
                z = z + t(1)
    return float(z) if r == 3 else z


def idiv(a, b):
    return _idiv(a, b, "div")


def rem(a, b):
    return _idiv(a, b, "rem")


def mod(a, b):
    return _idiv(a, b, "mod")


def fld(a, b):
    return _idiv(a, b, "fld")
)PY";

// The helper of the prelude for a standard operation of `arity` operands.
std::string_view Helper(std::string_view op, uint32_t arity) {
  struct Row {
    std::string_view op;
    uint32_t arity;
    std::string_view helper;
  };
  static constexpr Row kRows[] = {
      {"+", 2, "add"},         {"-", 2, "sub"},       {"-", 1, "neg"},
      {"*", 2, "mul"},         {"/", 2, "div"},       {"^", 2, "pow_"},
      {"<", 2, "lt"},          {"<=", 2, "le"},       {">", 2, "gt"},
      {">=", 2, "ge"},         {"==", 2, "eq"},       {"!=", 2, "ne"},
      {"!", 1, "not_"},        {"&", 2, "and_"},      {"|", 2, "or_"},
      {"xor", 2, "xor"},       {"div", 2, "idiv"},    {"rem", 2, "rem"},
      {"mod", 2, "mod"},       {"fld", 2, "fld"},     {"min", 2, "min_"},
      {"max", 2, "max_"},      {"abs", 1, "abs_"},    {"sign", 1, "sign"},
      {"zero", 1, "zero"},     {"one", 1, "one"},     {"identity", 1, "identity"},
      {"ifelse", 3, "ifelse"}, {"atan2", 2, "atan2"}, {"hypot", 2, "hypot"},
  };
  for (const Row& r : kRows) {
    if (r.op == op && r.arity == arity) return r.helper;
  }
  static constexpr std::string_view kMath[] = {"sin",  "cos",   "tan",   "exp",   "log",    "sqrt",
                                               "tanh", "atan",  "log1p", "expm1", "lgamma", "sinh",
                                               "cosh", "asin",  "acos",  "asinh", "acosh",  "atanh",
                                               "log2", "log10", "exp2",  "cbrt",  "erf",    "erfc"};
  if (arity == 1) {
    for (std::string_view m : kMath) {
      if (m == op) return m;
    }
  }
  return {};
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_';
    if (!ok) return false;
  }
  return true;
}

// A value as a Python expression that evaluates to it bit for bit; false
// for what the prelude has no type for (tensors, strings that are not UTF-8).
bool AppendPyValue(std::string& out, const Value& v) {
  // Tuples are written with an explicit stack: the format lets them nest 64 deep.
  struct Item {
    const Value* v;
    size_t next;  // for a tuple: the next item to write
  };
  std::vector<Item> stack{{&v, 0}};
  while (!stack.empty()) {
    Item& it = stack.back();
    const Value& x = *it.v;
    if (x.kind() == VKind::kTuple) {
      const auto& items = x.tuple();
      if (it.next == 0) out += '(';
      if (it.next == items.size()) {
        if (items.size() == 1) out += ',';
        out += ')';
        stack.pop_back();
        continue;
      }
      if (it.next > 0) out += ", ";
      const Value* child = &items[it.next++];
      stack.push_back({child, 0});
      continue;
    }
    stack.pop_back();
    switch (x.kind()) {
      case VKind::kNothing:
        out += "None";
        break;
      case VKind::kBool:
        out += x.as_bool() ? "True" : "False";
        break;
      case VKind::kI64:
        out += std::to_string(x.as_i64());
        break;
      case VKind::kF64: {
        double d = x.as_f64();
        if (std::isfinite(d)) {
          out += FormatDouble(d);
        } else {
          out += fmt::format("f64(0x{:016x})", x.bits());
        }
        break;
      }
      case VKind::kF32:
        out += fmt::format("f32(0x{:08x})", static_cast<uint32_t>(x.bits()));
        break;
      case VKind::kString: {
        std::string q = JsonQuote(x.str());
        if (q.size() != x.str().size() + 2 && q.find("\\ufffd") != std::string::npos) return false;
        out += q;
        break;
      }
      case VKind::kFunction:
        out += "Fn(" + JsonQuote(x.str()) + ")";
        break;
      default:
        return false;
    }
  }
  return true;
}

// One open call of the code being written.
struct CodeFrame {
  std::vector<std::string> jump_args;  // the operands of the last jump of this body
  NodeId last_jump = kNoNode;
  uint32_t params = 0;  // the call's operands (the root's parameters)
};

// Writes the code of the trace in `stream` to `out`, or with out == nullptr
// only checks that every node can be written.
Status Generate(ChunkStream& stream, Output* out) {
  std::vector<CodeFrame> code;
  std::string buf, sig_name;
  const std::string& name = stream.name();
  auto fail = [&](const RawNode& node, const Place& place, const std::string& what) -> Status {
    return DataError(name + ": node " + std::to_string(node.id()) +
                     (place.has_path ? " (" + std::string(place.path) + ")" : "") + ": " + what);
  };
  auto expr = [&](const RawNode& node, uint32_t code_j, uint32_t* ref, std::string* e) -> bool {
    if (code_j == 0) {
      *e = "n" + std::to_string(node.ref((*ref)++));
      return true;
    }
    e->clear();
    return AppendPyValue(*e, node.chunk().literal(code_j));
  };
  buf += "# Generated by irt-export --python: the recorded run as straight-line code.\n";
  buf += kPrelude;
  Status s = Walk(
      stream,
      [&](const RawNode& node, const Place& place, std::vector<ExportFrame>&, uint32_t&) -> Status {
        if (out != nullptr && buf.size() >= (1 << 16)) {
          out->Write(buf);
          buf.clear();
          if (out->failed()) return IoError("write failed");
        } else if (out == nullptr) {
          buf.clear();
        }
        const NodeKind kind = node.kind();
        std::string line = "    ";
        std::string lhs = "n" + std::to_string(node.id());
        uint32_t ref = 0;
        std::vector<std::string> args;
        uint32_t n = node.num_operands();
        bool cond = kind == NodeKind::kJump && node.has_condition();
        for (uint32_t j = 0; j < n; ++j) {
          std::string e;
          if (!expr(node, node.operand_code(j), &ref, &e)) {
            return fail(node, place,
                        "an operand that --python cannot write (" +
                            TypeName(node.chunk().literal(node.operand_code(j))) + ")");
          }
          args.push_back(std::move(e));
        }
        std::string loc;
        AppendLocation(loc, node.location());
        auto comment = [&]() {
          return "  # " + loc + (place.has_path ? " " + std::string(place.path) : "");
        };
        auto value = [&](std::string* e) -> Status {
          e->clear();
          if (!AppendPyValue(*e, node.value())) {
            return fail(node, place,
                        "a value that --python cannot write (" + TypeName(node.value()) + ")");
          }
          return Status::Ok();
        };
        switch (kind) {
          case NodeKind::kCall: {
            if (place.depth == 0) {
              sig_name = IsIdentifier(node.op()) ? std::string(node.op()) : "traced";
              line = "\n\ndef " + sig_name + "(";
              for (uint32_t j = 0; j < n; ++j) line += (j ? ", a" : "a") + std::to_string(j + 1);
              line += "):\n    \"\"\"" + DisplayString(node.op()) +
                      ", as the trace recorded it.\"\"\"\n";
              buf += line;
            } else {
              line += "# call " + DisplayString(node.op()) + "(";
              for (size_t j = 0; j < args.size(); ++j) line += (j ? ", " : "") + args[j];
              line += ")" + comment() + "\n";
              buf += line;
            }
            code.emplace_back();
            code.back().params = n;
            return Status::Ok();
          }
          case NodeKind::kArgument: {
            uint32_t k = node.aux();
            std::string e;
            if (k != 0) {
              CodeFrame& f = code.back();
              if (n != 1 || node.operand_code(0) != 0 || node.ref(0) != f.last_jump ||
                  k > f.jump_args.size()) {
                return fail(node, place, "a block argument that does not follow its jump");
              }
              e = f.jump_args[k - 1];
            } else if (n >= 1) {
              e = args[0];
            } else if (place.depth == 1 && node.vkind() != VKind::kFunction) {
              // The root's argument %k is parameter k - 1 (%1 is the function
              // itself), so a slice that drops an argument keeps the others'.
              uint32_t pos = node.location().pos;
              uint32_t k1 = pos >= 2 && pos - 1 <= code.back().params ? pos - 1 : 0;
              if (k1 == 0) return fail(node, place, "an argument of the root call out of place");
              e = "a" + std::to_string(k1);
            } else {
              IRT_RETURN_IF_ERROR(value(&e));
            }
            buf += line + lhs + " = " + e + comment() + "\n";
            return Status::Ok();
          }
          case NodeKind::kConstant: {
            std::string e;
            IRT_RETURN_IF_ERROR(value(&e));
            buf += line + lhs + " = " + e + comment() + "\n";
            return Status::Ok();
          }
          case NodeKind::kPrimitive: {
            std::string e;
            if (node.op() == "rand" || node.op() == "randn") {
              IRT_RETURN_IF_ERROR(value(&e));
              buf += line + lhs + " = " + e + comment() + ", " + std::string(node.op()) +
                     "() as drawn\n";
              return Status::Ok();
            }
            if (node.vkind() == VKind::kTensor || node.vkind() == VKind::kTuple) {
              return fail(node, place,
                          "a " + TypeName(node.value()) + " value: --python writes scalars only");
            }
            std::string_view h = Helper(node.op(), n);
            if (h.empty()) {
              return fail(node, place,
                          "--python has no code for ⟨" + DisplayString(node.op()) + "⟩ of " +
                              std::to_string(n) + " operands");
            }
            e = std::string(h) + "(";
            for (size_t j = 0; j < args.size(); ++j) e += (j ? ", " : "") + args[j];
            e += ")";
            buf += line + lhs + " = " + e + comment() + "\n";
            return Status::Ok();
          }
          case NodeKind::kJump: {
            CodeFrame& f = code.back();
            f.last_jump = node.id();
            f.jump_args.assign(args.begin(), args.end() - (cond ? 1 : 0));
            if (cond && node.operand_code(n - 1) == 0) {
              bool when = (node.flags() & 2) != 0;
              buf += line + "if bool(" + args.back() + ") != " + (when ? "True" : "False") +
                     ":\n        raise Diverged(\"" +
                     std::string(place.has_path ? place.path : "") + " " + loc + "\")" + comment() +
                     "\n";
            }
            return Status::Ok();
          }
          case NodeKind::kReturn: {
            if (n != 1) return fail(node, place, "a return without one operand");
            buf += line + lhs + " = " + args[0] + comment() + "\n";
            if (place.depth == 1) buf += line + "return " + lhs + "\n";
            code.pop_back();
            return Status::Ok();
          }
          case NodeKind::kError:
            return fail(node, place, "the run failed here; --python writes complete runs only");
          default:
            return fail(node, place,
                        "a special node ($(" + DisplayString(node.op()) +
                            ")): --python has no code for it");
        }
      });
  if (!s.ok()) return s;
  if (out == nullptr) return Status::Ok();
  buf += "\n\nif __name__ == \"__main__\":\n    import sys\n    print(" + sig_name +
         "(*[eval(a, {\"f64\": f64, \"f32\": f32}) for a in sys.argv[1:]]))\n";
  out->Write(buf);
  return Status::Ok();
}

}  // namespace

Status ExportPython(const std::string& path, const ExportOptions& opts, Output& out) {
  (void)opts;
  TwoPassInput input;
  IRT_RETURN_IF_ERROR(input.Prepare(path));
  {
    IRT_ASSIGN_OR_RETURN(ChunkStream stream, input.Open());
    IRT_RETURN_IF_ERROR(Generate(stream, nullptr));
  }
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, input.Open());
  return Generate(stream, &out);
}

}  // namespace irt::internal
