// Parsing and resolving IR modules. Lines are parsed into raw functions
// first; once every function name is known, each function is resolved:
// SSA ids become dense frame slots, calls become module calls, primitives or
// deferred runtime errors, and branches get their targets and positions.
#include "irt/ir/module.h"

#include <cstring>
#include <unordered_map>

#include "irt/file.h"

namespace irt::ir {

namespace {

// Infix operators, longest first where one is a prefix of another.
struct InfixOp {
  std::string_view token;
  std::string_view name;  // as recorded
};
constexpr InfixOp kInfix[] = {
    {"<=", "<="}, {">=", ">="}, {"==", "=="}, {"!=", "!="}, {"≤", "<="},  {"≥", ">="}, {"≠", "!="},
    {"÷", "div"}, {"⊻", "xor"}, {"<", "<"},   {">", ">"},   {"+", "+"},   {"-", "-"},  {"*", "*"},
    {"/", "/"},   {"^", "^"},   {"&", "&"},   {"|", "|"},   {"%", "rem"},
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Identifiers: ASCII letters, '_', digits (not first), '!' (not first) and
// any non-ASCII character except the operator symbols above and '×'.
bool StartsOperatorSymbol(std::string_view s) {
  for (std::string_view sym : {"≤", "≥", "≠", "÷", "⊻", "×"}) {
    if (s.substr(0, sym.size()) == sym) return true;
  }
  return false;
}
bool IsIdentStartAt(std::string_view s, size_t i) {
  if (i >= s.size()) return false;
  unsigned char c = static_cast<unsigned char>(s[i]);
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  return c >= 0x80 && !StartsOperatorSymbol(s.substr(i));
}
bool IsIdentCharAt(std::string_view s, size_t i) {
  return IsIdentStartAt(s, i) || IsDigit(s[i]) || s[i] == '!';
}

struct RawOperand {
  bool is_ssa = false;
  uint32_t ssa = 0;
  Value literal;
  SourcePos pos;
};

enum class RawKind { kNamedCall, kOperator, kConst, kBr, kReturn };

struct RawInstr {
  RawKind kind = RawKind::kConst;
  std::string name;  // callee or operator name
  std::vector<RawOperand> args;
  bool has_cond = false;
  RawOperand cond;
  uint32_t dst = 0;     // SSA id defined (statements)
  uint32_t target = 0;  // branch target block number
  SourcePos pos;
  SourcePos target_pos;
  Value constant;
};

struct RawBlock {
  uint32_t number = 0;
  SourcePos pos;
  std::vector<uint32_t> arg_ssa;
  std::vector<SourcePos> arg_pos;
  std::vector<RawInstr> stmts;
  std::vector<RawInstr> branches;
};

struct RawFunction {
  std::string name;
  SourcePos pos;
  SourcePos end_pos;
  std::string ir_text;
  std::vector<RawBlock> blocks;
};

}  // namespace

const OpDef* FindPrim(std::string_view name, size_t arity) {
  return arity <= kMaxPrimArity ? FindOp(name, arity) : nullptr;
}

int Module::Find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? -1 : it->second;
}

class ModuleParser {
 public:
  ModuleParser(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  Result<Module> Run() {
    std::vector<RawFunction> raw;
    std::unordered_map<std::string, size_t> defined;  // name -> index in raw
    RawFunction* fn = nullptr;
    size_t start = 0;
    uint32_t line_no = 0;
    while (start <= text_.size()) {
      size_t nl = text_.find('\n', start);
      if (nl == std::string_view::npos) nl = text_.size();
      std::string_view full = text_.substr(start, nl - start);
      if (!full.empty() && full.back() == '\r') full.remove_suffix(1);
      ++line_no;
      line_ = StripComment(full);
      line_no_ = line_no;
      p_ = 0;
      SkipSpace();
      bool done_with_file = nl >= text_.size();
      if (fn == nullptr) {
        if (!AtEnd()) {
          size_t at = p_;
          if (Word() != "function") return Error(at, "expected 'function NAME'");
          SkipSpace();
          size_t name_at = p_;
          std::string name = Identifier();
          if (name.empty()) return Error(name_at, "expected a function name after 'function'");
          SkipSpace();
          if (!AtEnd()) return Error(p_, "unexpected '" + Rest() + "' after the function name");
          // By name, not by a scan of the earlier functions: a module may hold
          // 10^5 of them.
          auto [first, fresh] = defined.emplace(name, raw.size());
          if (!fresh) {
            const RawFunction& f = raw[first->second];
            return Error(name_at, "redefinition of function '" + name + "' (first defined at " +
                                      std::to_string(f.pos.line) + ":" + std::to_string(f.pos.col) +
                                      ")");
          }
          raw.emplace_back();
          fn = &raw.back();
          fn->name = std::move(name);
          fn->pos = Pos(at);
        }
      } else {
        size_t at = p_;
        bool is_end = false;
        if (!AtEnd()) {
          std::string_view w = PeekWord();
          if (w == "end") {
            Word();
            SkipSpace();
            if (!AtEnd()) return Error(p_, "unexpected '" + Rest() + "' after 'end'");
            is_end = true;
          } else if (w == "function") {
            return Error(at, "missing 'end' of function '" + fn->name + "' before this 'function'");
          }
        }
        if (is_end) {
          fn->end_pos = Pos(at);
          if (fn->blocks.empty()) return Error(at, "function '" + fn->name + "' has no blocks");
          if (!fn->ir_text.empty() && fn->ir_text.back() == '\n') fn->ir_text.pop_back();
          fn = nullptr;
        } else {
          fn->ir_text.append(full);
          fn->ir_text += '\n';
          if (!AtEnd()) IRT_RETURN_IF_ERROR(ParseBodyLine(*fn));
        }
      }
      if (done_with_file) break;
      start = nl + 1;
    }
    if (fn != nullptr) {
      return ErrorAt(fn->pos, "function '" + fn->name + "' has no 'end'");
    }
    return Resolve(raw);
  }

 private:
  // ----- lexing within one line -----
  static std::string_view StripComment(std::string_view s) {
    bool in_string = false;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (in_string) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '#') {
        return s.substr(0, i);
      }
    }
    return s;
  }
  bool AtEnd() const { return p_ >= line_.size(); }
  char Peek(size_t k = 0) const { return p_ + k < line_.size() ? line_[p_ + k] : '\0'; }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(line_[p_])) ++p_;
  }
  std::string Rest() const {
    std::string_view r = line_.substr(p_);
    while (!r.empty() && IsSpace(r.back())) r.remove_suffix(1);
    if (r.size() > 30) return std::string(r.substr(0, 30)) + "…";
    return std::string(r);
  }
  std::string_view PeekWord() const {
    size_t e = p_;
    while (e < line_.size() && IsIdentCharAt(line_, e)) ++e;
    return IsIdentStartAt(line_, p_) ? line_.substr(p_, e - p_) : std::string_view();
  }
  std::string_view Word() {
    std::string_view w = PeekWord();
    p_ += w.size();
    return w;
  }
  std::string Identifier() { return std::string(Word()); }

  uint32_t ColOf(size_t byte_off) const {
    uint32_t col = 1;
    for (size_t i = 0; i < byte_off && i < line_.size(); ++i) {
      if ((static_cast<uint8_t>(line_[i]) & 0xC0) != 0x80) ++col;
    }
    return col;
  }
  SourcePos Pos(size_t byte_off) const { return SourcePos{line_no_, ColOf(byte_off)}; }
  Status ErrorAt(SourcePos pos, const std::string& what) const {
    return DataError(file_ + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.col) + ": " +
                     what);
  }
  Status Error(size_t byte_off, const std::string& what) const {
    return ErrorAt(Pos(byte_off), what);
  }

  Result<uint32_t> Number(const char* what) {
    size_t at = p_;
    uint64_t v = 0;
    while (!AtEnd() && IsDigit(line_[p_])) {
      v = v * 10 + static_cast<uint64_t>(line_[p_] - '0');
      if (v > 0x7FFFFFFF) return Error(at, std::string(what) + " is too large");
      ++p_;
    }
    if (p_ == at) return Error(at, std::string("expected ") + what);
    return static_cast<uint32_t>(v);
  }

  Result<uint32_t> Ssa() {
    size_t at = p_;
    if (Peek() != '%') return Error(at, "expected an SSA value like %3");
    ++p_;
    if (!IsDigit(Peek())) return Error(at, "expected an SSA value like %3");
    IRT_ASSIGN_OR_RETURN(uint32_t id, Number("SSA id"));
    if (id == 0) return Error(at, "SSA ids start at %1");
    return id;
  }

  // Skips "::Type" up to the next ',' or ')' outside brackets.
  void SkipTypeAnnotation() {
    SkipSpace();
    if (!(Peek() == ':' && Peek(1) == ':')) return;
    p_ += 2;
    int depth = 0;
    while (!AtEnd()) {
      char c = line_[p_];
      if (c == '{' || c == '(' || c == '[') ++depth;
      if (c == '}' || c == ']' || (c == ')' && depth > 0)) --depth;
      if (depth == 0 && (c == ',' || c == ')')) break;
      ++p_;
    }
  }

  Status ParseOperand(RawOperand* out) {
    SkipSpace();
    size_t at = p_;
    out->pos = Pos(at);
    if (Peek() == '%') {
      IRT_ASSIGN_OR_RETURN(out->ssa, Ssa());
      out->is_ssa = true;
      return Status::Ok();
    }
    if (AtEnd()) return Error(at, "expected an SSA value or a literal");
    size_t len = 0, err = 0;
    Result<Value> v = ParseLiteralPrefix(line_.substr(p_), &len, &err);
    if (!v.ok()) return Error(p_ + err, "bad operand: " + v.error().message());
    out->is_ssa = false;
    out->literal = std::move(*v);
    p_ += len;
    return Status::Ok();
  }

  // "(a, b, ...)" with the '(' at p_.
  Status OperandList(std::vector<RawOperand>* out) {
    size_t open = p_;
    ++p_;
    SkipSpace();
    if (Peek() == ')') {
      ++p_;
      return Status::Ok();
    }
    while (true) {
      RawOperand o;
      IRT_RETURN_IF_ERROR(ParseOperand(&o));
      if (out->size() >= 0xFFFF) return Error(open, "too many operands");
      out->push_back(std::move(o));
      SkipSpace();
      if (Peek() == ',') {
        ++p_;
        continue;
      }
      if (Peek() == ')') {
        ++p_;
        return Status::Ok();
      }
      if (AtEnd()) return Error(open, "missing ')'");
      return Error(p_, "expected ',' or ')', found '" + Rest() + "'");
    }
  }

  Status ExpectLineEnd(bool allow_type) {
    SkipSpace();
    if (allow_type && Peek() == ':' && Peek(1) == ':') return Status::Ok();  // "::Type"
    if (!AtEnd()) return Error(p_, "unexpected '" + Rest() + "'");
    return Status::Ok();
  }

  // ----- lines inside a function -----
  Status ParseBodyLine(RawFunction& fn) {
    size_t at = p_;
    char c = Peek();
    if (IsDigit(c)) return ParseBlockHeader(fn);
    if (fn.blocks.empty()) return Error(at, "expected a block header like '1: (%1, %2)'");
    RawBlock& block = fn.blocks.back();
    if (c == '%') {
      if (!block.branches.empty()) {
        return Error(at, "statements must come before the branches of their block");
      }
      RawInstr in;
      in.pos = Pos(at);
      IRT_ASSIGN_OR_RETURN(in.dst, Ssa());
      SkipSpace();
      if (Peek() != '=' || Peek(1) == '=') return Error(p_, "expected '=' after the SSA value");
      ++p_;
      SkipSpace();
      IRT_RETURN_IF_ERROR(ParseExpr(&in));
      IRT_RETURN_IF_ERROR(ExpectLineEnd(true));
      block.stmts.push_back(std::move(in));
      return Status::Ok();
    }
    std::string_view w = PeekWord();
    if (w == "br") {
      Word();
      RawInstr in;
      in.kind = RawKind::kBr;
      in.pos = Pos(at);
      SkipSpace();
      in.target_pos = Pos(p_);
      IRT_ASSIGN_OR_RETURN(in.target, Number("a block number after 'br'"));
      SkipSpace();
      if (Peek() == '(') IRT_RETURN_IF_ERROR(OperandList(&in.args));
      SkipSpace();
      if (PeekWord() == "unless") {
        Word();
        in.has_cond = true;
        IRT_RETURN_IF_ERROR(ParseOperand(&in.cond));
      }
      IRT_RETURN_IF_ERROR(ExpectLineEnd(false));
      block.branches.push_back(std::move(in));
      return Status::Ok();
    }
    if (w == "return") {
      Word();
      RawInstr in;
      in.kind = RawKind::kReturn;
      in.pos = Pos(at);
      in.args.emplace_back();
      IRT_RETURN_IF_ERROR(ParseOperand(&in.args[0]));
      IRT_RETURN_IF_ERROR(ExpectLineEnd(false));
      block.branches.push_back(std::move(in));
      return Status::Ok();
    }
    return Error(at, "expected a statement, a branch, a block header or 'end'");
  }

  Status ParseBlockHeader(RawFunction& fn) {
    size_t at = p_;
    IRT_ASSIGN_OR_RETURN(uint32_t number, Number("a block number"));
    uint32_t expected = static_cast<uint32_t>(fn.blocks.size()) + 1;
    if (Peek() != ':') return Error(p_, "expected ':' after the block number");
    if (number != expected) {
      return Error(at, "expected block " + std::to_string(expected) + ", found block " +
                           std::to_string(number));
    }
    ++p_;
    RawBlock b;
    b.number = number;
    b.pos = Pos(at);
    SkipSpace();
    if (Peek() == '(') {
      size_t open = p_;
      ++p_;
      SkipSpace();
      while (Peek() != ')') {
        SkipSpace();
        size_t arg_at = p_;
        IRT_ASSIGN_OR_RETURN(uint32_t id, Ssa());
        b.arg_ssa.push_back(id);
        b.arg_pos.push_back(Pos(arg_at));
        SkipTypeAnnotation();
        SkipSpace();
        if (Peek() == ',') {
          ++p_;
          SkipSpace();
          continue;
        }
        if (Peek() == ')') break;
        if (AtEnd()) return Error(open, "missing ')'");
        return Error(p_, "expected ',' or ')' in the block arguments");
      }
      ++p_;
    }
    IRT_RETURN_IF_ERROR(ExpectLineEnd(false));
    if (number == 1 && b.arg_ssa.empty()) {
      return Error(at,
                   "block 1 must declare the function itself and its parameters, like "
                   "'1: (%1, %2)'");
    }
    fn.blocks.push_back(std::move(b));
    return Status::Ok();
  }

  // The right-hand side of a statement.
  Status ParseExpr(RawInstr* in) {
    size_t at = p_;
    char c = Peek();
    if (AtEnd()) return Error(at, "expected an expression after '='");
    // Unary operators.
    if (c == '!' || (c == '-' && Peek(1) == '%')) {
      ++p_;
      in->kind = RawKind::kOperator;
      in->name = c == '!' ? "!" : "-";
      in->args.emplace_back();
      return ParseOperand(&in->args[0]);
    }
    // A call: [Main.|Base.|Core.]name(args)
    if (IsIdentStartAt(line_, p_)) {
      std::vector<std::string_view> parts;
      parts.push_back(Word());
      while (Peek() == '.' && IsIdentStartAt(line_, p_ + 1)) {
        ++p_;
        parts.push_back(Word());
      }
      bool literal_ctor = parts.size() == 1 && parts[0] == "fill";
      if (Peek() == '(' && !literal_ctor) {
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
          if (parts[i] != "Main" && parts[i] != "Base" && parts[i] != "Core") {
            return Error(at, "unknown module '" + std::string(parts[i]) +
                                 "' (only Main., Base. and Core. are understood)");
          }
        }
        in->kind = RawKind::kNamedCall;
        in->name = std::string(parts.back());
        return OperandList(&in->args);
      }
      p_ = at;  // a literal such as true, Inf or fill(1.0)
    }
    RawOperand first;
    IRT_RETURN_IF_ERROR(ParseOperand(&first));
    SkipSpace();
    if (AtEnd() || (Peek() == ':' && Peek(1) == ':')) {
      if (first.is_ssa) {
        return Error(at, "a statement must compute something: copying %" +
                             std::to_string(first.ssa) + " is not supported");
      }
      in->kind = RawKind::kConst;
      in->constant = std::move(first.literal);
      return Status::Ok();
    }
    size_t op_at = p_;
    const InfixOp* op = nullptr;
    for (const InfixOp& o : kInfix) {
      if (line_.substr(p_, o.token.size()) == o.token) {
        op = &o;
        break;
      }
    }
    if (op == nullptr || (op->token == "%" && IsDigit(Peek(1)))) {
      return Error(op_at, "expected an operator, found '" + Rest() + "'");
    }
    p_ += op->token.size();
    in->kind = RawKind::kOperator;
    in->name = std::string(op->name);
    in->args.push_back(std::move(first));
    in->args.emplace_back();
    return ParseOperand(&in->args[1]);
  }

  // ----- resolution -----
  Result<Module> Resolve(std::vector<RawFunction>& raw) {
    Module m;
    m.file_name_ = file_;
    for (size_t i = 0; i < raw.size(); ++i) m.by_name_[raw[i].name] = static_cast<int>(i);
    uint32_t uid = 0;
    for (RawFunction& rf : raw) {
      Function f;
      f.name = rf.name;
      f.value = Value::Function(rf.name);
      f.ir_text = std::move(rf.ir_text);
      f.pos = rf.pos;
      // Slots: every SSA id defined, in textual order.
      std::unordered_map<uint32_t, uint32_t> slot;
      std::unordered_map<uint32_t, SourcePos> def_pos;
      auto define = [&](uint32_t ssa, SourcePos pos) -> Status {
        auto [it, inserted] = def_pos.emplace(ssa, pos);
        if (!inserted) {
          return ErrorAt(pos, "redefinition of %" + std::to_string(ssa) + " (first defined at " +
                                  std::to_string(it->second.line) + ":" +
                                  std::to_string(it->second.col) + ")");
        }
        slot[ssa] = static_cast<uint32_t>(slot.size());
        return Status::Ok();
      };
      for (const RawBlock& b : rf.blocks) {
        for (size_t k = 0; k < b.arg_ssa.size(); ++k) {
          IRT_RETURN_IF_ERROR(define(b.arg_ssa[k], b.arg_pos[k]));
        }
        for (const RawInstr& s : b.stmts) IRT_RETURN_IF_ERROR(define(s.dst, s.pos));
      }
      f.num_slots = static_cast<uint32_t>(slot.size());
      f.num_params = static_cast<uint32_t>(rf.blocks[0].arg_ssa.size()) - 1;
      m.first_param_uid_.push_back(uid);
      uid += f.num_params + 1;

      auto operand = [&](const RawOperand& o) -> Result<Operand> {
        Operand r;
        if (o.is_ssa) {
          auto it = slot.find(o.ssa);
          if (it == slot.end()) {
            return ErrorAt(o.pos, "unknown SSA value %" + std::to_string(o.ssa) + " in function '" +
                                      f.name + "'");
          }
          r.index = it->second;
        } else {
          r.index = static_cast<uint32_t>(f.constants.size());
          r.is_const = true;
          f.constants.push_back(o.literal);
        }
        return r;
      };
      auto add_operands = [&](Instr& in, const std::vector<RawOperand>& ops) -> Status {
        in.first_arg = static_cast<uint32_t>(f.operands.size());
        in.nargs = static_cast<uint16_t>(ops.size());
        for (const RawOperand& o : ops) {
          IRT_ASSIGN_OR_RETURN(Operand r, operand(o));
          f.operands.push_back(r);
        }
        return Status::Ok();
      };

      size_t nblocks = rf.blocks.size();
      for (size_t bi = 0; bi < nblocks; ++bi) {
        const RawBlock& rb = rf.blocks[bi];
        Block b;
        b.first = static_cast<uint32_t>(f.code.size());
        b.pos = rb.pos;
        b.arg_ssa = rb.arg_ssa;
        b.arg_pos = rb.arg_pos;
        for (uint32_t s : rb.arg_ssa) b.arg_slots.push_back(slot[s]);
        if (bi == 0) {
          b.first_arg_uid = m.first_param_uid_.back();
        } else {
          b.first_arg_uid = uid;
          uid += static_cast<uint32_t>(rb.arg_ssa.size());
        }
        for (const RawInstr& s : rb.stmts) {
          Instr in;
          in.uid = uid++;
          in.ssa = s.dst;
          in.block = rb.number;
          in.pos = s.pos;
          in.dst = slot[s.dst];
          IRT_RETURN_IF_ERROR(add_operands(in, s.args));
          switch (s.kind) {
            case RawKind::kConst:
              in.code = OpCode::kConst;
              in.target = static_cast<uint32_t>(f.constants.size());
              f.constants.push_back(s.constant);
              break;
            case RawKind::kOperator:
              in.code = OpCode::kPrim;
              in.op = FindPrim(s.name, s.args.size());
              in.name = s.name;
              break;
            case RawKind::kNamedCall: {
              in.name = s.name;
              int callee = m.Find(s.name);
              if (callee >= 0) {
                in.code = OpCode::kCall;
                in.target = static_cast<uint32_t>(callee);
              } else if (const OpDef* op = FindPrim(s.name, s.args.size())) {
                in.code = OpCode::kPrim;
                in.op = op;
              } else {
                in.code = OpCode::kUndefined;
              }
              break;
            }
            default:
              break;
          }
          f.code.push_back(std::move(in));
        }
        // Branches; a block without an unconditional one falls through.
        uint32_t position = 0;
        bool terminated = false;
        for (const RawInstr& s : rb.branches) {
          Instr in;
          in.uid = uid++;
          in.ssa = ++position;
          in.block = rb.number;
          in.pos = s.pos;
          if (s.kind == RawKind::kReturn) {
            in.code = OpCode::kReturn;
            IRT_RETURN_IF_ERROR(add_operands(in, s.args));
            terminated = true;
          } else {
            if (s.target == 1) return ErrorAt(s.target_pos, "cannot branch to the entry block 1");
            if (s.target < 1 || s.target > nblocks) {
              return ErrorAt(s.target_pos, "unknown block " + std::to_string(s.target) +
                                               " in function '" + f.name + "'");
            }
            const RawBlock& tb = rf.blocks[s.target - 1];
            if (s.args.size() != tb.arg_ssa.size()) {
              return ErrorAt(s.pos, "block " + std::to_string(s.target) + " takes " +
                                        std::to_string(tb.arg_ssa.size()) + " arguments, " +
                                        std::to_string(s.args.size()) + " given");
            }
            std::vector<RawOperand> ops = s.args;
            if (s.has_cond) ops.push_back(s.cond);
            IRT_RETURN_IF_ERROR(add_operands(in, ops));
            in.nargs = static_cast<uint16_t>(s.args.size());
            in.code = s.has_cond ? OpCode::kBrUnless : OpCode::kBr;
            in.target = s.target - 1;
            in.direct = true;
            for (const RawOperand& o : ops) {
              for (uint32_t t : tb.arg_ssa) in.direct = in.direct && !(o.is_ssa && o.ssa == t);
            }
            if (!s.has_cond) terminated = true;
          }
          f.code.push_back(std::move(in));
          if (terminated) break;  // later branches are unreachable
        }
        if (!terminated) {
          SourcePos where = rb.branches.empty() ? (rb.stmts.empty() ? rb.pos : rb.stmts.back().pos)
                                                : rb.branches.back().pos;
          if (bi + 1 >= nblocks) {
            return ErrorAt(where, "block " + std::to_string(rb.number) + " of function '" + f.name +
                                      "' does not end with a return or a branch");
          }
          if (!rf.blocks[bi + 1].arg_ssa.empty()) {
            return ErrorAt(where, "block " + std::to_string(rb.number) +
                                      " falls through to block " + std::to_string(rb.number + 1) +
                                      ", which takes arguments");
          }
          Instr in;
          in.uid = uid++;
          in.ssa = ++position;
          in.block = rb.number;
          in.pos = where;
          in.code = OpCode::kBr;
          in.direct = true;
          in.target = static_cast<uint32_t>(bi + 1);
          in.first_arg = static_cast<uint32_t>(f.operands.size());
          f.code.push_back(std::move(in));
        }
        f.blocks.push_back(std::move(b));
      }
      m.functions_.push_back(std::move(f));
    }
    m.num_uids_ = uid;
    return m;
  }

  std::string_view text_;
  std::string file_;
  std::string_view line_;
  uint32_t line_no_ = 0;
  size_t p_ = 0;
};

Result<Module> Module::Parse(std::string_view text, std::string file_name) {
  return ModuleParser(text, std::move(file_name)).Run();
}

Result<Module> Module::Load(const std::string& path) {
  IRT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return Parse(text, path);
}

}  // namespace irt::ir
