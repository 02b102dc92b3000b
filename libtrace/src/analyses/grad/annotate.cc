// irt::WriteAnnotated: the trace again, each node with its adjoint as
// metadata.
#include <string>
#include <unordered_map>
#include <vector>

#include "irt/grad.h"
#include "irt/writer.h"

// Last: it turns on the popcnt instruction for the rest of the file.
#include "analyses/grad/engine.h"

namespace irt {

using internal::grad::Cat;
using internal::grad::CheckSomeDifferentiable;
using internal::grad::ClassInfo;
using internal::grad::GradEngine;
using internal::grad::Now;
using internal::grad::Prepared;

namespace {

ClassSpec SpecOf(const internal::ChunkColumns& c, const internal::ClassFacts& fc) {
  ClassSpec s;
  s.kind = fc.kind;
  s.op = std::string(fc.op);
  s.block = fc.block;
  s.pos = fc.pos;
  s.aux = fc.aux;
  s.line = fc.line;
  s.col = fc.col;
  s.has_condition = (fc.flags & 1) != 0;
  s.condition_taken_when = (fc.flags & 2) != 0;
  for (uint32_t j = 0; j < fc.n_operands; ++j) {
    uint32_t o = c.operand_code(fc, j);
    if (o == 0) {
      s.operands.push_back(OperandSpec::Ref());
    } else {
      s.operands.push_back(OperandSpec::Literal(c.literal(o)));
    }
  }
  return s;
}

}  // namespace

namespace {

Result<GradResult> WriteAnnotatedChecked(const Trace& trace, const RuleSet& rules,
                                         const GradOptions& options, Output& out) {
  GradOptions opts;
  IRT_ASSIGN_OR_RETURN(GradResult r, Prepared(trace, options, &opts));
  opts.keep_adjoints = true;
  GradEngine e(trace, rules, opts);
  IRT_RETURN_IF_ERROR(e.ForwardPass(false, false));
  IRT_RETURN_IF_ERROR(CheckSomeDifferentiable(r, e.args()));
  IRT_RETURN_IF_ERROR(e.ReversePass());
  IRT_RETURN_IF_ERROR(e.Finish(&r));
  double t0 = Now();
  // A nested call's marker shows the adjoint of the call's result (its closer's).
  std::unordered_map<NodeId, NodeId> marker_closer;
  for (NodeId id = trace.size(); id-- > 0;) {
    if (!e.Touched(id)) continue;
    e.Trim();
    GradEngine::Loc l = e.Locate(id);
    if (e.Cls(l).f->kind == NodeKind::kReturn) marker_closer[e.RootMarkerOfRuledCloser(l, id)] = id;
  }
  WriterOptions wo;
  wo.producer_name = std::string(trace.producer_name());
  wo.producer_version = std::string(trace.producer_version());
  TraceWriter w(&out, wo);
  std::vector<NodeId> refs;
  for (uint32_t ci = 0; ci < trace.chunks().size(); ++ci) {
    IRT_ASSIGN_OR_RETURN(const internal::ChunkColumns* c, internal::ColumnsOf(trace, ci));
    for (const internal::ChunkColumns::Function& f : c->Functions()) {
      w.RegisterFunction(std::string(f.name), std::string(f.ir));
      if (f.facts) w.RegisterControlFlow(std::string(f.name), *f.facts);
    }
    std::vector<ClassId> cls(c->classes.size(), ~0u);
    for (uint32_t local = 0; local < c->count; ++local) {
      // As the passes: the engine holds a bounded set of decoded chunks,
      // given back at the top of the loop; locating the node decodes its
      // chunk again if it was, before its columns are read.
      e.Trim();
      const NodeId id = c->base + local;
      GradEngine::Loc l = e.Locate(id);
      const internal::RawNode nd(c, local);
      const ClassInfo& k = e.Cls(l);
      uint32_t ki = nd.class_index();
      if (cls[ki] == ~0u) cls[ki] = w.DefineClass(SpecOf(*c, nd.cls()));
      refs.clear();
      for (uint32_t j = 0; j < k.f->n_refs; ++j) refs.push_back(e.RefTarget(l, id, j));
      w.Append(cls[ki], nd.value(), refs);
      for (const MetaEntry& m : nd.meta()) w.AddMeta(m.key, m.value);
      std::optional<Value> adj = e.Adjoint(id);
      if (!adj && k.cat == Cat::kRootArg) {
        for (const ArgumentDerivative& a : r.arguments) {
          if (a.id == id && a.chosen && a.differentiable && !a.derivative.is_none()) {
            adj = a.derivative;
          }
        }
      }
      if (!adj && k.f->kind == NodeKind::kCall) {
        auto it = marker_closer.find(id);
        if (it != marker_closer.end()) adj = e.Adjoint(it->second);
      }
      if (adj) w.AddMeta("adjoint", *adj);
    }
  }
  for (const MetaEntry& m : trace.trace_meta()) w.AddTraceMeta(m.key, m.value);
  IRT_RETURN_IF_ERROR(w.Finish());
  r.stats.write_seconds = Now() - t0;
  return r;
}

}  // namespace

Result<GradResult> WriteAnnotated(const Trace& trace, const RuleSet& rules,
                                  const GradOptions& options, Output& out) {
  // As Differentiate: a bounded set of decoded chunks, checked and decoded
  // on a second core ahead of the forward pass; the write reads the chunks
  // in order again through the engine.
  trace.UseTransientColumns();
  trace.VerifyAhead();
  try {
    return WriteAnnotatedChecked(trace, rules, options, out);
  } catch (const internal::grad::ColumnsLost& e) {
    return e.status;
  }
}

}  // namespace irt
