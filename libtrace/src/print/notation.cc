// The node notation shared by irt-print, irt-diff and irt-dot (see
// notation.h). Each piece is written once; a line is its pieces joined.
#include "print/notation.h"

#include <charconv>

namespace irt::internal {

namespace {

bool IsBlockArgument(const NodeView& v) {
  return v.kind() == NodeKind::kArgument && v.block_arg_index() != 0 && v.num_operands() == 1;
}

// "value::Type" of a node. A tensor is formatted where the trace holds it:
// showing a few elements of a large tensor must not copy it (a tensor
// passed to a call per iteration would be copied per call).
void AppendNodeValue(std::string& out, const NodeView& v, const FormatOptions& fo) {
  if (std::optional<TensorView> t = v.tensor()) {
    out += FormatTensor(t->dtype, t->shape, t->data, fo);
    out += "::";
    out += TensorTypeName(t->dtype, t->shape.size());
    return;
  }
  AppendTypedValue(out, v.value(), fo);
}

// "→ value::Type" of a nested call, read from its closer.
Status AppendCallResult(std::string& out, const Trace& trace, NodeId end, const FormatOptions& fo) {
  if (end == kNoNode) {
    out += "→ (unfinished)";
    return Status::Ok();
  }
  IRT_ASSIGN_OR_RETURN(NodeView e, trace.node(end));
  if (e.kind() == NodeKind::kError) {
    out += "→ error";
  } else {
    out += "→ ";
    AppendNodeValue(out, e, fo);
  }
  return Status::Ok();
}

}  // namespace

Status NameById(std::string& out, NodeId ref) {
  out += '#';
  AppendU(out, ref);
  return Status::Ok();
}

Status NameInBody::operator()(std::string& out, NodeId ref) const {
  int64_t p = body.PositionOf(ref);
  if (p < 0) return NameById(out, ref);
  out += '@';
  AppendU(out, static_cast<uint64_t>(p) + 1);
  return Status::Ok();
}

void AppendLocation(std::string& out, const Location& l) {
  out += "§";
  AppendU(out, l.block);
  out += l.is_branch ? ":&" : ":%";
  AppendU(out, l.pos);
}

void AppendTypedValue(std::string& out, const Value& v, const FormatOptions& fo) {
  out += FormatValue(v, fo);
  out += "::";
  out += TypeName(v);
}

Status AppendOperand(std::string& out, const Operand& o, const OperandNamer& name,
                     const FormatOptions& fo) {
  if (o.is_ref) return name(out, o.ref);
  out += "⟨";
  out += FormatValue(o.literal, fo);
  out += "⟩";
  return Status::Ok();
}

Status AppendCallee(std::string& out, const NodeView& v, const OperandNamer& name, bool nested,
                    const FormatOptions& fo) {
  if (v.kind() == NodeKind::kSpecial) {
    out += "$(";
    out += DisplayString(v.op());
    out += ")";
  } else {
    out += "⟨";
    out += DisplayString(v.op());
    out += "⟩";
  }
  out += '(';
  size_t n = v.num_operands();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    IRT_RETURN_IF_ERROR(AppendOperand(out, v.operand(i), name, fo));
  }
  if (nested) out += n > 0 ? ", ()..." : "()...";
  out += ')';
  return Status::Ok();
}

bool HasResult(const NodeView& v) {
  switch (v.kind()) {
    case NodeKind::kConstant:
    case NodeKind::kJump:
      return false;
    case NodeKind::kArgument:
      return IsBlockArgument(v);
    default:
      return true;
  }
}

void AppendNodeHead(std::string& out, const NodeView& v, uint64_t pos) {
  out += '@';
  AppendU(out, pos + 1);
  out += ": [";
  if (v.kind() == NodeKind::kArgument) out += "Arg:";
  if (v.kind() == NodeKind::kConstant) out += "Const:";
  AppendLocation(out, v.location());
  out += ']';
}

Status AppendNodeBody(std::string& out, const NodeView& v, const OperandNamer& name,
                      const FormatOptions& fo) {
  switch (v.kind()) {
    case NodeKind::kArgument:
      if (IsBlockArgument(v)) {
        IRT_RETURN_IF_ERROR(AppendOperand(out, v.operand(0), name, fo));
        out += '#';
        AppendU(out, v.block_arg_index());
      } else {
        // A function argument is only its value.
        AppendNodeValue(out, v, fo);
      }
      break;
    case NodeKind::kConstant:
      if (std::optional<TensorView> t = v.tensor()) {
        out += FormatTensor(t->dtype, t->shape, t->data, fo);
      } else {
        out += FormatValue(v.value(), fo);
      }
      break;
    case NodeKind::kPrimitive:
    case NodeKind::kSpecial:
      return AppendCallee(out, v, name, false, fo);
    case NodeKind::kCall:
      return AppendCallee(out, v, name, true, fo);
    case NodeKind::kJump: {
      out += "goto §";
      AppendU(out, v.jump_target());
      size_t n = v.num_operands() - (v.has_condition() ? 1 : 0);
      if (n > 0) {
        out += " (";
        for (size_t i = 0; i < n; ++i) {
          if (i > 0) out += ", ";
          IRT_RETURN_IF_ERROR(AppendOperand(out, v.operand(i), name, fo));
        }
        out += ')';
      }
      if (v.has_condition()) {
        out += " since ";
        IRT_RETURN_IF_ERROR(AppendOperand(out, v.operand(n), name, fo));
        out += v.taken_when() ? " == true" : " == false";
      }
      break;
    }
    case NodeKind::kReturn:
      out += "return ";
      if (v.num_operands() > 0) IRT_RETURN_IF_ERROR(AppendOperand(out, v.operand(0), name, fo));
      break;
    case NodeKind::kError:
      if (!v.op().empty()) return AppendCallee(out, v, name, false, fo);
      break;
  }
  return Status::Ok();
}

Status AppendNodeResult(std::string& out, const Trace& trace, const NodeView& v, NodeId end,
                        const FormatOptions& fo) {
  switch (v.kind()) {
    case NodeKind::kArgument:
      if (IsBlockArgument(v)) {
        out += "→ ";
        AppendNodeValue(out, v, fo);
      }
      break;
    case NodeKind::kConstant:
    case NodeKind::kJump:
      break;
    case NodeKind::kPrimitive:
    case NodeKind::kSpecial:
    case NodeKind::kReturn:
      out += "→ ";
      AppendNodeValue(out, v, fo);
      break;
    case NodeKind::kCall:
      return AppendCallResult(out, trace, end, fo);
    case NodeKind::kError:
      out += "→ error";
      if (auto msg = v.meta("error"); msg && msg->kind() == VKind::kString) {
        out += ": ";
        out += DisplayString(msg->str());
      }
      break;
  }
  return Status::Ok();
}

void AppendNodeMeta(std::string& out, const NodeView& v, const NotationOptions& opts) {
  if (!opts.show_meta) return;
  bool first = true;
  for (const MetaEntry& m : v.meta()) {
    if (v.kind() == NodeKind::kError && m.key == "error") continue;  // already on the line
    if (opts.ignore_meta != nullptr && opts.ignore_meta->count(m.key) != 0) continue;
    out += first ? "  # " : ", ";
    first = false;
    out += DisplayString(m.key);
    out += " = ";
    out += FormatValue(m.value, opts.format);
  }
}

Status AppendNodeLine(std::string& out, const Trace& trace, const NodeView& v, uint64_t pos,
                      NodeId end, const OperandNamer& name, const NotationOptions& opts) {
  AppendNodeHead(out, v, pos);
  out += ' ';
  size_t body = out.size();
  IRT_RETURN_IF_ERROR(AppendNodeBody(out, v, name, opts.format));
  if (HasResult(v)) {
    if (out.size() != body) out += ' ';
    IRT_RETURN_IF_ERROR(AppendNodeResult(out, trace, v, end, opts.format));
  }
  AppendNodeMeta(out, v, opts);
  return Status::Ok();
}

Status AppendRootCallLine(std::string& out, const Trace& trace, const NodeView& root, NodeId end,
                          const NotationOptions& opts) {
  auto by_id = [](std::string& o, NodeId ref) { return NameById(o, ref); };
  IRT_RETURN_IF_ERROR(AppendCallee(out, root, by_id, true, opts.format));
  out += ' ';
  IRT_RETURN_IF_ERROR(AppendCallResult(out, trace, end, opts.format));
  AppendNodeMeta(out, root, opts);
  return Status::Ok();
}

}  // namespace irt::internal
