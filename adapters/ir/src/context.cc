// The built-in tracking context behind irt-trace's options.
#include "irt/ir/context.h"

namespace irt::ir {

StandardContext::StandardContext(ContextOptions options)
    : options_(std::move(options)),
      primitives_(options_.primitives.begin(), options_.primitives.end()) {}

bool StandardContext::CanRecur(const CallSite& site, uint32_t level) {
  if (options_.max_depth != 0 && level >= options_.max_depth) return false;
  return primitives_.find(site.callee) == primitives_.end();
}

bool StandardContext::WantsNodes(const StatementInfo& stmt) {
  return options_.tag_random && stmt.builtin && (stmt.op == "rand" || stmt.op == "randn");
}

void StandardContext::OnNode(NodeId id, const NodeInfo& node, TraceWriter& writer) {
  (void)id;
  writer.AddMeta("random", node.stmt.op == "rand" ? uniform_ : normal_);
}

}  // namespace irt::ir
