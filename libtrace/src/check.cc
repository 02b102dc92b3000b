// The complete checker: one pass over the chunks with a stack of open calls.
#include "irt/check.h"

#include "chunk.h"

namespace irt {

Result<CheckSummary> CheckTrace(const std::string& path) {
  IRT_ASSIGN_OR_RETURN(ChunkStream stream, ChunkStream::Open(path));
  CheckSummary sum;
  std::vector<NodeId> open;  // markers of the open calls
  NodeId id = 0;
  bool root_closed = false;
  for (;;) {
    IRT_ASSIGN_OR_RETURN(const fb::Chunk* c, stream.Next());
    if (c == nullptr) break;
    const ChunkInfo& info = stream.info();
    const internal::ChunkFacts& facts = internal::FactsOf(stream);
    auto fail = [&](NodeId node, const std::string& what) -> Status {
      return DataError(stream.name() + ": " + internal::At(info.index, node, what));
    };
    if (sum.chunks == 0) {
      sum.format_major = c->format_major();
      sum.format_minor = c->format_minor();
      if (c->producer()) {
        if (c->producer()->name()) sum.producer_name = c->producer()->name()->str();
        if (c->producer()->version()) sum.producer_version = c->producer()->version()->str();
      }
    }
    if (info.base_depth != open.size()) {
      return DataError(stream.name() + ": chunk " + std::to_string(info.index) +
                       ": starts at call depth " + std::to_string(info.base_depth) +
                       ", the nodes before it leave " + std::to_string(open.size()) +
                       " calls open");
    }
    uint32_t n = c->nodes() ? c->nodes()->size() : 0;
    for (uint32_t local = 0; local < n; ++local, ++id) {
      // ChunkStream checked every node (internal::CheckNodes); what is left
      // is what needs the calls opened in earlier chunks.
      const fb::Node* node = c->nodes()->Get(local);
      const fb::NodeClass* k = c->classes()->Get(node->cls());
      if (root_closed) return fail(id, "node after the root call has closed");
      if (k->kind() == fb::Kind::Call) {
        open.push_back(id);
        ++sum.calls;
        if (open.size() > sum.max_depth) sum.max_depth = open.size();
      } else if (k->kind() == fb::Kind::Return || k->kind() == fb::Kind::Error) {
        uint32_t nrefs = facts.class_refs[node->cls()];
        NodeId marker = id - c->refs()->Get(node->first_ref() + nrefs - 1);
        if (open.empty() || marker != open.back()) {
          return fail(id, "closes node " + std::to_string(marker) +
                              (open.empty() ? ", but no call is open"
                                            : ", but the innermost open call starts at node " +
                                                  std::to_string(open.back())));
        }
        open.pop_back();
        if (open.empty()) root_closed = true;
      }
    }
    sum.nodes += n;
    ++sum.chunks;
    if (info.last) {
      sum.complete = true;
      if (c->total_nodes() != id) {
        return DataError(stream.name() + ": chunk " + std::to_string(info.index) +
                         ": final chunk says " + std::to_string(c->total_nodes()) +
                         " nodes, the chunks hold " + std::to_string(id));
      }
      if (!open.empty()) {
        return DataError(stream.name() + ": the trace ends with " + std::to_string(open.size()) +
                         " calls still open (the call at node " + std::to_string(open.back()) +
                         " never returns)");
      }
    }
  }
  sum.bytes = stream.bytes_read();
  return sum;
}

}  // namespace irt
