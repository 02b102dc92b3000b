// irt::PrintGradient: a gradient result as text or JSON.
#include "irt/print.h"

#include <string>

#include "irt/grad.h"
#include "irt/json.h"

namespace irt {

namespace {

std::string ArgLocation(const ArgumentDerivative& a) {
  return "§" + std::to_string(a.location.block) + ":%" + std::to_string(a.location.pos);
}

}  // namespace

Status PrintGradient(const GradResult& r, const GradPrintOptions& opts, Output& out) {
  FormatOptions fo;
  fo.max_elements = opts.max_elements;
  std::string s;
  bool forward = r.mode == GradMode::kForward;
  if (opts.json) {
    JsonValueOptions jo;
    jo.max_elements = opts.json_max_elements;
    s += "{\"mode\":";
    s += forward ? "\"forward\"" : "\"reverse\"";
    s += ",\"function\":";
    AppendJsonString(s, r.function);
    s += ",\"args\":[";
    for (size_t i = 0; i < r.call_args.size(); ++i) {
      if (i) s += ',';
      AppendJsonValue(s, r.call_args[i], jo);
    }
    s += "],\"value\":";
    AppendJsonValue(s, r.result, jo);
    s += ",\"type\":";
    AppendJsonString(s, TypeName(r.result));
    if (!forward) {
      s += ",\"seed\":";
      AppendJsonValue(s, r.seed, jo);
    }
    s += forward ? ",\"tangents\":[" : ",\"derivatives\":[";
    bool first = true;
    for (const ArgumentDerivative& a : r.arguments) {
      if (!a.chosen) continue;
      if (!first) s += ',';
      first = false;
      s += "{\"pos\":" + std::to_string(a.pos) + ",\"location\":";
      AppendJsonString(s, ArgLocation(a));
      s += ",\"value\":";
      AppendJsonValue(s, a.value, jo);
      s += ",\"type\":";
      AppendJsonString(s, TypeName(a.value));
      s += ",\"differentiable\":";
      s += a.differentiable ? "true" : "false";
      if (a.differentiable) {
        s += forward ? ",\"tangent\":" : ",\"derivative\":";
        AppendJsonValue(s, a.derivative, jo);
      }
      s += '}';
    }
    s += ']';
    if (forward) {
      s += ",\"derivative\":";
      AppendJsonValue(s, r.tangent, jo);
    }
    s += "}\n";
    out << s;
    return Status::Ok();
  }
  s += "⟨" + DisplayString(r.function) + "⟩(";
  for (size_t i = 0; i < r.call_args.size(); ++i) {
    if (i) s += ", ";
    s += "⟨" + FormatValue(r.call_args[i], fo) + "⟩";
  }
  s += r.call_args.empty() ? "()...) → " : ", ()...) → ";
  s += FormatValue(r.result, fo) + "::" + TypeName(r.result) + "\n";
  for (const ArgumentDerivative& a : r.arguments) {
    if (!a.chosen) continue;
    s += "  @" + std::to_string(a.pos) + ": [Arg:" + ArgLocation(a) + "] " +
         FormatValue(a.value, fo) + "::" + TypeName(a.value);
    if (!a.differentiable) {
      s += "  not differentiable\n";
      continue;
    }
    s += forward ? "  tangent = " : "  ∂ = ";
    s += FormatValue(a.derivative, fo) + "::" + TypeName(a.derivative) + "\n";
  }
  if (forward) s += "  ∂ = " + FormatValue(r.tangent, fo) + "::" + TypeName(r.tangent) + "\n";
  out << s;
  return Status::Ok();
}

}  // namespace irt
