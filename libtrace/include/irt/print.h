// IRTracker's text format and a JSON form of a trace, printed top-down to a
// depth: only the printed nodes are touched.
#ifndef IRT_PRINT_H_
#define IRT_PRINT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "irt/graph.h"
#include "irt/output.h"
#include "irt/status.h"
#include "irt/trace.h"

namespace irt {

/// Nesting depth beyond which listings (irt-print's, irt-dot's, a slice's)
/// indent no further, so that their size stays linear in what they show
/// however deep the calls nest.
inline constexpr uint32_t kMaxIndent = 64;

struct PrintOptions {
  /// Levels to print; the call printed first is level 1. 0 means all.
  uint32_t levels = 0;
  /// Path of the subtree to print ("@8/@4"); empty prints the root.
  std::string node_path;
  /// Print metadata after each node ("  # key = value").
  bool show_meta = true;
  /// Tensors with more elements are abbreviated (0: never).
  int64_t max_elements = 10;
  /// Indentation stops growing at this depth (output stays linear in size).
  uint32_t max_indent = kMaxIndent;
};

/// One line of a node, without indentation or newline, relative to `body`
/// (the call holding it), e.g. "@4: [§1:%4] ⟨+⟩(@3, @2) → 1.84::Float64".
/// For a nested call, `end` is its closing node.
Result<std::string> FormatNode(const Trace& trace, const CallBody& body, size_t pos,
                               const PrintOptions& opts);

/// IRTracker-style listing.
Status PrintText(const Trace& trace, const PrintOptions& opts, Output& out);
/// JSON: {"format":..., "producer":..., "root": {node..., "children":[...]}}.
/// Each node: {"pos","kind","location","op","args","value","type","meta",...}.
/// Values in the notation of irt/json.h.
Status PrintJson(const Trace& trace, const PrintOptions& opts, Output& out);

}  // namespace irt

#endif  // IRT_PRINT_H_
