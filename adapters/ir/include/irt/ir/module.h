// IR modules: SSA IR in the text form IRTools (Julia) prints, several
// functions per file, parsed and resolved once into a compact form that the
// interpreter runs directly (SSA values are frame slots, calls and
// primitives are resolved, branch targets are instruction indices).
//
//   # geom(n, β) = rand() < β ? n : geom(n + 1, β)
//   function geom
//   1: (%1, %2, %3)
//     %4 = Main.rand()
//     %5 = %4 < %3
//     br 2 unless %5
//     return %2
//   2:
//     %6 = %2 + 1
//     %7 = Main.geom(%6, %3)
//     return %7
//   end
//
// `#` starts a comment. Between `function NAME` and `end`, blocks `N:` or
// `N: (%a, %b)` hold statements and then branches. Statements: calls
// `%4 = Main.rand()`, `%7 = geom(%6, %3)` (the `Main.`, `Base.` or `Core.`
// qualifier is optional), infix operators `%5 = %4 < %3`, unary `-%2` and
// `!%5`, literal statements `%3 = 2.0`; a trailing type annotation
// `:: Float64` is ignored. Branches: `br 2 unless %5`, `br 2 (0, %4)`,
// `br 3`, `return %2`. A block that ends without an unconditional branch
// falls through to the next block. Block 1's arguments are the function
// itself (%1) and its parameters. Operands are SSA values or literals (see
// irt::ParseLiteral).
#ifndef IRT_IR_MODULE_H_
#define IRT_IR_MODULE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "irt/ops.h"
#include "irt/status.h"
#include "irt/value.h"

namespace irt::ir {

/// 1-based line and column (columns count characters, not bytes).
struct SourcePos {
  uint32_t line = 0;
  uint32_t col = 0;
};

/// Primitives take at most this many operands: any operation of the
/// standard set (irt/ops.h) that takes that many.
inline constexpr size_t kMaxPrimArity = 8;

/// The standard operation `name` with `arity` operands, if the IR can call it
/// (arity at most kMaxPrimArity).
const OpDef* FindPrim(std::string_view name, size_t arity);

enum class OpCode : uint8_t {
  kPrim,       // a built-in primitive
  kConst,      // a literal statement
  kCall,       // a call to a function of the module
  kUndefined,  // a call that fails when executed (unknown name, no such arity)
  kBr,         // unconditional branch (explicit or fall-through)
  kBrUnless,   // taken unless its condition is true
  kReturn,
};

/// An operand: a slot of the frame (an SSA value) or a constant of the function.
struct Operand {
  uint32_t index = 0;
  bool is_const = false;
};

/// One resolved statement or branch.
struct Instr {
  OpCode code = OpCode::kPrim;
  const OpDef* op = nullptr;  // kPrim: the operation
  /// Operands in Function::operands[first_arg, first_arg + nargs); for
  /// branches the block arguments, followed by the condition of kBrUnless.
  uint16_t nargs = 0;
  uint32_t first_arg = 0;
  uint32_t dst = 0;     // result slot (statements)
  uint32_t target = 0;  // kCall: callee index; kBr*: target block index; kConst: constant index
  uint32_t uid = 0;     // unique in the module: one node class per uid
  uint32_t ssa = 0;     // SSA id defined, or branch position (1-based) for branches
  uint32_t block = 0;   // 1-based block holding it
  bool direct = false;  // branches: no operand is one of the target's block arguments
  SourcePos pos;        // of the statement or branch
  std::string name;     // callee or operator as recorded; "" for constants and branches
};

struct Block {
  uint32_t first = 0;               // index of its first instruction
  std::vector<uint32_t> arg_slots;  // slots of its arguments
  std::vector<uint32_t> arg_ssa;    // their SSA ids
  std::vector<SourcePos> arg_pos;
  uint32_t first_arg_uid = 0;  // the k-th argument has uid first_arg_uid + k
  SourcePos pos;
};

struct Function {
  std::string name;
  Value value;              // Function(name): the value of %1
  std::string ir_text;      // the lines between `function` and `end`, verbatim
  SourcePos pos;            // of `function`
  uint32_t num_params = 0;  // block 1's arguments after %1
  uint32_t num_slots = 0;
  std::vector<Instr> code;
  std::vector<Operand> operands;
  std::vector<Value> constants;
  std::vector<Block> blocks;  // blocks[0] is block 1; its arguments are %1 and the parameters
};

class Module {
 public:
  /// Parses and resolves `text`; `file_name` prefixes error messages
  /// ("FILE:LINE:COL: what is wrong", kDataError).
  static Result<Module> Parse(std::string_view text, std::string file_name);
  /// Reads and parses a file (kIoError if it cannot be read).
  static Result<Module> Load(const std::string& path);

  const std::vector<Function>& functions() const { return functions_; }
  /// Index of the function called `name`, or -1.
  int Find(std::string_view name) const;
  const std::string& file_name() const { return file_name_; }
  /// Number of distinct uids (instructions, block arguments, parameters).
  uint32_t num_uids() const { return num_uids_; }
  /// The uid of parameter k (0 = %1) of function f.
  uint32_t param_uid(size_t f, size_t k) const {
    return first_param_uid_[f] + static_cast<uint32_t>(k);
  }

 private:
  friend class ModuleParser;
  std::string file_name_;
  std::vector<Function> functions_;
  std::unordered_map<std::string, int> by_name_;
  std::vector<uint32_t> first_param_uid_;
  uint32_t num_uids_ = 0;
};

}  // namespace irt::ir

#endif  // IRT_IR_MODULE_H_
