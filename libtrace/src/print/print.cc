// IRTracker's text format and JSON. Printing walks the call tree with an
// explicit stack of loaded bodies, so it touches only the printed calls'
// bodies and never recurses on trace data.
#include "irt/print.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "io/leave_behind.h"
#include "irt/json.h"
#include "print/notation.h"

namespace irt {

using internal::AppendU;

namespace {

internal::NotationOptions Notation(const PrintOptions& opts) {
  internal::NotationOptions no;
  no.format.max_elements = opts.max_elements;
  no.show_meta = opts.show_meta;
  return no;
}

Status AppendNodeLine(std::string& out, const Trace& trace, const CallBody& body, size_t pos,
                      const PrintOptions& opts) {
  Child c = body[pos];
  IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(c.id));
  internal::NameInBody name{body};
  return internal::AppendNodeLine(out, trace, v, pos, c.end, name, Notation(opts));
}

// The line that heads a listing: the root call, or the node at a path.
struct Head {
  Child node;
  std::optional<CallBody> parent;  // absent for the root
  size_t pos = 0;
};

Result<Head> FindHead(const Trace& trace, const std::string& path) {
  Head h;
  IRT_ASSIGN_OR_RETURN(h.node, RootCall(trace));
  IRT_ASSIGN_OR_RETURN(std::vector<uint64_t> positions, ParseNodePath(path));
  std::string walked;
  for (uint64_t pos : positions) {
    if (!h.node.is_call()) {
      return UsageError("bad node path '" + path + "': " + walked + " is not a nested call");
    }
    IRT_ASSIGN_OR_RETURN(CallBody body, CallBody::Load(trace, h.node));
    if (pos > body.size()) {
      return NotFound("node path '" + path + "': " + (walked.empty() ? "the root call" : walked) +
                      " has " + std::to_string(body.size()) + " children, no @" +
                      std::to_string(pos));
    }
    h.node = body[pos - 1];
    h.pos = pos - 1;
    h.parent = std::move(body);
    walked += (walked.empty() ? "@" : "/@") + std::to_string(pos);
  }
  return h;
}

Status AppendHeadLine(std::string& out, const Trace& trace, const Head& h,
                      const PrintOptions& opts) {
  if (h.parent) return AppendNodeLine(out, trace, *h.parent, h.pos, opts);
  IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(h.node.id));
  return internal::AppendRootCallLine(out, trace, v, h.node.end, Notation(opts));
}

void Indent(std::string& out, uint32_t level, uint32_t max_indent) {
  out.append(2 * std::min(level, max_indent), ' ');
}

// ---------------------------------------------------------------- JSON

Status JsonNode(std::string& out, const Trace& trace, const CallBody* body, const Child& c,
                int64_t pos, const PrintOptions& opts) {
  FormatOptions fo;
  fo.max_elements = opts.max_elements;
  IRT_ASSIGN_OR_RETURN(NodeView v, trace.node(c.id));
  out += '{';
  if (pos >= 0) {
    out += "\"pos\":";
    AppendU(out, static_cast<uint64_t>(pos) + 1);
    out += ',';
  }
  out += "\"id\":";
  AppendU(out, c.id);
  out += ",\"kind\":";
  AppendJsonString(out, NodeKindName(v.kind()));
  Location l = v.location();
  std::string loc;
  internal::AppendLocation(loc, l);
  out += ",\"location\":";
  AppendJsonString(out, loc);
  out += ",\"block\":";
  AppendU(out, l.block);
  out += l.is_branch ? ",\"branch\":" : ",\"ssa\":";
  AppendU(out, l.pos);
  if (l.line != 0) {
    out += ",\"line\":";
    AppendU(out, l.line);
    out += ",\"col\":";
    AppendU(out, l.col);
  }
  if (!v.op().empty()) {
    out += ",\"op\":";
    AppendJsonString(out, v.op());
  }
  if (v.kind() == NodeKind::kJump) {
    out += ",\"target\":";
    AppendU(out, v.jump_target());
  }
  if (v.kind() == NodeKind::kArgument && v.block_arg_index() != 0) {
    out += ",\"block_arg\":";
    AppendU(out, v.block_arg_index());
  }
  size_t n = v.num_operands();
  size_t nargs = n - (v.kind() == NodeKind::kJump && v.has_condition() ? 1 : 0);
  out += ",\"args\":[";
  for (size_t i = 0; i < nargs; ++i) {
    if (i) out += ',';
    Operand o = v.operand(i);
    if (o.is_ref) {
      int64_t p = body ? body->PositionOf(o.ref) : -1;
      out += "{\"ref\":";
      if (p >= 0) {
        AppendU(out, static_cast<uint64_t>(p) + 1);
      } else {
        out += "null";
      }
      out += ",\"id\":";
      AppendU(out, o.ref);
      out += '}';
    } else {
      out += "{\"const\":";
      AppendJsonValue(out, o.literal);
      out += ",\"type\":";
      AppendJsonString(out, TypeName(o.literal));
      out += '}';
    }
  }
  out += ']';
  if (v.kind() == NodeKind::kJump && v.has_condition()) {
    Operand o = v.operand(n - 1);
    out += ",\"condition\":{";
    if (o.is_ref) {
      int64_t p = body ? body->PositionOf(o.ref) : -1;
      out += "\"ref\":";
      if (p >= 0)
        AppendU(out, static_cast<uint64_t>(p) + 1);
      else
        out += "null";
    } else {
      out += "\"const\":";
      AppendJsonValue(out, o.literal);
    }
    out += ",\"taken_when\":";
    out += v.taken_when() ? "true" : "false";
    out += '}';
  }
  Value val;
  bool has_value = v.vkind() != VKind::kNone;
  if (v.kind() == NodeKind::kCall) {
    out += ",\"status\":";
    if (c.end == kNoNode) {
      out += "\"unfinished\"";
    } else {
      IRT_ASSIGN_OR_RETURN(NodeView e, trace.node(c.end));
      out += e.kind() == NodeKind::kError ? "\"error\"" : "\"ok\"";
      if (e.kind() == NodeKind::kReturn) {
        val = e.value();
        has_value = true;
      }
    }
  } else if (has_value) {
    val = v.value();
  }
  if (has_value) AppendJsonValueFields(out, val);
  AppendJsonMetaField(out, v.meta());
  return Status::Ok();
}

}  // namespace

Result<std::string> FormatNode(const Trace& trace, const CallBody& body, size_t pos,
                               const PrintOptions& opts) {
  std::string out;
  IRT_RETURN_IF_ERROR(AppendNodeLine(out, trace, body, pos, opts));
  return out;
}

Status PrintText(const Trace& trace, const PrintOptions& opts, Output& out) {
  // A listing reads the trace forward (each body it enters is first walked
  // back from its end, see BodySegments) and gives back the chunks it has
  // passed, so that printing a long trace holds a few chunks.
  if (internal::WorthGivingBack(trace)) trace.UseTransientColumns();
  IRT_ASSIGN_OR_RETURN(Head head, FindHead(trace, opts.node_path));
  internal::LeaveBehind behind(trace, internal::LeaveBehind::kForward, head.node.id);
  std::string line;
  IRT_RETURN_IF_ERROR(AppendHeadLine(line, trace, head, opts));
  line += '\n';
  out.Write(line);
  if (!head.node.is_call() || opts.levels == 1) return Status::Ok();
  struct Frame {
    CallBody body;
    size_t pos = 0;
    uint32_t level = 2;  // level of the body's children
  };
  std::vector<Frame> stack;
  IRT_ASSIGN_OR_RETURN(CallBody top, CallBody::Load(trace, head.node));
  stack.push_back({std::move(top), 0, 2});
  while (!stack.empty() && !out.failed()) {
    Frame& f = stack.back();
    if (f.pos >= f.body.size()) {
      stack.pop_back();
      continue;
    }
    size_t pos = f.pos++;
    line.clear();
    Indent(line, f.level - 1, opts.max_indent);
    IRT_RETURN_IF_ERROR(AppendNodeLine(line, trace, f.body, pos, opts));
    line += '\n';
    out.Write(line);
    Child c = f.body[pos];
    behind.Step(c.id);
    if (c.is_call() && (opts.levels == 0 || f.level + 1 <= opts.levels)) {
      uint32_t level = f.level + 1;
      IRT_ASSIGN_OR_RETURN(CallBody inner, CallBody::Load(trace, c));
      stack.push_back({std::move(inner), 0, level});
    }
  }
  return Status::Ok();
}

Status PrintJson(const Trace& trace, const PrintOptions& opts, Output& out) {
  if (internal::WorthGivingBack(trace)) trace.UseTransientColumns();  // as PrintText
  IRT_ASSIGN_OR_RETURN(Head head, FindHead(trace, opts.node_path));
  internal::LeaveBehind behind(trace, internal::LeaveBehind::kForward, head.node.id);
  std::string s;
  s += "{\"format\":{\"major\":";
  AppendU(s, trace.format_major());
  s += ",\"minor\":";
  AppendU(s, trace.format_minor());
  s += "},\"producer\":{\"name\":";
  AppendJsonString(s, trace.producer_name());
  s += ",\"version\":";
  AppendJsonString(s, trace.producer_version());
  s += "},\"nodes\":";
  AppendU(s, trace.size());
  s += ",\"complete\":";
  s += trace.complete() ? "true" : "false";
  auto tmeta = trace.trace_meta();
  if (!tmeta.empty()) {
    s += ",\"meta\":{";
    for (size_t i = 0; i < tmeta.size(); ++i) {
      if (i) s += ',';
      AppendJsonString(s, tmeta[i].key);
      s += ':';
      AppendJsonValue(s, tmeta[i].value);
    }
    s += '}';
  }
  s += ",\"root\":";
  IRT_RETURN_IF_ERROR(JsonNode(s, trace, head.parent ? &*head.parent : nullptr, head.node,
                               head.parent ? static_cast<int64_t>(head.pos) : -1, opts));
  struct Frame {
    CallBody body;
    size_t pos = 0;
    uint32_t level = 2;
  };
  std::vector<Frame> stack;
  auto open_children = [&](const Child& c, uint32_t level) -> Status {
    if (c.is_call() && (opts.levels == 0 || level <= opts.levels)) {
      IRT_ASSIGN_OR_RETURN(CallBody b, CallBody::Load(trace, c));
      s += ",\"children\":[";
      stack.push_back({std::move(b), 0, level});
    } else {
      s += '}';
    }
    return Status::Ok();
  };
  IRT_RETURN_IF_ERROR(open_children(head.node, 2));
  while (!stack.empty() && !out.failed()) {
    Frame& f = stack.back();
    if (f.pos >= f.body.size()) {
      s += "]}";
      stack.pop_back();
      continue;
    }
    size_t pos = f.pos++;
    if (pos > 0) s += ',';
    Child c = f.body[pos];
    IRT_RETURN_IF_ERROR(JsonNode(s, trace, &f.body, c, static_cast<int64_t>(pos), opts));
    behind.Step(c.id);
    uint32_t level = f.level + 1;
    IRT_RETURN_IF_ERROR(open_children(c, level));
    if (s.size() > (1 << 16)) {
      out.Write(s);
      s.clear();
    }
  }
  s += "}\n";
  out.Write(s);
  return Status::Ok();
}

}  // namespace irt
