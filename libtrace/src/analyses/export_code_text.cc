// The text of values and operations in irt-export's generated code: see
// export_code_text.h.
#include "analyses/export_code_text.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/json.h"
#include "irt/value.h"
#include "print/notation.h"

namespace irt::internal::code {

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

// The helper of the prelude for a standard operation on tensors (also
// called with numbers, which it treats as libtrace does), or empty.
std::string_view TensorHelper(std::string_view op, uint32_t arity) {
  struct Row {
    std::string_view op;
    uint32_t min, max;
    std::string_view helper;
  };
  static constexpr Row kRows[] = {
      {"matmul", 2, 2, "matmul"},       {"dot", 2, 2, "dot"},
      {"transpose", 1, 1, "transpose"}, {"sum", 1, 2, "sum_"},
      {"mean", 1, 2, "mean"},           {"maximum", 1, 2, "maximum"},
      {"minimum", 1, 2, "minimum"},     {"reshape", 2, 99, "reshape"},
      {"getindex", 2, 99, "getindex"},  {"getitem", 2, 99, "getitem"},
      {"addindex", 3, 99, "addindex"},  {"additem", 3, 99, "additem"},
      {"sum_to", 2, 2, "sum_to"},       {"broadcast_to", 2, 2, "broadcast_to"},
      {"fill", 1, 99, "fill"},          {"zeros", 0, 99, "zeros"},
      {"ones", 0, 99, "ones"},          {"cat", 3, 99, "cat"},
      {"slice", 4, 5, "slice_"},        {"unslice", 5, 6, "unslice"},
      {"getslice", 4, 5, "getslice"},   {"ungetslice", 5, 6, "ungetslice"},
      {"size", 1, 2, "size"},           {"length", 1, 1, "length"},
      {"tuple", 0, 99, "tuple_"},       {"collect", 1, 1, "collect"},
      {"cumsum", 1, 2, "cumsum"},
  };
  for (const Row& r : kRows) {
    if (r.op == op && arity >= r.min && arity <= r.max) return r.helper;
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

std::string FunctionName(std::string_view op, std::string_view prelude, bool python) {
  if (!IsIdentifier(op)) return "traced";
  // Python's keywords and builtins (a module-level function would hide
  // the builtin from the prelude), and the names the file's end uses.
  static constexpr std::string_view kPython[] = {
      "False",   "None",       "True",      "and",      "as",           "assert",     "async",
      "await",   "break",      "class",     "continue", "def",          "del",        "elif",
      "else",    "except",     "finally",   "for",      "from",         "global",     "if",
      "import",  "in",         "is",        "lambda",   "nonlocal",     "not",        "or",
      "pass",    "raise",      "return",    "try",      "while",        "with",       "yield",
      "abs",     "aiter",      "all",       "anext",    "any",          "ascii",      "bin",
      "bool",    "breakpoint", "bytearray", "bytes",    "callable",     "chr",        "classmethod",
      "compile", "complex",    "copyright", "credits",  "delattr",      "dict",       "dir",
      "divmod",  "enumerate",  "eval",      "exec",     "exit",         "filter",     "float",
      "format",  "frozenset",  "getattr",   "globals",  "hasattr",      "hash",       "help",
      "hex",     "id",         "input",     "int",      "isinstance",   "issubclass", "iter",
      "len",     "license",    "list",      "locals",   "map",          "max",        "memoryview",
      "min",     "next",       "object",    "oct",      "open",         "ord",        "pow",
      "print",   "property",   "quit",      "range",    "repr",         "reversed",   "round",
      "set",     "setattr",    "slice",     "sorted",   "staticmethod", "str",        "sum",
      "super",   "tuple",      "type",      "vars",     "zip",          "sys",        "f64",
      "f32"};
  static constexpr std::string_view kC[] = {
      "auto",    "break",  "case",     "char",   "const",    "continue", "default",
      "do",      "double", "else",     "enum",   "extern",   "float",    "for",
      "goto",    "if",     "inline",   "int",    "long",     "register", "restrict",
      "return",  "short",  "signed",   "sizeof", "static",   "struct",   "switch",
      "typedef", "union",  "unsigned", "void",   "volatile", "while",    "bool",
      "true",    "false",  "main",     "NULL",   "INFINITY", "NAN"};
  // Whether `name` is taken: listed above; in a Python prelude, defined,
  // assigned or imported at the top, or an exception it raises; in a C
  // prelude, of its irt_/IRT_ families or called (its C library's too).
  auto taken = [&](const std::string& name) {
    for (std::string_view k : python ? std::span<const std::string_view>(kPython)
                                     : std::span<const std::string_view>(kC)) {
      if (k == name) return true;
    }
    if (!python && (name.starts_with("irt_") || name.starts_with("IRT_"))) return true;
    auto word_char = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    };
    auto word_at = [&](size_t at) {
      return (at == 0 || !word_char(prelude[at - 1])) &&
             (at + name.size() == prelude.size() || !word_char(prelude[at + name.size()]));
    };
    for (size_t at = prelude.find(name); at != std::string_view::npos;
         at = prelude.find(name, at + 1)) {
      if (!word_at(at)) continue;
      size_t after = at + name.size();
      while (after < prelude.size() && prelude[after] == ' ') ++after;
      const bool call = after < prelude.size() && prelude[after] == '(';
      if (!python) {
        if (call) return true;
        continue;
      }
      // The word w just before the name, at the start of a line or not.
      auto after_word = [&](std::string_view w, bool line_start) {
        if (at < w.size() || prelude.substr(at - w.size(), w.size()) != w) return false;
        const size_t b = at - w.size();
        return b == 0 || (line_start ? prelude[b - 1] == '\n' : !word_char(prelude[b - 1]));
      };
      const bool assigned = after_word("", true) && after < prelude.size() && prelude[after] == '=';
      if (assigned || after_word("def ", true) || after_word("class ", true) ||
          after_word("import ", false) || after_word("as ", false) ||
          (call && name.ends_with("Error"))) {
        return true;
      }
    }
    return false;
  };
  std::string name(op);
  while (taken(name)) name += '_';
  return name;
}

namespace {

// A tensor element type's names in the two preludes: Python's code ("f8")
// and C's constant ("IRT_F8"), one row per DType.
struct DTypeNames {
  DType dtype;
  std::string_view py, c;
};
constexpr DTypeNames kDTypeNames[] = {{DType::kF64, "f8", "IRT_F8"},
                                      {DType::kF32, "f4", "IRT_F4"},
                                      {DType::kI64, "i8", "IRT_I8"},
                                      {DType::kI32, "i4", "IRT_I4"},
                                      {DType::kBool, "b1", "IRT_B1"}};

const DTypeNames& NamesOf(DType t) {
  for (const DTypeNames& n : kDTypeNames) {
    if (n.dtype == t) return n;
  }
  return kDTypeNames[0];
}

}  // namespace

std::string_view DTypeCode(DType t) { return NamesOf(t).py; }

// Element i of an integer or Bool tensor, exactly.
static int64_t TensorInt(const Tensor& t, int64_t i) {
  size_t size = DTypeSize(t.dtype);
  size_t off = static_cast<size_t>(i) * size;
  if (off + size > t.data.size()) return 0;
  if (t.dtype == DType::kI64) {
    int64_t v;
    std::memcpy(&v, t.data.data() + off, 8);
    return v;
  }
  if (t.dtype == DType::kI32) {
    int32_t v;
    std::memcpy(&v, t.data.data() + off, 4);
    return v;
  }
  return t.data[off] != 0 ? 1 : 0;
}

// A tensor as the prelude's tensor("f8", (3, 4), [...]): its elements in
// row-major order, floats as the shortest decimal that reads back to them
// (a Float32 element as the double that equals it), NaN and infinities by
// their bits.
static void AppendPyTensor(std::string& out, const Tensor& t) {
  out += "tensor(\"";
  out += DTypeCode(t.dtype);
  out += "\", (";
  for (size_t d = 0; d < t.shape.size(); ++d) {
    out += std::to_string(t.shape[d]);
    out += t.shape.size() == 1 ? ",)" : d + 1 < t.shape.size() ? ", " : ")";
  }
  if (t.shape.empty()) out += ")";
  out += ", [";
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    switch (t.dtype) {
      case DType::kF64:
      case DType::kF32: {
        double d = t.at(i);
        if (std::isfinite(d)) {
          out += FormatDouble(d);
        } else {
          out += fmt::format("f64(0x{:016x})", std::bit_cast<uint64_t>(d));
        }
        break;
      }
      case DType::kBool:
        out += TensorInt(t, i) != 0 ? "True" : "False";
        break;
      default:
        out += fmt::format("{}", TensorInt(t, i));
        break;
    }
  }
  out += "])";
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
      case VKind::kTensor:
        AppendPyTensor(out, x.tensor());
        break;
      default:
        return false;
    }
  }
  return true;
}

// The C code of a number's literal; false for what is not a number C holds.
static bool AppendCNumber(std::string& out, const Value& v) {
  switch (v.kind()) {
    case VKind::kBool:
      out += v.as_bool() ? "true" : "false";
      return true;
    case VKind::kI64:
      if (v.as_i64() == INT64_MIN) {
        out += "INT64_MIN";
      } else {
        out += "INT64_C(" + std::to_string(v.as_i64()) + ")";
      }
      return true;
    case VKind::kF64: {
      double d = v.as_f64();
      if (std::isfinite(d)) {
        out += fmt::format("{:a}", d);
      } else {
        out += fmt::format("irt_f64(UINT64_C(0x{:016x}))", v.bits());
      }
      return true;
    }
    case VKind::kF32:
      out += fmt::format("irt_f32(UINT32_C(0x{:08x}))", static_cast<uint32_t>(v.bits()));
      return true;
    default:
      return false;
  }
}

std::string_view CDType(DType t) { return NamesOf(t).c; }

// A tensor as irt_tensor(IRT_F8, 2, (const int64_t[]){3, 4}, (const
// double[]){...}): its elements in row-major order, floats as hexadecimal
// literals (NaN and infinities by their bits).
static void AppendCTensor(std::string& out, const Tensor& t) {
  static constexpr std::string_view kTypes[] = {"double", "float", "int64_t", "int32_t", "bool"};
  std::string_view type = t.dtype == DType::kF64   ? kTypes[0]
                          : t.dtype == DType::kF32 ? kTypes[1]
                          : t.dtype == DType::kI64 ? kTypes[2]
                          : t.dtype == DType::kI32 ? kTypes[3]
                                                   : kTypes[4];
  out += "irt_tensor(";
  out += CDType(t.dtype);
  out += ", " + std::to_string(t.shape.size()) + ", (const int64_t[]){";
  for (size_t d = 0; d < t.shape.size(); ++d) out += (d ? ", " : "") + std::to_string(t.shape[d]);
  if (t.shape.empty()) out += "0";
  out += "}, (const ";
  out += type;
  out += "[]){";
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    switch (t.dtype) {
      case DType::kF64: {
        double d = t.at(i);
        if (std::isfinite(d)) {
          out += fmt::format("{:a}", d);
        } else {
          out += fmt::format("irt_f64(UINT64_C(0x{:016x}))", std::bit_cast<uint64_t>(d));
        }
        break;
      }
      case DType::kF32: {
        float f = static_cast<float>(t.at(i));
        if (std::isfinite(f)) {
          out += fmt::format("{:a}f", static_cast<double>(f));
        } else {
          out += fmt::format("irt_f32(UINT32_C(0x{:08x}))", std::bit_cast<uint32_t>(f));
        }
        break;
      }
      case DType::kBool:
        out += TensorInt(t, i) != 0 ? "true" : "false";
        break;
      default: {
        int64_t v = TensorInt(t, i);
        out += v == INT64_MIN ? std::string("INT64_MIN") : fmt::format("INT64_C({})", v);
        break;
      }
    }
  }
  if (n == 0) out += "0";
  out += "})";
}

// A C expression that evaluates to `v` exactly: a number as a literal, a
// tensor or a tuple as an irt_t; false for what C cannot hold.
bool AppendCValue(std::string& out, const Value& v) {
  // Tuples are written with an explicit stack: the format lets them nest 64 deep.
  struct Item {
    const Value* v;
    size_t next;  // for a tuple: the next item to write
  };
  std::vector<Item> stack{{&v, 0}};
  while (!stack.empty()) {
    Item& it = stack.back();
    const Value& x = *it.v;
    const bool boxed = stack.size() > 1;  // a tuple's item is an irt_t
    if (x.kind() == VKind::kTuple) {
      const auto& items = x.tuple();
      if (it.next == 0) out += "irt_tuple(" + std::to_string(items.size()) + ", (irt_t[]){";
      if (it.next == items.size()) {
        out += items.empty() ? "NULL})" : "})";
        stack.pop_back();
        continue;
      }
      if (it.next > 0) out += ", ";
      const Value* child = &items[it.next++];
      stack.push_back({child, 0});
      continue;
    }
    stack.pop_back();
    if (x.kind() == VKind::kTensor) {
      AppendCTensor(out, x.tensor());
      continue;
    }
    if (x.kind() == VKind::kNothing) {
      out += "irt_nothing()";
      continue;
    }
    if (boxed) out += "IRT_BOX(";
    if (!AppendCNumber(out, x)) return false;
    if (boxed) out += ")";
  }
  return true;
}

// The C type of a value kind; empty for kinds C code here cannot hold.
std::string_view CType(VKind k) {
  switch (k) {
    case VKind::kBool:
      return "bool";
    case VKind::kI64:
      return "int64_t";
    case VKind::kF32:
      return "float";
    case VKind::kF64:
      return "double";
    case VKind::kTensor:
    case VKind::kTuple:
      return "irt_t";
    default:
      return {};
  }
}

// The C expression of a standard operation whose recorded result is of kind
// `r`: each operand is converted to the type the operation computes in
// (scalar.cc's rules), so the expression's type is the result's.
std::string COp(std::string_view op, const std::vector<std::string>& a, VKind r) {
  const size_t n = a.size();
  const bool fl = r == VKind::kF64 || r == VKind::kF32;
  const std::string t(CType(r));
  const std::string sfx = r == VKind::kF32 ? "f" : "";
  auto cast = [&](const std::string& type, const std::string& x) {
    return "((" + type + ")(" + x + "))";
  };
  auto i = [&](size_t k) { return cast("int64_t", a[k]); };
  auto f = [&](size_t k) { return cast(t, a[k]); };
  auto d = [&](size_t k) { return cast("double", a[k]); };
  auto call = [](std::string_view fn, std::initializer_list<std::string> xs) {
    std::string e(fn);
    e += '(';
    size_t k = 0;
    for (const std::string& x : xs) e += (k++ ? ", " : "") + x;
    return e + ")";
  };
  if (n == 2 && (op == "+" || op == "-" || op == "*")) {
    if (r == VKind::kI64) {
      return call(op == "+" ? "irt_addi" : op == "-" ? "irt_subi" : "irt_muli", {i(0), i(1)});
    }
    if (fl) return "(" + f(0) + " " + std::string(op) + " " + f(1) + ")";
  }
  if (n == 2 && op == "/" && fl) return "(" + f(0) + " / " + f(1) + ")";
  if (n == 2 && op == "^") {
    if (r == VKind::kI64) return call("irt_ipow", {i(0), i(1)});
    if (r == VKind::kBool) return "(" + i(1) + " == 0 || (" + a[0] + "))";
    if (r == VKind::kF64) return call("pow", {d(0), d(1)});
    if (r == VKind::kF32) {
      return "(IRT_K(" + a[1] + ") <= 1 ? (float)pow(" + d(0) + ", " + d(1) + ") : powf(" + f(0) +
             ", " + f(1) + "))";
    }
  }
  static constexpr std::pair<std::string_view, std::string_view> kCompare[] = {
      {"<", "irt_lt"},  {"<=", "irt_le"}, {">", "irt_gt"},
      {">=", "irt_ge"}, {"==", "irt_eq"}, {"!=", "irt_ne"}};
  for (const auto& [o, fn] : kCompare) {
    if (n == 2 && op == o && r == VKind::kBool) {
      return std::string(fn) + "(IRT_CMP(" + a[0] + ", " + a[1] + "))";
    }
  }
  if (n == 1 && op == "!" && r == VKind::kBool) return "(!(" + a[0] + "))";
  if (n == 2 && (op == "&" || op == "|" || op == "xor")) {
    std::string e = "(" + i(0) + (op == "&" ? " & " : op == "|" ? " | " : " ^ ") + i(1) + ")";
    if (r == VKind::kBool) return "(" + e + " != 0)";
    if (r == VKind::kI64) return e;
  }
  static constexpr std::pair<std::string_view, int> kDivisions[] = {
      {"div", 0}, {"rem", 1}, {"fld", 2}, {"mod", 3}};
  for (const auto& [o, kind] : kDivisions) {
    if (n != 2 || op != o) continue;
    std::string k = std::to_string(kind);
    if (r == VKind::kI64) return call("irt_idiv", {i(0), i(1), k});
    if (r == VKind::kBool) return "(" + call("irt_idiv", {i(0), i(1), k}) + " != 0)";
    if (fl) return call("irt_fdiv" + sfx, {f(0), f(1), k});
  }
  if (n == 2 && (op == "min" || op == "max")) {
    bool mx = op == "max";
    if (r == VKind::kBool) return "((" + a[0] + ")" + (mx ? " || " : " && ") + "(" + a[1] + "))";
    if (r == VKind::kI64) {
      return "(" + i(0) + (mx ? " > " : " < ") + i(1) + " ? " + i(0) + " : " + i(1) + ")";
    }
    if (fl) return cast(t, call(mx ? "irt_fmax" : "irt_fmin", {d(0), d(1)}));
  }
  if (n == 1) {
    if (op == "-") {
      if (r == VKind::kI64) return call("irt_negi", {i(0)});
      if (fl) return "(-" + f(0) + ")";
    }
    if (op == "abs") {
      if (r == VKind::kBool) return "(" + a[0] + ")";
      if (r == VKind::kI64) return call("irt_absi", {i(0)});
      if (fl) return call("fabs" + sfx, {f(0)});
    }
    if (op == "sign") {
      if (r == VKind::kI64) return call("irt_signi", {i(0)});
      if (fl) return call(r == VKind::kF32 ? "irt_signf" : "irt_signd", {f(0)});
    }
    if (op == "zero" || op == "one") {
      bool one = op == "one";
      if (r == VKind::kBool) return one ? "true" : "false";
      if (r == VKind::kI64) return one ? "INT64_C(1)" : "INT64_C(0)";
      if (fl) return cast(t, one ? "1" : "0");
    }
    if (op == "identity" && !t.empty()) return f(0);
  }
  if (n == 3 && op == "ifelse" && !t.empty()) {
    return "((" + a[0] + ") ? " + f(1) + " : " + f(2) + ")";
  }
  if (fl && n == 2 && (op == "atan2" || op == "hypot"))
    return call(std::string(op) + sfx, {f(0), f(1)});
  if (fl && n == 1 && !Helper(op, 1).empty() && Helper(op, 1) == op) {
    return call(std::string(op) + sfx, {f(0)});
  }
  return {};
}

}  // namespace irt::internal::code
