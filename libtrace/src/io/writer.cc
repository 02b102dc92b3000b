// Streaming chunk writer. Staging vectors hold the current chunk's columns;
// strings, tensors and tuples go straight into the chunk's FlatBufferBuilder;
// at 2^16 nodes (or the byte budget) the chunk is finished size-prefixed,
// written out, and everything is cleared. Nothing is ever revisited.
#include "irt/writer.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "io/chunk.h"
#include "io/chunk_encoder.h"
#include "io/control_flow.h"
#include "irtrace_generated.h"

namespace irt {

namespace {
struct GlobalClass {
  ClassSpec spec;
  uint32_t n_refs = 0;  // Ref operands, plus one for Return/Error (the call link)
};
constexpr uint32_t kNoLocal = ~0u;
}  // namespace

struct TraceWriter::Impl {
  Output* out;
  WriterOptions opts;
  std::vector<GlobalClass> classes;
  // What a chunk that opens a call to a function says about it.
  struct FunctionInfo {
    std::optional<std::string> ir;
    std::optional<ControlFlow> flow;
  };
  std::unordered_map<std::string, FunctionInfo> functions;

  // Current chunk.
  flatbuffers::FlatBufferBuilder fbb{1 << 20};
  uint64_t chunk_index = 0;
  NodeId base = 0;
  uint32_t base_depth = 0;
  std::vector<fb::Node> nodes;
  std::vector<uint32_t> refs;
  std::vector<fb::NodeClass> local_classes;
  std::vector<uint32_t> operands;
  std::vector<fb::Value> literals;
  internal::ValueEncoder enc{&fbb};  // strings, tensors, tuples
  std::vector<fb::Meta> meta;
  std::vector<flatbuffers::Offset<fb::FunctionIR>> function_irs;
  std::unordered_set<std::string> functions_in_chunk;
  // (global class * kNumVKinds + vkind) -> local class id, valid when stamp == chunk_index + 1.
  std::vector<uint32_t> local_of;
  std::vector<uint64_t> local_stamp;

  // Trace-level metadata, kept as values until the final chunk.
  std::vector<std::pair<std::string, Value>> trace_meta;

  uint32_t Intern(std::string_view s) { return enc.Intern(s); }
  fb::Value Encode(const Value& v) { return enc.Encode(v); }

  uint64_t EstimatedBytes() const {
    return fbb.GetSize() + nodes.size() * sizeof(fb::Node) + refs.size() * 4 +
           local_classes.size() * sizeof(fb::NodeClass) + operands.size() * 4 +
           literals.size() * sizeof(fb::Value) + meta.size() * sizeof(fb::Meta) + 1024;
  }

  uint32_t LocalClass(ClassId cls, VKind vk) {
    size_t key = static_cast<size_t>(cls) * kNumVKinds + static_cast<size_t>(vk);
    if (local_stamp[key] == chunk_index + 1) return local_of[key];
    const ClassSpec& s = classes[cls].spec;
    uint32_t first_operand = static_cast<uint32_t>(operands.size());
    for (const OperandSpec& o : s.operands) {
      if (o.is_ref) {
        operands.push_back(0);
      } else {
        literals.push_back(Encode(o.literal));
        operands.push_back(static_cast<uint32_t>(literals.size()));
      }
    }
    uint32_t op = s.op.empty() ? ~0u : Intern(s.op);
    uint8_t flags = (s.has_condition ? 1 : 0) | (s.condition_taken_when ? 2 : 0);
    local_classes.emplace_back(op, s.block, s.pos, s.aux, first_operand, s.line, s.col,
                               static_cast<uint16_t>(s.operands.size()),
                               static_cast<fb::Kind>(s.kind), static_cast<fb::VKind>(vk), flags);
    uint32_t id = static_cast<uint32_t>(local_classes.size() - 1);
    local_of[key] = id;
    local_stamp[key] = chunk_index + 1;
    return id;
  }

  void AddFunctionIR(const std::string& name) {
    if (functions_in_chunk.count(name)) return;
    auto it = functions.find(name);
    if (it == functions.end()) return;
    functions_in_chunk.insert(name);
    uint32_t id = Intern(name);
    const FunctionInfo& f = it->second;
    flatbuffers::Offset<flatbuffers::String> ir;
    if (f.ir) ir = fbb.CreateString(*f.ir);
    uint32_t blocks = 0;
    flatbuffers::Offset<flatbuffers::Vector<const fb::Branch*>> branches;
    if (f.flow) {
      blocks = f.flow->blocks;
      std::vector<fb::Branch> v;
      v.reserve(f.flow->branches.size());
      for (const BranchFact& b : f.flow->branches) {
        v.emplace_back(b.block, b.pos, b.target, b.conditional ? b.condition : 0,
                       internal::EncodeBranchFlags(b));
      }
      branches = fbb.CreateVectorOfStructs(v);
    }
    function_irs.push_back(fb::CreateFunctionIR(fbb, id, ir, blocks, branches));
  }

  Status Flush(bool last, NodeId total) {
    auto producer = fb::CreateProducer(fbb, fbb.CreateString(opts.producer_name),
                                       fbb.CreateString(opts.producer_version));
    std::vector<fb::Meta> tmeta;
    if (last) {
      for (const auto& [k, v] : trace_meta) tmeta.emplace_back(Encode(v), 0, Intern(k));
    }
    internal::ChunkParts parts;
    parts.format_major = kFormatMajor;
    parts.format_minor = kFormatMinor;
    parts.producer = producer;
    parts.index = chunk_index;
    parts.base = base;
    parts.base_depth = base_depth;
    parts.nodes = &nodes;
    parts.refs = &refs;
    parts.classes = &local_classes;
    parts.operands = &operands;
    parts.literals = &literals;
    parts.meta = &meta;
    parts.functions = &function_irs;
    parts.last = last;
    parts.trace_meta = &tmeta;
    parts.total_nodes = total;
    internal::FinishChunk(fbb, enc, parts);
    Status st;
    if (fbb.GetSize() > kMaxChunkBytes) {
      st = Unsupported("chunk " + std::to_string(chunk_index) + " would need " +
                       std::to_string(fbb.GetSize()) + " bytes, more than a chunk may hold");
    } else {
      out->Write(fbb.GetBufferPointer(), fbb.GetSize());
    }
    fbb.Clear();
    nodes.clear();
    refs.clear();
    local_classes.clear();
    operands.clear();
    literals.clear();
    enc.Clear();
    meta.clear();
    function_irs.clear();
    functions_in_chunk.clear();
    ++chunk_index;
    return st;
  }
};

TraceWriter::TraceWriter(Output* out, WriterOptions options) : impl_(new Impl) {
  impl_->out = out;
  impl_->opts = std::move(options);
  if (impl_->opts.chunk_nodes == 0) impl_->opts.chunk_nodes = 1;
  if (impl_->opts.chunk_bytes > kMaxChunkBytes / 2) impl_->opts.chunk_bytes = kMaxChunkBytes / 2;
  impl_->nodes.reserve(impl_->opts.chunk_nodes);
}

TraceWriter::~TraceWriter() = default;

ClassId TraceWriter::DefineClass(ClassSpec spec) {
  GlobalClass g;
  for (const OperandSpec& o : spec.operands) g.n_refs += o.is_ref ? 1 : 0;
  if (spec.kind == NodeKind::kReturn || spec.kind == NodeKind::kError) ++g.n_refs;
  g.spec = std::move(spec);
  impl_->classes.push_back(std::move(g));
  impl_->local_of.resize(impl_->classes.size() * kNumVKinds, kNoLocal);
  impl_->local_stamp.resize(impl_->classes.size() * kNumVKinds, 0);
  return static_cast<ClassId>(impl_->classes.size() - 1);
}

void TraceWriter::RegisterFunction(std::string name, std::string ir_text) {
  impl_->functions[std::move(name)].ir = std::move(ir_text);
}

void TraceWriter::RegisterControlFlow(std::string name, ControlFlow facts) {
  if (!status_.ok()) return;
  std::string bad = CheckControlFlow(facts);
  if (!bad.empty()) {
    status_ = Internal("control flow of '" + DisplayString(name) + "': " + bad);
    return;
  }
  impl_->functions[std::move(name)].flow = std::move(facts);
}

namespace {

// Readers refuse tensors beyond kMaxTensorDims or kMaxTensorElements and
// tuples that decode to more than kMaxDecodedSize (chunk.cc's VerifyChunk),
// so the writer refuses them too instead of writing an unreadable trace.
// Tuples in memory share items, so the walk stops as soon as the count
// passes the cap.
Status CheckWritable(const Value& root) {
  std::vector<const Value*> stack = {&root};
  uint64_t decoded = 0;
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (v->kind() == VKind::kTuple) {
      for (const Value& item : v->tuple()) stack.push_back(&item);
      if (v->tuple().empty()) ++decoded;
    } else if (v->kind() == VKind::kTensor) {
      Result<int64_t> n = CheckedNumel(v->tensor().shape);
      if (!n.ok()) return n.error().Prefixed("a tensor");
      decoded += std::max<uint64_t>(static_cast<uint64_t>(*n), 1);
    } else {
      ++decoded;
    }
    if (root.kind() == VKind::kTuple && decoded > internal::kMaxDecodedSize) {
      return DataError("a tuple that decodes to more than " +
                       std::to_string(internal::kMaxDecodedSize) + " values and tensor elements");
    }
  }
  return Status::Ok();
}

}  // namespace

NodeId TraceWriter::Append(ClassId cls, const Value& value, std::span<const NodeId> refs) {
  Impl& w = *impl_;
  NodeId id = next_id_;
  if (!status_.ok()) return id;
  if (cls >= w.classes.size()) {
    status_ = Internal("append: unknown node class " + std::to_string(cls));
    return id;
  }
  const GlobalClass& g = w.classes[cls];
  NodeKind kind = g.spec.kind;
  bool closes = kind == NodeKind::kReturn || kind == NodeKind::kError;
  size_t expected = g.n_refs - (closes ? 1 : 0);
  if (refs.size() != expected) {
    status_ =
        Internal("append: node " + std::to_string(id) + " has " + std::to_string(refs.size()) +
                 " references, its class needs " + std::to_string(expected));
    return id;
  }
  if (closes && open_calls_.empty()) {
    status_ = Internal("append: node " + std::to_string(id) + " closes a call but none is open");
    return id;
  }
  if (Status s = CheckWritable(value); !s.ok()) {
    status_ = s.Prefixed("node " + std::to_string(id));
    return id;
  }
  uint64_t extra = 0;
  if (value.kind() == VKind::kTensor) extra = value.tensor().data.size();
  if (!w.nodes.empty() &&
      (w.nodes.size() >= w.opts.chunk_nodes || w.EstimatedBytes() + extra > w.opts.chunk_bytes)) {
    status_ = w.Flush(false, 0);
    w.base = id;
    w.base_depth = static_cast<uint32_t>(open_calls_.size());
    if (!status_.ok()) return id;
  }
  if (extra + 4096 > kMaxChunkBytes) {
    status_ = Unsupported("node " + std::to_string(id) + ": a tensor of " + std::to_string(extra) +
                          " bytes is larger than a chunk may hold");
    return id;
  }
  uint32_t local = w.LocalClass(cls, value.kind());
  uint32_t first_ref = static_cast<uint32_t>(w.refs.size());
  for (NodeId r : refs) {
    if (r >= id || id - r > 0xFFFFFFFFull) {
      status_ = Internal("append: node " + std::to_string(id) + " references node " +
                         std::to_string(r) + ", which is not an earlier node in range");
      return id;
    }
    w.refs.push_back(static_cast<uint32_t>(id - r));
  }
  if (closes) {
    NodeId marker = open_calls_.back();
    if (id - marker > 0xFFFFFFFFull) {
      status_ = Unsupported("node " + std::to_string(id) + ": call body longer than 2^32 nodes");
      return id;
    }
    w.refs.push_back(static_cast<uint32_t>(id - marker));
    open_calls_.pop_back();
  } else if (kind == NodeKind::kCall) {
    open_calls_.push_back(id);
    if (!g.spec.op.empty()) w.AddFunctionIR(g.spec.op);
  }
  w.nodes.emplace_back(w.Encode(value).bits(), local, first_ref);
  ++next_id_;
  return id;
}

void TraceWriter::AddMeta(std::string_view key, const Value& value) {
  Impl& w = *impl_;
  if (!status_.ok()) return;
  if (w.nodes.empty()) {
    status_ = Internal("metadata added before any node of the chunk");
    return;
  }
  if (Status s = CheckWritable(value); !s.ok()) {
    status_ = s.Prefixed("metadata of node " + std::to_string(next_id_ - 1));
    return;
  }
  w.meta.emplace_back(w.Encode(value), static_cast<uint32_t>(w.nodes.size() - 1), w.Intern(key));
}

void TraceWriter::AddTraceMeta(std::string_view key, const Value& value) {
  impl_->trace_meta.emplace_back(std::string(key), value);
}

Status TraceWriter::Finish() {
  if (!status_.ok()) return status_;
  if (!open_calls_.empty()) {
    status_ = Internal("finish: " + std::to_string(open_calls_.size()) + " calls are still open");
    return status_;
  }
  status_ = impl_->Flush(true, next_id_);
  if (!status_.ok()) return status_;
  // Write errors surface in Output::Commit(), which names the output.
  return status_;
}

}  // namespace irt
