// Streaming chunk writer. Staging vectors hold the current chunk's columns;
// strings, tensors and tuples go straight into the chunk's FlatBufferBuilder;
// at 2^16 nodes (or the byte budget) the chunk is finished size-prefixed,
// written out, and everything is cleared. Nothing is ever revisited.
#include "irt/writer.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "io/chunk.h"
#include "io/chunk_encoder.h"
#include "io/control_flow.h"
#include "io/grow_buffer.h"
#include "io/packed.h"
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

  // The open chunk's node and reference columns (TraceWriter::nodes_ and
  // refs_ point into them). From 1 MiB on they are huge-page blocks
  // (GrowBuffer): a chunk of 65,536 nodes is first touched with one page
  // fault instead of 256, each of which costs microseconds on a virtual
  // machine.
  struct Staging {
    internal::GrowBuffer<StagedNode> nodes;
    internal::GrowBuffer<uint32_t> refs;
  };
  // What one chunk is built from: its tables as the recording adds to
  // them, then (handed over) its node and reference columns and the parts
  // FinishChunk takes. Two of them take turns with write_behind.
  struct ChunkState {
    flatbuffers::FlatBufferBuilder fbb{1 << 20, internal::ChunkBuilderAllocator()};
    std::vector<fb::NodeClass> local_classes;
    std::vector<uint32_t> operands;
    std::vector<fb::Value> literals;
    internal::ValueEncoder enc{&fbb};  // strings, tensors, tuples
    std::vector<fb::Meta> meta;
    std::vector<flatbuffers::Offset<fb::FunctionIR>> function_irs;
    std::vector<fb::Meta> trace_meta;
    internal::ChunkParts parts;
    // The columns' buffers while the chunk is handed over (a spare set
    // otherwise).
    Staging staging;

    void Clear() {
      fbb.Clear();
      local_classes.clear();
      operands.clear();
      literals.clear();
      enc.Clear();
      meta.clear();
      function_irs.clear();
      trace_meta.clear();
    }
  };
  std::unique_ptr<ChunkState> cur = std::make_unique<ChunkState>();
  Staging staging;  // the writer's

  // Current chunk.
  uint64_t chunk_index = 0;
  NodeId base = 0;
  uint32_t base_depth = 0;
  std::unordered_set<std::string> functions_in_chunk;
  std::vector<std::string> chunk_functions;  // in the order of their first call
  // (global class * kNumVKinds + vkind) -> local class id, valid when stamp == chunk_index + 1.
  std::vector<uint32_t> local_of;
  std::vector<uint64_t> local_stamp;

  // Per (class, value kind) of String or Function: the value its last node
  // in the chunk (stamp) had, and that value's encoding there, so that a
  // node repeating it (a function's %1, passed at every call) is appended
  // without encoding it again.
  struct LastString {
    uint64_t stamp = 0;
    Value value;
    uint64_t bits = 0;
    uint32_t local = 0;
  };
  std::vector<LastString> last_string;

  // Trace-level metadata, kept as values until the final chunk.
  std::vector<std::pair<std::string, Value>> trace_meta;

  // Writing behind (WriterOptions::write_behind): a full chunk is handed to
  // a second thread, which finishes (packs) and writes it while the next
  // one is recorded; at most one chunk is in flight.
  std::thread worker;
  std::mutex mu;
  std::condition_variable cv;
  std::unique_ptr<ChunkState> in_flight;  // handed over, not yet taken
  std::unique_ptr<ChunkState> spare;      // written, for reuse
  bool busy = false;                      // a chunk is handed over or being written
  bool quit = false;
  Status behind_status;  // the first error met behind

  ~Impl() {
    if (!worker.joinable()) return;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !busy; });
      quit = true;
    }
    cv.notify_all();
    worker.join();
  }

  uint32_t Intern(std::string_view s) { return cur->enc.Intern(s); }
  fb::Value Encode(const Value& v) { return cur->enc.Encode(v); }

  uint64_t EstimatedBytes(uint32_t n_nodes, uint32_t n_refs) const {
    const ChunkState& c = *cur;
    return c.fbb.GetSize() + n_nodes * sizeof(fb::Node) + n_refs * uint64_t{4} +
           c.local_classes.size() * sizeof(fb::NodeClass) + c.operands.size() * 4 +
           c.literals.size() * sizeof(fb::Value) + c.meta.size() * sizeof(fb::Meta) + 1024;
  }

  uint32_t LocalClass(ClassId cls, VKind vk) {
    size_t key = static_cast<size_t>(cls) * kNumVKinds + static_cast<size_t>(vk);
    if (local_stamp[key] == chunk_index + 1) return local_of[key];
    ChunkState& c = *cur;
    const ClassSpec& s = classes[cls].spec;
    uint32_t first_operand = static_cast<uint32_t>(c.operands.size());
    for (const OperandSpec& o : s.operands) {
      if (o.is_ref) {
        c.operands.push_back(0);
      } else {
        c.literals.push_back(Encode(o.literal));
        c.operands.push_back(static_cast<uint32_t>(c.literals.size()));
      }
    }
    uint32_t op = s.op.empty() ? ~0u : Intern(s.op);
    uint8_t flags = (s.has_condition ? 1 : 0) | (s.condition_taken_when ? 2 : 0);
    c.local_classes.emplace_back(op, s.block, s.pos, s.aux, first_operand, s.line, s.col,
                                 static_cast<uint16_t>(s.operands.size()),
                                 static_cast<fb::Kind>(s.kind), static_cast<fb::VKind>(vk), flags);
    uint32_t id = static_cast<uint32_t>(c.local_classes.size() - 1);
    local_of[key] = id;
    local_stamp[key] = chunk_index + 1;
    return id;
  }

  // Notes that the chunk opens a call to `name`; its entry is built when
  // the chunk is finished, with the facts registered by then (a recording
  // front end learns a function's branches as they run).
  void AddFunctionIR(const std::string& name) {
    if (functions_in_chunk.count(name)) return;
    if (functions.find(name) == functions.end()) return;
    functions_in_chunk.insert(name);
    chunk_functions.push_back(name);
  }

  void BuildFunctionIRs() {
    flatbuffers::FlatBufferBuilder& fbb = cur->fbb;
    for (const std::string& name : chunk_functions) {
      const FunctionInfo& f = functions.find(name)->second;
      uint32_t id = Intern(name);
      flatbuffers::Offset<flatbuffers::String> ir;
      if (f.ir) ir = fbb.CreateString(*f.ir);
      uint32_t blocks = 0;
      flatbuffers::Offset<flatbuffers::Vector<const fb::Branch*>> branches;
      if (f.flow) {
        blocks = f.flow->blocks;
        branches = internal::EncodeBranches(fbb, *f.flow);
      }
      cur->function_irs.push_back(fb::CreateFunctionIR(fbb, id, ir, blocks, branches));
    }
  }

  // Finishes a handed-over chunk into its builder and writes it (on either
  // thread).
  Status WriteChunk(ChunkState& c) {
    internal::FinishChunk(c.fbb, c.enc, c.parts);
    if (c.fbb.GetSize() > kMaxChunkBytes) {
      return Unsupported("chunk " + std::to_string(c.parts.index) + " would need " +
                         std::to_string(c.fbb.GetSize()) + " bytes, more than a chunk may hold");
    }
    out->Write(c.fbb.GetBufferPointer(), c.fbb.GetSize());
    if (opts.progress != nullptr) opts.progress->Add(c.parts.nodes.size(), c.fbb.GetSize());
    return Status::Ok();
  }

  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return in_flight != nullptr || quit; });
      if (in_flight == nullptr) return;
      std::unique_ptr<ChunkState> c = std::move(in_flight);
      lock.unlock();
      Status st;
      try {
        st = WriteChunk(*c);
      } catch (const std::bad_alloc&) {
        st = IoError("out of memory finishing chunk " + std::to_string(c->parts.index));
      }
      c->Clear();
      lock.lock();
      if (behind_status.ok() && !st.ok()) behind_status = std::move(st);
      spare = std::move(c);
      busy = false;
      cv.notify_all();
    }
  }

  // Returns once no chunk is in flight, and the first error met behind. A
  // chunk the second thread has not started on (on a loaded machine it may
  // not get a core for a while) is taken back and written here; one it is
  // writing is waited for.
  Status WaitBehind() {
    if (!worker.joinable()) return Status::Ok();
    std::unique_ptr<ChunkState> taken;
    {
      std::unique_lock<std::mutex> lock(mu);
      if (in_flight != nullptr) {
        taken = std::move(in_flight);
      } else {
        cv.wait(lock, [&] { return !busy; });
        return behind_status;
      }
    }
    Status st = WriteChunk(*taken);
    taken->Clear();
    std::lock_guard<std::mutex> lock(mu);
    if (behind_status.ok() && !st.ok()) behind_status = std::move(st);
    spare = std::move(taken);
    busy = false;
    return behind_status;
  }

  // Ends the open chunk, whose columns are the writer's buffers: writes it
  // here, or hands it (with the buffers, swapped for spare ones) to the
  // second thread.
  Status Flush(bool last, NodeId total, TraceWriter& tw) {
    Status st = WaitBehind();
    if (!st.ok()) return st;
    ChunkState& c = *cur;
    BuildFunctionIRs();
    auto producer = fb::CreateProducer(c.fbb, c.fbb.CreateString(opts.producer_name),
                                       c.fbb.CreateString(opts.producer_version));
    if (last) {
      for (const auto& [k, v] : trace_meta) c.trace_meta.emplace_back(Encode(v), 0, Intern(k));
    }
    internal::ChunkParts& parts = c.parts;
    parts = internal::ChunkParts{};
    parts.format_major = opts.format_major;
    parts.format_minor = opts.format_major == 1 ? kFormat1Minor : kFormatMinor;
    parts.producer = producer;
    parts.index = chunk_index;
    parts.base = base;
    parts.base_depth = base_depth;
    parts.classes = &c.local_classes;
    parts.operands = &c.operands;
    parts.literals = &c.literals;
    parts.meta = &c.meta;
    parts.functions = &c.function_irs;
    parts.last = last;
    parts.trace_meta = &c.trace_meta;
    parts.total_nodes = total;
    functions_in_chunk.clear();
    chunk_functions.clear();
    ++chunk_index;
    const uint32_t n_nodes = tw.n_nodes_, n_refs = tw.n_refs_;
    bool behind = opts.write_behind && !last && opts.progress == nullptr &&
                  (worker.joinable() || std::thread::hardware_concurrency() >= 2);
    if (!behind) {
      parts.nodes = {reinterpret_cast<const fb::Node*>(tw.nodes_), n_nodes};
      parts.refs = {tw.refs_, n_refs};
      st = WriteChunk(c);
      c.Clear();
      return st;
    }
    // The chunk takes the writer's buffers; the writer takes the spare
    // state's (new ones at first).
    std::unique_ptr<ChunkState> next;
    {
      std::lock_guard<std::mutex> lock(mu);
      next = std::move(spare);
    }
    if (next == nullptr) next = std::make_unique<ChunkState>();
    if (next->staging.nodes.data() == nullptr) {
      next->staging.nodes.Reserve(opts.chunk_nodes);
      next->staging.refs.Reserve(staging.refs.capacity());
    }
    // The columns' streaming stores reach memory before the other thread
    // reads them (TraceWriter::StreamNode).
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_ia32_sfence();
#endif
    std::swap(c.staging, staging);
    std::swap(next->staging, staging);
    tw.TakeStaging();
    parts.nodes = {reinterpret_cast<const fb::Node*>(c.staging.nodes.data()), n_nodes};
    parts.refs = {c.staging.refs.data(), n_refs};
    if (!worker.joinable()) worker = std::thread([this] { WorkerLoop(); });
    {
      std::lock_guard<std::mutex> lock(mu);
      in_flight = std::move(cur);
      busy = true;
    }
    cur = std::move(next);
    cv.notify_all();
    return Status::Ok();
  }
};

TraceWriter::TraceWriter(Output* out, WriterOptions options) : impl_(new Impl) {
  impl_->out = out;
  impl_->opts = std::move(options);
  if (impl_->opts.chunk_nodes == 0) impl_->opts.chunk_nodes = 1;
  if (impl_->opts.format_major != 1) impl_->opts.format_major = kFormatMajor;
  if (impl_->opts.format_major >= 2) {
    // A format-2 chunk holds at most kMaxPackedNodes nodes and
    // kMaxPackedRefs references (readers decode it into memory).
    impl_->opts.chunk_nodes = std::min(impl_->opts.chunk_nodes, internal::kMaxPackedNodes);
  }
  if (impl_->opts.chunk_bytes > kMaxChunkBytes / 2) impl_->opts.chunk_bytes = kMaxChunkBytes / 2;
  impl_->staging.nodes.Reserve(impl_->opts.chunk_nodes);
  // 1 MiB: a block, which holds the references of most full chunks.
  impl_->staging.refs.Reserve(size_t{1} << 18);
  TakeStaging();
  UpdateFastLimit();
}

static_assert(sizeof(fb::Node) == 16 && alignof(fb::Node) <= 8, "StagedNode mirrors fb::Node");

void TraceWriter::UpdateFastLimit() {
  if (!status_.ok()) {
    fast_limit_ = 0;
    return;
  }
  const Impl& w = *impl_;
  uint64_t limit = w.opts.chunk_nodes;
  // A fast node takes at most kFastMaxRefs + 1 references (a Return's
  // operands and the call it closes).
  limit = std::min<uint64_t>(limit, n_nodes_ + (refs_cap_ - n_refs_) / (kFastMaxRefs + 1));
  // Every chunk keeps to format 2's bound on references (Admit flushes).
  uint64_t refs_room = internal::kMaxPackedRefs > n_refs_ ? internal::kMaxPackedRefs - n_refs_ : 0;
  limit = std::min<uint64_t>(limit, n_nodes_ + refs_room / (kFastMaxRefs + 1));
  uint64_t used = w.EstimatedBytes(n_nodes_, n_refs_);
  uint64_t room = used < w.opts.chunk_bytes ? w.opts.chunk_bytes - used : 0;
  limit = std::min<uint64_t>(limit, n_nodes_ + room / (sizeof(fb::Node) + 4 * (kFastMaxRefs + 1)));
  fast_limit_ = static_cast<uint32_t>(limit);
}

TraceWriter::~TraceWriter() = default;

void TraceWriter::TakeStaging() {
  const Impl::Staging& st = impl_->staging;
  nodes_ = st.nodes.data();
  refs_ = st.refs.data();
  refs_cap_ = static_cast<uint32_t>(std::min<size_t>(st.refs.capacity(), UINT32_MAX));
}

ClassId TraceWriter::DefineClass(ClassSpec spec) {
  GlobalClass g;
  for (const OperandSpec& o : spec.operands) g.n_refs += o.is_ref ? 1 : 0;
  if (spec.kind == NodeKind::kReturn || spec.kind == NodeKind::kError) ++g.n_refs;
  g.spec = std::move(spec);
  impl_->classes.push_back(std::move(g));
  impl_->local_of.resize(impl_->classes.size() * kNumVKinds, kNoLocal);
  impl_->local_stamp.resize(impl_->classes.size() * kNumVKinds, 0);
  fast_.resize(impl_->classes.size() * kNumVKinds);
  return static_cast<ClassId>(impl_->classes.size() - 1);
}

void TraceWriter::RegisterFunction(std::string name, std::string ir_text) {
  impl_->functions[std::move(name)].ir = std::move(ir_text);
}

void TraceWriter::RegisterControlFlow(std::string name, ControlFlow facts) {
  if (!status_.ok()) return;
  std::string bad = CheckControlFlow(facts);
  if (!bad.empty()) {
    Fail(Internal("control flow of '" + DisplayString(name) + "': " + bad));
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
  if (root.kind() != VKind::kTuple && root.kind() != VKind::kTensor) return Status::Ok();
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

bool TraceWriter::Admit(ClassId cls, const NodeId* refs, size_t n_refs, uint64_t extra) {
  Impl& w = *impl_;
  NodeId id = next_id_;
  if (!status_.ok()) return false;
  if (cls >= w.classes.size()) {
    Fail(Internal("append: unknown node class " + std::to_string(cls)));
    return false;
  }
  const GlobalClass& g = w.classes[cls];
  NodeKind kind = g.spec.kind;
  bool closes = kind == NodeKind::kReturn || kind == NodeKind::kError;
  size_t expected = g.n_refs - (closes ? 1 : 0);
  if (n_refs != expected) {
    Fail(Internal("append: node " + std::to_string(id) + " has " + std::to_string(n_refs) +
                  " references, its class needs " + std::to_string(expected)));
    return false;
  }
  if (closes && open_calls_.empty()) {
    Fail(Internal("append: node " + std::to_string(id) + " closes a call but none is open"));
    return false;
  }
  if (n_nodes_ > 0 && (n_nodes_ >= w.opts.chunk_nodes ||
                       w.EstimatedBytes(n_nodes_, n_refs_) + extra > w.opts.chunk_bytes ||
                       uint64_t{n_refs_} + n_refs + 1 > internal::kMaxPackedRefs)) {
    Status st = w.Flush(false, 0, *this);
    n_nodes_ = 0;
    n_refs_ = 0;
    ++chunk_stamp_;
    w.base = id;
    w.base_depth = static_cast<uint32_t>(open_calls_.size());
    if (!st.ok()) {
      Fail(std::move(st));
      return false;
    }
  }
  if (extra + 4096 > kMaxChunkBytes) {
    Fail(Unsupported("node " + std::to_string(id) + ": a tensor of " + std::to_string(extra) +
                     " bytes is larger than a chunk may hold"));
    return false;
  }
  for (size_t i = 0; i < n_refs; ++i) {
    NodeId r = refs[i];
    if (r >= id || id - r > 0xFFFFFFFFull) {
      Fail(Internal("append: node " + std::to_string(id) + " references node " + std::to_string(r) +
                    ", which is not an earlier node in range"));
      return false;
    }
  }
  if (closes && id - open_calls_.back() > 0xFFFFFFFFull) {
    Fail(Unsupported("node " + std::to_string(id) + ": call body longer than 2^32 nodes"));
    return false;
  }
  return true;
}

NodeId TraceWriter::Stage(ClassId cls, VKind vk, const Value* value, uint64_t bits,
                          const NodeId* refs, size_t n_refs) {
  Impl& w = *impl_;
  NodeId id = next_id_;
  const GlobalClass& g = w.classes[cls];
  NodeKind kind = g.spec.kind;
  bool closes = kind == NodeKind::kReturn || kind == NodeKind::kError;
  uint32_t local = w.LocalClass(cls, vk);
  if (value != nullptr) bits = w.Encode(*value).bits();
  if (value != nullptr && (vk == VKind::kString || vk == VKind::kFunction) && !closes &&
      kind != NodeKind::kCall && g.n_refs <= kFastMaxRefs) {
    size_t key = static_cast<size_t>(cls) * kNumVKinds + static_cast<size_t>(vk);
    if (w.last_string.size() < fast_.size()) w.last_string.resize(fast_.size());
    w.last_string[key] = {chunk_stamp_, *value, bits, local};
  }
  if (refs_cap_ - n_refs_ < n_refs + 1) {
    size_t cap = refs_cap_;
    while (cap - n_refs_ < n_refs + 1) cap *= 2;
    internal::GrowBuffer<uint32_t> grown;
    std::copy(refs_, refs_ + n_refs_, grown.Reserve(cap));
    w.staging.refs = std::move(grown);
    TakeStaging();
  }
  uint32_t first_ref = n_refs_;
  for (size_t i = 0; i < n_refs; ++i)
    StreamRef(refs_ + n_refs_++, static_cast<uint32_t>(id - refs[i]));
  if (closes) {
    StreamRef(refs_ + n_refs_++, static_cast<uint32_t>(id - open_calls_.back()));
    open_calls_.pop_back();
  } else if (kind == NodeKind::kCall) {
    open_calls_.push_back(id);
    if (!g.spec.op.empty()) w.AddFunctionIR(g.spec.op);  // once per chunk: the fast path skips it
  }
  // The fast path's references: the operands (up to kFastMaxRefs), plus the
  // one to the call a Return or Error closes.
  uint32_t operand_refs = g.n_refs - (closes ? 1 : 0);
  if (operand_refs <= kFastMaxRefs && vk != VKind::kString && vk != VKind::kFunction &&
      vk != VKind::kTensor && vk != VKind::kTuple) {
    FastClass& fc = fast_[static_cast<size_t>(cls) * kNumVKinds + static_cast<size_t>(vk)];
    fc.stamp = chunk_stamp_;
    fc.local = local;
    fc.n_refs = operand_refs | (closes ? kCloses : kind == NodeKind::kCall ? kOpens : 0);
  }
  StreamNode(nodes_ + n_nodes_++, bits, local, first_ref);
  ++next_id_;
  UpdateFastLimit();
  return id;
}

NodeId TraceWriter::AppendRepeatedString(ClassId cls, const Value& value,
                                         std::span<const NodeId> refs) {
  // Stage's work for a node of a class whose last node in this chunk had
  // the same string: Admit's checks hold as for AppendScalar's fast path
  // (the class has no call link, and the chunk has room: fast_limit_).
  const Impl& w = *impl_;
  NodeId id = next_id_;
  size_t key = static_cast<size_t>(cls) * kNumVKinds + static_cast<size_t>(value.kind());
  if (key >= w.last_string.size() || n_nodes_ >= fast_limit_ || refs.size() > kFastMaxRefs)
    return kNoNode;
  const Impl::LastString& last = w.last_string[key];
  if (last.stamp != chunk_stamp_ || w.classes[cls].n_refs != refs.size() ||
      last.value.kind() != value.kind() || last.value.str() != value.str()) {
    return kNoNode;
  }
  if (!StageInline(last.local, last.bits, refs.data(), static_cast<uint32_t>(refs.size())))
    return kNoNode;
  return id;
}

NodeId TraceWriter::Append(ClassId cls, const Value& value, std::span<const NodeId> refs) {
  if (value.is_scalar() && refs.size() <= kFastMaxRefs && status_.ok()) {
    // A scalar (None and Nothing too) is its bits (ValueEncoder::Encode):
    // the inline path, once its class is in the chunk, with the same checks
    // otherwise. The rest is out of line, so that this path saves no
    // registers (16 instructions of irt-trace's 315 per node on W1).
    return AppendScalar(cls, value.kind(), value.bits(), refs.data(),
                        static_cast<uint32_t>(refs.size()));
  }
  return AppendValue(cls, value, refs);
}

NodeId TraceWriter::AppendValue(ClassId cls, const Value& value, std::span<const NodeId> refs) {
  NodeId id = next_id_;
  if (!status_.ok()) return id;
  if (value.is_scalar() && refs.size() <= kFastMaxRefs) {
    return AppendScalar(cls, value.kind(), value.bits(), refs.data(),
                        static_cast<uint32_t>(refs.size()));
  }
  if (value.kind() == VKind::kString || value.kind() == VKind::kFunction) {
    if (NodeId done = AppendRepeatedString(cls, value, refs); done != kNoNode) return done;
  }
  if (Status s = CheckWritable(value); !s.ok()) {
    Fail(s.Prefixed("node " + std::to_string(id)));
    return id;
  }
  uint64_t extra = value.kind() == VKind::kTensor ? value.tensor().data.size() : 0;
  if (!Admit(cls, refs.data(), refs.size(), extra)) return id;
  return Stage(cls, value.kind(), &value, 0, refs.data(), refs.size());
}

NodeId TraceWriter::AppendScalarFlow(ClassId cls, VKind vk, uint64_t bits, const NodeId* refs,
                                     uint32_t n_refs) {
  // The inline path's conditions, for a class seen in this chunk that opens
  // or closes a call; anything else (and any check that fails) takes
  // Admit's path, which reports it.
  NodeId id = next_id_;
  size_t key = static_cast<size_t>(cls) * kNumVKinds + static_cast<size_t>(vk);
  if (key >= fast_.size() || n_nodes_ >= fast_limit_ || n_refs > kFastMaxRefs) return kNoNode;
  const FastClass& fc = fast_[key];
  if (fc.stamp != chunk_stamp_ || (fc.n_refs & ~(kOpens | kCloses)) != n_refs ||
      (fc.n_refs & (kOpens | kCloses)) == 0) {
    return kNoNode;
  }
  uint32_t end = n_refs_;
  for (uint32_t i = 0; i < n_refs; ++i) {
    NodeId d = id - refs[i] - 1;
    if (d >= 0xFFFFFFFFull) return kNoNode;
    StreamRef(refs_ + end++, static_cast<uint32_t>(d + 1));
  }
  if (fc.n_refs & kCloses) {
    if (open_calls_.empty() || id - open_calls_.back() > 0xFFFFFFFFull) return kNoNode;
    StreamRef(refs_ + end++, static_cast<uint32_t>(id - open_calls_.back()));
    open_calls_.pop_back();
  } else {
    open_calls_.push_back(id);
  }
  StreamNode(nodes_ + n_nodes_++, bits, fc.local, n_refs_);
  n_refs_ = end;
  next_id_ = id + 1;
  return id;
}

NodeId TraceWriter::AppendScalarChecked(ClassId cls, VKind vk, uint64_t bits, const NodeId* refs,
                                        uint32_t n_refs) {
  NodeId id = next_id_;
  if (!status_.ok()) return id;
  if (vk == VKind::kString || vk == VKind::kFunction || vk == VKind::kTensor ||
      vk == VKind::kTuple || static_cast<int>(vk) >= kNumVKinds) {
    Fail(Internal("append: node " + std::to_string(id) + ": value kind " +
                  std::to_string(static_cast<int>(vk)) + " is not a scalar"));
    return id;
  }
  if (vk == VKind::kBool && bits > 1) {
    Fail(Internal("append: node " + std::to_string(id) + ": a Bool's bits must be 0 or 1"));
    return id;
  }
  if (NodeId done = AppendScalarFlow(cls, vk, bits, refs, n_refs); done != kNoNode) return done;
  if (!Admit(cls, refs, n_refs, 0)) return id;
  return Stage(cls, vk, nullptr, bits, refs, n_refs);
}

void TraceWriter::AddMeta(std::string_view key, const Value& value) {
  Impl& w = *impl_;
  if (!status_.ok()) return;
  if (n_nodes_ == 0) {
    Fail(Internal("metadata added before any node of the chunk"));
    return;
  }
  if (Status s = CheckWritable(value); !s.ok()) {
    Fail(s.Prefixed("metadata of node " + std::to_string(next_id_ - 1)));
    return;
  }
  w.cur->meta.emplace_back(w.Encode(value), n_nodes_ - 1, w.Intern(key));
  UpdateFastLimit();
}

void TraceWriter::AddTraceMeta(std::string_view key, const Value& value) {
  impl_->trace_meta.emplace_back(std::string(key), value);
}

Status TraceWriter::Finish() {
  if (!status_.ok()) return status_;
  if (!open_calls_.empty()) {
    Fail(Internal("finish: " + std::to_string(open_calls_.size()) + " calls are still open"));
    return status_;
  }
  Status st = impl_->Flush(true, next_id_, *this);
  n_nodes_ = 0;
  n_refs_ = 0;
  ++chunk_stamp_;
  if (!st.ok()) Fail(std::move(st));
  fast_limit_ = 0;
  if (!status_.ok()) return status_;
  // Write errors surface in Output::Commit(), which names the output.
  return status_;
}

}  // namespace irt
