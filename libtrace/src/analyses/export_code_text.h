// The text of values and operations in irt-export's generated code (Python
// and C): literals that evaluate to a recorded value bit for bit, and the
// prelude's helpers and C expressions for the standard operations. Used by
// export_code.cc.
#ifndef IRT_ANALYSES_EXPORT_CODE_TEXT_H_
#define IRT_ANALYSES_EXPORT_CODE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "irt/value.h"

namespace irt::internal::code {

// The helper of the prelude for a standard operation of `arity` operands.
std::string_view Helper(std::string_view op, uint32_t arity);
// The helper of the prelude for a standard operation on tensors (also
// called with numbers, which it treats as libtrace does), or empty.
std::string_view TensorHelper(std::string_view op, uint32_t arity);
// Whether s is a Python and C identifier (ASCII letters, digits, _).
bool IsIdentifier(std::string_view s);
// The generated function's name for a root call of `op`: op itself when it
// is an identifier that nothing in the prelude's namespace uses (a name
// the prelude defines, imports or calls, a keyword, a name of its C
// library), else op with "_" appended until it is free; "traced" for an
// op that is no identifier. (A function `cat` or `exp` would otherwise
// replace the prelude's helper of that name.)
std::string FunctionName(std::string_view op, std::string_view prelude, bool python);
// The prelude's code of a tensor's element type: "f8", "f4", "i8", "i4", "b1".
std::string_view DTypeCode(DType t);
// A value as a Python expression that evaluates to it bit for bit; false
// for what the prelude has no type for (tensors, strings that are not UTF-8).
bool AppendPyValue(std::string& out, const Value& v);
// The prelude's constant of a tensor's element type.
std::string_view CDType(DType t);
// A C expression that evaluates to `v` exactly: a number as a literal, a
// tensor or a tuple as an irt_t; false for what C cannot hold.
bool AppendCValue(std::string& out, const Value& v);
// The C type of a value kind; empty for kinds C code here cannot hold.
std::string_view CType(VKind k);
// The C expression of a standard operation whose recorded result is of kind
// `r`: each operand is converted to the type the operation computes in
// (scalar.cc's rules), so the expression's type is the result's.
std::string COp(std::string_view op, const std::vector<std::string>& a, VKind r);

}  // namespace irt::internal::code

#endif  // IRT_ANALYSES_EXPORT_CODE_TEXT_H_
