// IRTracker's node notation, in one place: the line of a node
// ("@4: [§1:%4] ⟨sin⟩(@2) → 0.84::Float64") and the root-call line that
// heads a listing, built from pieces (head, body, result, metadata) that
// irt-print, irt-diff and irt-dot share. How a referenced operand is named
// is the caller's: "@k" in a listing, the aligned position in a diff, "#id"
// for a reference that leaves the body. Internal to libtrace.
#ifndef IRT_SRC_PRINT_NOTATION_H_
#define IRT_SRC_PRINT_NOTATION_H_

#include <charconv>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "irt/graph.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace irt::internal {

/// Appends the decimal digits of `v` (positions, ids and counts in text).
inline void AppendU(std::string& out, uint64_t v) {
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, p);
}

/// Writes the name of the node a reference operand points at. A reference
/// to a callable, not an owner: it must not outlive what it was built from.
class OperandNamer {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, OperandNamer>>>
  OperandNamer(F&& f)  // NOLINT(google-explicit-constructor): built in place at each call
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, std::string& out, NodeId ref) -> Status {
          return (*static_cast<std::remove_reference_t<F>*>(o))(out, ref);
        }) {}
  Status operator()(std::string& out, NodeId ref) const { return call_(obj_, out, ref); }

 private:
  void* obj_;
  Status (*call_)(void*, std::string&, NodeId);
};

/// "#id" for every reference: for lines with no enclosing body (the root).
Status NameById(std::string& out, NodeId ref);

/// "@k" for a reference to a child of `body`, "#id" for one that leaves it.
struct NameInBody {
  const CallBody& body;
  Status operator()(std::string& out, NodeId ref) const;
};

struct NotationOptions {
  FormatOptions format;
  bool show_meta = true;
  /// Metadata keys left off the line (irt-diff --ignore-meta).
  const std::set<std::string, std::less<>>* ignore_meta = nullptr;
};

/// "§b:%i" or "§b:&k".
void AppendLocation(std::string& out, const Location& l);
/// "value::Type".
void AppendTypedValue(std::string& out, const Value& v, const FormatOptions& fo);
/// "@k", "#id" (through `name`) or "⟨literal⟩".
Status AppendOperand(std::string& out, const Operand& o, const OperandNamer& name,
                     const FormatOptions& fo);
/// "⟨op⟩(a, b)", "$(op)(a, b)", or with `nested` "⟨op⟩(a, b, ()...)".
Status AppendCallee(std::string& out, const NodeView& v, const OperandNamer& name, bool nested,
                    const FormatOptions& fo);

/// The pieces of a node line, "HEAD BODY RESULT META": HEAD is
/// "@k: [Arg:§b:%i]"; BODY what the node does ("⟨sin⟩(@2)", "goto §4 since
/// @3 == true", a constant's value); RESULT "→ value::Type" or "→ error...";
/// META "  # key = value, ...". BODY may be empty (an error without an
/// operation), and so may RESULT (see HasResult).
void AppendNodeHead(std::string& out, const NodeView& v, uint64_t pos);
/// Whether the node's line has a RESULT piece.
bool HasResult(const NodeView& v);
Status AppendNodeBody(std::string& out, const NodeView& v, const OperandNamer& name,
                      const FormatOptions& fo);
/// `end` is a nested call's closer (kNoNode while unfinished); the result of
/// a nested call is read from it.
Status AppendNodeResult(std::string& out, const Trace& trace, const NodeView& v, NodeId end,
                        const FormatOptions& fo);
void AppendNodeMeta(std::string& out, const NodeView& v, const NotationOptions& opts);

/// The whole line of child `pos` (0-based) of a body, node `v`.
Status AppendNodeLine(std::string& out, const Trace& trace, const NodeView& v, uint64_t pos,
                      NodeId end, const OperandNamer& name, const NotationOptions& opts);

/// The root call as it heads a listing: "⟨h⟩(⟨2.0⟩, ⟨2⟩, ()...) → 3.0::Float64".
Status AppendRootCallLine(std::string& out, const Trace& trace, const NodeView& root, NodeId end,
                          const NotationOptions& opts);

}  // namespace irt::internal

#endif  // IRT_SRC_PRINT_NOTATION_H_
