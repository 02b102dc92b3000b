// Internal: a rule line compiled for one arity into a straight-line program
// over numbered registers, run either on binary64 scalars (the sweep's fast
// path, no allocation) or on Values through irt::ApplyOp (tensors, and
// the emitted backward trace, where an observer turns each instruction into
// a node). Compiled once per (rule, arity, line), never interpreted as text.
//
// Registers of an instance for a call with `arity` arguments:
//   [0, arity)          the arguments' primal values
//   arity               the result's primal value
//   arity + 1 + k       differentials: reverse, k = 0: the result's adjoint;
//                       forward, k = i: the tangent of argument i
//   then constants, then temporaries.
#ifndef IRT_SRC_RULE_PROGRAM_H_
#define IRT_SRC_RULE_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "irt/ops.h"
#include "irt/rules.h"
#include "irt/status.h"
#include "irt/value.h"
#include "ops/scalar_ops.h"

namespace irt::internal {

inline constexpr int32_t kZeroReg = -1;  // a differential known to be zero

struct Instr {
  std::string op;
  const OpDef* def = nullptr;  // the operation for op and the arity, when the set has it
  bool has_sop = false;
  SOp sop = SOp::kCopy;
  std::vector<int32_t> args;
  int32_t dst = 0;
};

/// An instruction of the binary64 form, compact for the sweep's inner loop.
struct ScalarInstr {
  SOp op;
  uint8_t n;  // operands: 1, 2 or 3 (ifelse)
  int16_t a, b, c, dst;
};

struct Program {
  std::vector<Instr> code;
  /// The binary64 form: `code` without the copies (sum_to, broadcast_to,
  /// identity, transpose and sum on scalars), their registers renamed.
  std::vector<ScalarInstr> scode;
  std::vector<int32_t> souts;  // `outputs` renamed likewise
  /// Per instruction of `code`, for RunValues without an observer: 1 for a
  /// transpose folded into the matmul that uses it, 2|4 on that matmul for a
  /// transposed first|second operand (Eigen multiplies transposed views).
  std::vector<uint8_t> fuse;
  std::vector<std::pair<int32_t, double>> consts;
  /// Results: reverse lines give [contribution, index...]; forward [tangent].
  /// kZeroReg means the result is zero (forward mode, no tangent reaches it).
  std::vector<int32_t> outputs;
  /// The first output is a matrix product's result, reshaped or transposed
  /// or not, which holds no -0 (the product is added to zeros).
  bool output_is_product = false;
  int32_t num_regs = 0;
  /// Every instruction has a binary64 form (RunScalar applies when the
  /// registers it reads hold real scalars).
  bool scalar = true;
  /// Which of the registers [0, arity] (primal arguments and result) it reads.
  std::vector<bool> reads;
  /// A program that is one getindex (getindex's forward line: an element
  /// of a tangent): the register indexed, else -1, and the index registers.
  int32_t element_of = -1;
  std::vector<int32_t> element_index;
  /// A program that is additem(zero(x), v, i...) (getitem's reverse line:
  /// v added into one item of zeros): v's register, else -1, x's and the
  /// index registers.
  int32_t item_value = -1;
  int32_t item_zeros_of = -1;
  std::vector<int32_t> item_index;
};

/// The forward line, for tangents present on the arguments marked in `has_tangent`.
Result<Program> CompileForward(const Rule& rule, size_t arity,
                               const std::vector<bool>& has_tangent);
/// The reverse line for argument `i` (0-based in the call).
Result<Program> CompileReverse(const Rule& rule, size_t arity, size_t i);

/// Executes one instruction of the binary64 form on `regs`.
[[gnu::always_inline]] inline void RunScalarInstr(const ScalarInstr& in, double* regs) {
  switch (in.n) {
    case 1:
      regs[in.dst] = Apply1(in.op, regs[in.a]);
      break;
    case 2:
      switch (in.op) {  // the common cases inline
        case SOp::kAdd:
          regs[in.dst] = regs[in.a] + regs[in.b];
          break;
        case SOp::kSub:
          regs[in.dst] = regs[in.a] - regs[in.b];
          break;
        case SOp::kMul:
          regs[in.dst] = regs[in.a] * regs[in.b];
          break;
        case SOp::kDiv:
          regs[in.dst] = regs[in.a] / regs[in.b];
          break;
        default:
          regs[in.dst] = Apply2(in.op, regs[in.a], regs[in.b]);
          break;
      }
      break;
    default:
      regs[in.dst] = regs[in.a] != 0 ? regs[in.b] : regs[in.c];
      break;
  }
}

/// Runs on binary64 registers; `regs` holds num_regs entries with the inputs set.
void RunScalar(const Program& p, double* regs);

/// Called for every instruction RunValues executes, after its result is in regs[dst].
class ProgramObserver {
 public:
  virtual ~ProgramObserver() = default;
  virtual Status OnInstr(const Instr& instr, const std::vector<Value>& regs) = 0;
  /// Called for each constant register before the program runs.
  virtual void OnConst(int32_t reg, const Value& v) = 0;
};

/// Runs on values; constants are Float32 when `f32`. `regs` must have
/// num_regs entries with the inputs set.
Status RunValues(const Program& p, std::vector<Value>& regs, bool f32,
                 ProgramObserver* observer = nullptr);

}  // namespace irt::internal

#endif  // IRT_SRC_RULE_PROGRAM_H_
