// Tracking contexts, after IRTracker's: what a trace records is customised
// by a context object that decides which calls are traced with their bodies
// (the rest are recorded as primitive calls, their values still computed)
// and that may attach metadata to nodes as they are recorded.
#ifndef IRT_IR_CONTEXT_H_
#define IRT_IR_CONTEXT_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "irt/ir/module.h"
#include "irt/trace.h"
#include "irt/value.h"
#include "irt/writer.h"

namespace irt::ir {

/// A call of a module function about to be made from a traced body.
struct CallSite {
  std::string_view caller;
  std::string_view callee;
  uint32_t block = 0;  // 1-based, in the caller
  uint32_t ssa = 0;    // the SSA id the call defines
  SourcePos pos;
};

/// The static description of a statement, branch or argument, the same for
/// every node recorded from it.
struct StatementInfo {
  NodeKind kind = NodeKind::kPrimitive;  // Argument, Constant, Primitive, Call, Jump or Return
  bool builtin = false;                  // a built-in primitive (not a module function)
  std::string_view function;             // the function holding it
  std::string_view op;                   // primitive or callee name; "" for none
  uint32_t block = 0;
  uint32_t pos = 0;  // SSA id, or branch position for jumps and returns
  SourcePos source;
};

/// One recorded node, as OnNode sees it.
struct NodeInfo {
  NodeKind kind;  // may differ from stmt.kind: a call recorded as Primitive
  const StatementInfo& stmt;
  const Value& value;
};

class TrackingContext {
 public:
  virtual ~TrackingContext() = default;
  /// Whether a call at nesting `level` (the root call is level 1, the calls
  /// its body makes are level 2) is traced with its body. If not, it is
  /// recorded as one Primitive node; its value is still computed.
  virtual bool CanRecur(const CallSite& site, uint32_t level) {
    (void)site;
    (void)level;
    return true;
  }
  /// Whether OnNode is called for the nodes of `stmt`. Asked once per
  /// statement and trace, so that nodes nobody watches cost nothing.
  virtual bool WantsNodes(const StatementInfo& stmt) {
    (void)stmt;
    return false;
  }
  /// Called right after a node of a wanted statement has been appended;
  /// writer.AddMeta attaches metadata to it.
  virtual void OnNode(NodeId id, const NodeInfo& node, TraceWriter& writer) {
    (void)id;
    (void)node;
    (void)writer;
  }
};

struct ContextOptions {
  /// Calls at this nesting level or deeper are recorded as primitives (the
  /// root call is level 1 and always traced); 0 means no limit. With 2 the
  /// root's calls are primitives, like IRTracker's DepthLimitContext(2).
  uint32_t max_depth = 0;
  /// Module functions recorded as primitives wherever they are called.
  std::vector<std::string> primitives;
  /// Tag every rand()/randn() draw with metadata random = "uniform"/"normal".
  bool tag_random = false;
};

/// The built-in context behind irt-trace's options.
class StandardContext : public TrackingContext {
 public:
  explicit StandardContext(ContextOptions options);
  bool CanRecur(const CallSite& site, uint32_t level) override;
  bool WantsNodes(const StatementInfo& stmt) override;
  void OnNode(NodeId id, const NodeInfo& node, TraceWriter& writer) override;

 private:
  ContextOptions options_;
  std::set<std::string, std::less<>> primitives_;
  Value uniform_ = Value::String("uniform");
  Value normal_ = Value::String("normal");
};

}  // namespace irt::ir

#endif  // IRT_IR_CONTEXT_H_
