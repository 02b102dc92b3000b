// The trace writer: the one public API through which every adapter produces a
// trace. It streams self-contained, size-prefixed chunks to an Output as
// nodes arrive, holding at most one chunk in memory and never seeking back,
// so a writer that dies leaves every completed chunk readable.
#ifndef IRT_WRITER_H_
#define IRT_WRITER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/control_flow.h"
#include "irt/output.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace irt {

/// An operand of a statement: a dynamic reference to an earlier node, or a
/// literal written in the IR.
struct OperandSpec {
  bool is_ref = true;
  Value literal;  // when !is_ref
  static OperandSpec Ref() { return {}; }
  static OperandSpec Literal(Value v) { return {false, std::move(v)}; }
};

/// The static description of the nodes one IR statement produces. Define it
/// once (DefineClass) and append many nodes with it.
struct ClassSpec {
  NodeKind kind = NodeKind::kPrimitive;
  std::string op;      // primitive, callee or special name; empty if none
  uint32_t block = 0;  // 1-based IR block
  uint32_t pos = 0;    // SSA id, or branch position for Jump/Return
  uint32_t aux = 0;    // Jump: target block; Argument: 0 or block-arg number
  uint32_t line = 0;   // source span, 0 if unknown
  uint16_t col = 0;
  bool has_condition = false;         // Jump: last operand is its condition
  bool condition_taken_when = false;  // Jump: taken when condition == this
  std::vector<OperandSpec> operands;
};

using ClassId = uint32_t;

struct WriterOptions {
  std::string producer_name = "irtrace";
  std::string producer_version;
  /// A chunk is closed when it holds this many nodes...
  uint32_t chunk_nodes = 1u << 16;
  /// ...or when its encoded size would exceed this many bytes.
  uint64_t chunk_bytes = 64ull << 20;
};

class TraceWriter {
 public:
  /// Writes to `out`, which must outlive the writer.
  TraceWriter(Output* out, WriterOptions options);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  /// Registers a static node shape. Cheap to call once per IR statement.
  ClassId DefineClass(ClassSpec spec);
  /// Records the IR text of a function; it is stored in every chunk that
  /// opens a call to it (so each chunk stays self-contained).
  void RegisterFunction(std::string name, std::string ir_text);
  /// Records the control-flow facts of a function (format 1.1): its blocks,
  /// and the branches and returns of each with their conditions and
  /// targets, as control dependences and replay read them. They are stored
  /// with its IR text (if any) in every chunk that opens a call to it. An
  /// adapter registers them for every function it records; a function
  /// without them gets "no control-flow facts" warnings from those tools.
  /// Facts that CheckControlFlow refuses make status() an error.
  void RegisterControlFlow(std::string name, ControlFlow facts);

  /// Appends a node of class `cls` with `value` and one reference per Ref
  /// operand of the class, in order (each must name an earlier node).
  /// Kind Call opens a call (its body follows); kinds Return and Error close
  /// the innermost open call. Returns the node's global id.
  NodeId Append(ClassId cls, const Value& value, std::span<const NodeId> refs);
  /// Attaches metadata to the node appended last.
  void AddMeta(std::string_view key, const Value& value);
  /// Attaches trace-level metadata (stored on the final chunk).
  void AddTraceMeta(std::string_view key, const Value& value);

  NodeId next_id() const { return next_id_; }
  /// Open calls (the root included) at this point.
  uint32_t depth() const { return static_cast<uint32_t>(open_calls_.size()); }
  /// Global id of the innermost open call marker.
  NodeId innermost_call() const { return open_calls_.back(); }

  /// Writes the final chunk. All calls must be closed. Returns the first
  /// error of any write (they are sticky) or of misuse.
  Status Finish();
  /// The first error so far (misuse of the API or a failed write).
  const Status& status() const { return status_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  NodeId next_id_ = 0;
  std::vector<NodeId> open_calls_;
  Status status_;
  friend struct Impl;
};

}  // namespace irt

#endif  // IRT_WRITER_H_
