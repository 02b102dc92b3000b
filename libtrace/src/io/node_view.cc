// NodeView: one checked node of a Trace, read through its chunk's columns.
#include <optional>
#include <string_view>
#include <vector>

#include "io/column_reader.h"
#include "irt/trace.h"

namespace irt {

internal::RawNode NodeView::Raw() const {
  if (columns_->nodes == nullptr && columns_->count != 0) {
    // Given back by a gradient's passes (Trace::ReleaseColumns): decoded
    // again. Only a file changed since it was checked can make that fail;
    // the view then reads as an Argument without value or operands.
    if (trace_ != nullptr) (void)trace_->columns(columns_->index);
    if (columns_->nodes == nullptr) {
      static const internal::ChunkColumns* const empty = [] {
        static const internal::NodeRec rec{0, 0, 0};
        auto* c = new internal::ChunkColumns;
        c->count = 1;
        c->nodes = &rec;
        c->classes.resize(1);
        return c;
      }();
      return internal::RawNode(empty, 0);
    }
  }
  return internal::RawNode(columns_, local_);
}

NodeKind NodeView::kind() const { return Raw().kind(); }
VKind NodeView::vkind() const { return Raw().vkind(); }
uint64_t NodeView::bits() const { return Raw().bits(); }
Value NodeView::value() const { return Raw().value(); }
std::optional<TensorView> NodeView::tensor() const {
  const internal::RawNode n = Raw();
  if (n.vkind() != VKind::kTensor) return std::nullopt;
  return TensorView{n.chunk().tensor_dtype(n.bits()), n.chunk().tensor_shape(n.bits()),
                    n.chunk().tensor_data(n.bits())};
}
std::string_view NodeView::op() const { return Raw().op(); }
Location NodeView::location() const { return Raw().location(); }
size_t NodeView::num_operands() const { return Raw().num_operands(); }

Operand NodeView::operand(size_t i) const {
  const internal::RawNode n = Raw();
  Operand out;
  uint32_t o = n.operand_code(static_cast<uint32_t>(i));
  if (o != 0) {
    out.literal = n.chunk().literal(o);
    return out;
  }
  uint32_t k = 0;
  for (uint32_t j = 0; j < i; ++j) {
    if (n.operand_code(j) == 0) ++k;
  }
  out.is_ref = true;
  out.ref = n.ref(k);
  return out;
}

std::vector<NodeId> NodeView::refs() const {
  const internal::RawNode n = Raw();
  std::vector<NodeId> out(n.num_refs());
  for (uint32_t k = 0; k < n.num_refs(); ++k) out[k] = n.ref(k);
  return out;
}

uint32_t NodeView::jump_target() const { return Raw().aux(); }
bool NodeView::has_condition() const { return Raw().has_condition(); }
bool NodeView::taken_when() const { return (Raw().flags() & 2) != 0; }
uint32_t NodeView::block_arg_index() const { return Raw().aux(); }

NodeId NodeView::closes() const {
  const internal::RawNode n = Raw();
  return internal::IsCloser(n.kind()) ? n.closes() : kNoNode;
}

std::vector<MetaEntry> NodeView::meta() const { return Raw().meta(); }

std::optional<Value> NodeView::meta(std::string_view key) const {
  for (const MetaEntry& e : meta()) {
    if (e.key == key) return e.value;
  }
  return std::nullopt;
}

}  // namespace irt
