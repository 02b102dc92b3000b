// make_bad_traces: writes small trace files, one well-formed and many broken
// in one precise way each, for the error golden cases of irt-check and
// irt-print. The files are built directly with the FlatBuffers code
// generated from schema/irtrace.fbs (not with libtrace's writer), so the
// reader is tested against bytes it did not produce itself; the byte-level
// variants flip bytes of a finished, valid file.
//
//   make_bad_traces VARIANT FILE    write one variant to FILE
//   make_bad_traces --list          list the variants
//   make_bad_traces --set-ref IN NODE K VALUE OUT
//                                   copy the trace IN (uncompressed, written by
//                                   any producer) to OUT with reference K (1-based)
//                                   of global node NODE set to VALUE
//
// Every variant starts from the same trace of f(x) = sin(x) + x at x = 1.0,
// as IRTracker records it, in two chunks:
//
//   chunk 0 (base 0, depth 0): @0 call marker ⟨f⟩(⟨1.0⟩), @1 arg f, @2 arg x
//   chunk 1 (base 3, depth 1): @3 sin(@2), @4 +(@3, @2), @5 return @4
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "irtrace_generated.h"

namespace {

namespace fb = irt::fb;

using Bytes = std::vector<uint8_t>;

uint64_t F64Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

// Everything one chunk holds, as plain data that a variant may edit before
// it is encoded.
struct ChunkModel {
  uint16_t format_major = 1, format_minor = 0;
  std::string producer_name = "make_bad_traces", producer_version = "1";
  bool no_producer = false;  // leave the producer table out
  uint64_t index = 0, base = 0;
  uint32_t base_depth = 0;
  std::vector<fb::Node> nodes;
  std::vector<uint32_t> refs;
  std::vector<fb::NodeClass> classes;
  std::vector<uint32_t> operands;
  std::vector<fb::Value> literals;
  std::vector<std::string> strings;
  struct TensorModel {
    fb::DType dtype;
    std::vector<int64_t> shape;
    Bytes data;
  };
  std::vector<TensorModel> tensors;
  std::vector<std::vector<fb::Value>> tuples;
  std::vector<fb::Meta> meta;
  std::vector<std::pair<uint32_t, std::string>> functions;
  // Format 1.1 control-flow facts of functions[0] (written when fn_blocks or
  // fn_branches is nonzero).
  uint32_t fn_blocks = 0;
  std::vector<fb::Branch> fn_branches;
  bool last = false;
  uint64_t total_nodes = 0;
  // An extra scalar field with this id (a field a later minor version might
  // append), written when nonzero.
  int extra_field_id = 0;
};

fb::NodeClass Class(fb::Kind kind, uint32_t op, uint32_t block, uint32_t pos,
                    uint32_t first_operand, uint16_t n_operands, fb::VKind vkind) {
  return fb::NodeClass(op, block, pos, /*aux=*/0, first_operand, /*line=*/0, /*col=*/0, n_operands,
                       kind, vkind, /*flags=*/0);
}

constexpr uint32_t kNoOp = ~0u;

std::vector<ChunkModel> BaseTrace() {
  ChunkModel c0;
  c0.index = 0;
  c0.base = 0;
  c0.base_depth = 0;
  c0.strings = {"f"};
  c0.literals = {fb::Value(F64Bits(1.0), fb::VKind::F64)};
  c0.operands = {1};  // literals[0]
  c0.classes = {
      Class(fb::Kind::Call, 0, 0, 0, 0, 1, fb::VKind::None),
      Class(fb::Kind::Argument, kNoOp, 1, 1, 0, 0, fb::VKind::Function),
      Class(fb::Kind::Argument, kNoOp, 1, 2, 0, 0, fb::VKind::F64),
  };
  c0.nodes = {fb::Node(0, 0, 0), fb::Node(0, 1, 0), fb::Node(F64Bits(1.0), 2, 0)};
  c0.functions = {{0, "1: (%1, %2)\n  %3 = Main.sin(%2)\n  %4 = %3 + %2\n  return %4\n"}};

  ChunkModel c1;
  c1.index = 1;
  c1.base = 3;
  c1.base_depth = 1;
  c1.strings = {"sin", "+"};
  c1.operands = {0, 0};  // reference, reference
  c1.classes = {
      Class(fb::Kind::Primitive, 0, 1, 3, 0, 1, fb::VKind::F64),
      Class(fb::Kind::Primitive, 1, 1, 4, 0, 2, fb::VKind::F64),
      Class(fb::Kind::Return, kNoOp, 1, 1, 0, 1, fb::VKind::F64),
  };
  double s = 0.8414709848078965;  // sin(1.0)
  // Node 3 refs [1] -> node 2; node 4 refs [1, 2] -> nodes 3, 2; node 5
  // refs [1, 5] -> node 4 and the marker it closes, node 0.
  c1.refs = {1, 1, 2, 1, 5};
  c1.nodes = {fb::Node(F64Bits(s), 0, 0), fb::Node(F64Bits(s + 1.0), 1, 1),
              fb::Node(F64Bits(s + 1.0), 2, 3)};
  c1.last = true;
  c1.total_nodes = 6;
  return {c0, c1};
}

// m(A, B) = sum(matmul(A, B)) with A 2^31×0 and B 0×2^31, in one chunk: both
// tensors are empty, but their product would have 2^62 elements. The
// recorded results are 0.0, as no producer could have computed them.
std::vector<ChunkModel> HugeMatmulTrace() {
  ChunkModel c;
  c.strings = {"m", "matmul"};
  constexpr int64_t kBig = int64_t{1} << 31;
  c.tensors = {{fb::DType::F64, {kBig, 0}, {}}, {fb::DType::F64, {0, kBig}, {}}};
  c.operands = {0, 0};
  c.classes = {
      Class(fb::Kind::Call, 0, 0, 0, 0, 0, fb::VKind::None),
      Class(fb::Kind::Argument, kNoOp, 1, 1, 0, 0, fb::VKind::Function),
      Class(fb::Kind::Argument, kNoOp, 1, 2, 0, 0, fb::VKind::Tensor),
      Class(fb::Kind::Argument, kNoOp, 1, 3, 0, 0, fb::VKind::Tensor),
      Class(fb::Kind::Primitive, 1, 1, 4, 0, 2, fb::VKind::F64),
      Class(fb::Kind::Return, kNoOp, 1, 1, 0, 1, fb::VKind::F64),
  };
  // Node 4 refs [2, 1] -> nodes 2, 3; node 5 refs [1, 5] -> node 4 and the
  // root marker.
  c.refs = {2, 1, 1, 5};
  c.nodes = {fb::Node(0, 0, 0), fb::Node(0, 1, 0), fb::Node(0, 2, 0),
             fb::Node(1, 3, 0), fb::Node(0, 4, 0), fb::Node(0, 5, 2)};
  c.functions = {{0, "1: (%1, %2, %3)\n  %4 = Main.matmul(%2, %3)\n  return %4\n"}};
  c.last = true;
  c.total_nodes = 6;
  return {c};
}

Bytes Encode(const ChunkModel& m) {
  flatbuffers::FlatBufferBuilder fbb;
  auto producer = fb::CreateProducer(fbb, fbb.CreateString(m.producer_name),
                                     fbb.CreateString(m.producer_version));
  std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
  for (const std::string& s : m.strings) strings.push_back(fbb.CreateString(s));
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const auto& t : m.tensors) {
    auto shape = fbb.CreateVector(t.shape);
    fbb.ForceVectorAlignment(t.data.size(), 1, 8);
    auto data = fbb.CreateVector(t.data.data(), t.data.size());
    tensors.push_back(fb::CreateTensor(fbb, t.dtype, shape, data));
  }
  std::vector<flatbuffers::Offset<fb::Tuple>> tuples;
  for (const auto& items : m.tuples) {
    fbb.ForceVectorAlignment(items.size(), sizeof(fb::Value), 8);
    tuples.push_back(fb::CreateTuple(fbb, fbb.CreateVectorOfStructs(items)));
  }
  std::vector<flatbuffers::Offset<fb::FunctionIR>> functions;
  for (const auto& [name, ir] : m.functions) {
    auto text = fbb.CreateString(ir);
    flatbuffers::Offset<flatbuffers::Vector<const fb::Branch*>> branches;
    bool facts = functions.empty() && (m.fn_blocks != 0 || !m.fn_branches.empty());
    if (facts) branches = fbb.CreateVectorOfStructs(m.fn_branches);
    functions.push_back(fb::CreateFunctionIR(fbb, name, text, facts ? m.fn_blocks : 0, branches));
  }
  auto v_nodes = fbb.CreateVectorOfStructs(m.nodes);
  auto v_refs = fbb.CreateVector(m.refs);
  auto v_classes = fbb.CreateVectorOfStructs(m.classes);
  auto v_operands = fbb.CreateVector(m.operands);
  auto v_literals = fbb.CreateVectorOfStructs(m.literals);
  auto v_strings = fbb.CreateVector(strings);
  auto v_tensors = fbb.CreateVector(tensors);
  // Written only when there are tuples, so the other variants' bytes (and the
  // byte offsets in their expected messages) stay what they were.
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Tuple>>> v_tuples;
  if (!tuples.empty()) v_tuples = fbb.CreateVector(tuples);
  auto v_meta = fbb.CreateVectorOfStructs(m.meta);
  auto v_functions = fbb.CreateVector(functions);
  fb::ChunkBuilder cb(fbb);
  cb.add_format_major(m.format_major);
  cb.add_format_minor(m.format_minor);
  if (!m.no_producer) cb.add_producer(producer);
  cb.add_index(m.index);
  cb.add_base(m.base);
  cb.add_base_depth(m.base_depth);
  cb.add_nodes(v_nodes);
  cb.add_refs(v_refs);
  cb.add_classes(v_classes);
  cb.add_operands(v_operands);
  cb.add_literals(v_literals);
  cb.add_strings(v_strings);
  cb.add_tensors(v_tensors);
  if (!tuples.empty()) cb.add_tuples(v_tuples);
  cb.add_meta(v_meta);
  cb.add_functions(v_functions);
  if (m.last) {
    cb.add_last(true);
    cb.add_total_nodes(m.total_nodes);
  }
  if (m.extra_field_id > 0) {
    fbb.AddElement<uint32_t>(static_cast<flatbuffers::voffset_t>(4 + 2 * m.extra_field_id),
                             0xC0FFEE, 0);
  }
  fbb.FinishSizePrefixed(cb.Finish(), "IRTC");
  return Bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

struct Encoded {
  std::vector<Bytes> chunks;
  Bytes Join() const {
    Bytes out;
    for (const Bytes& c : chunks) out.insert(out.end(), c.begin(), c.end());
    return out;
  }
};

Encoded EncodeAll(const std::vector<ChunkModel>& models) {
  Encoded e;
  for (const ChunkModel& m : models) e.chunks.push_back(Encode(m));
  return e;
}

// Byte offsets, within an encoded chunk, of parts of its nodes and classes.
static_assert(sizeof(fb::Node) == 16 && sizeof(fb::NodeClass) == 32);
constexpr size_t kNodeCls = 8;
constexpr size_t kClassKind = 28;
constexpr size_t kClassVKind = 29;

size_t NodeOffset(const Bytes& chunk, uint32_t local) {
  const fb::Chunk* c = fb::GetSizePrefixedChunk(chunk.data());
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(c->nodes()->Get(local)) -
                             chunk.data());
}

size_t ClassOffset(const Bytes& chunk, uint32_t i) {
  const fb::Chunk* c = fb::GetSizePrefixedChunk(chunk.data());
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(c->classes()->Get(i)) - chunk.data());
}

size_t RefsOffset(const Bytes& chunk, uint32_t i) {
  const fb::Chunk* c = fb::GetSizePrefixedChunk(chunk.data());
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(c->refs()->Data()) + 4 * i -
                             chunk.data());
}

void StoreU32(Bytes& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }

// Offset of the length word of the Chunk's `strings` vector.
size_t StringsVectorOffset(const Bytes& chunk) {
  const fb::Chunk* c = fb::GetSizePrefixedChunk(chunk.data());
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(c->strings()) - chunk.data());
}

struct Variant {
  const char* name;
  const char* what;
  std::function<Bytes()> make;
};

std::vector<Variant> Variants() {
  auto edit = [](const std::function<void(std::vector<ChunkModel>&)>& f) {
    return [f]() {
      std::vector<ChunkModel> t = BaseTrace();
      f(t);
      return EncodeAll(t).Join();
    };
  };
  auto flip = [](const std::function<void(Encoded&)>& f) {
    return [f]() {
      Encoded e = EncodeAll(BaseTrace());
      f(e);
      return e.Join();
    };
  };
  // Format 1.1: f's control-flow facts are one block that ends in a return.
  auto edit11 = [](const std::function<void(ChunkModel&)>& f) {
    return [f]() {
      std::vector<ChunkModel> t = BaseTrace();
      for (ChunkModel& c : t) c.format_minor = 1;
      t[0].fn_blocks = 1;
      t[0].fn_branches = {fb::Branch(1, 1, 0, 0, 0)};
      f(t[0]);
      return EncodeAll(t).Join();
    };
  };
  return {
      {"valid", "the well-formed trace every variant starts from", edit([](auto&) {})},
      {"facts-valid", "format 1.1: f's control-flow facts say it is one block ending in a return",
       edit11([](ChunkModel&) {})},
      {"facts-missing", "format 1.1: f has IR text but no control-flow facts",
       edit11([](ChunkModel& c) {
         c.fn_blocks = 0;
         c.fn_branches.clear();
       })},
      {"facts-block-range", "format 1.1: f's facts put a branch in block 2 of 1",
       edit11([](ChunkModel& c) { c.fn_branches = {fb::Branch(2, 1, 0, 0, 0)}; })},
      {"facts-position", "format 1.1: block 1 of f has branch positions 1 and 3",
       edit11([](ChunkModel& c) {
         c.fn_blocks = 2;
         c.fn_branches = {fb::Branch(1, 1, 2, 3, 1), fb::Branch(1, 3, 0, 0, 0)};
       })},
      {"facts-unsorted", "format 1.1: f's facts list block 2 before block 1",
       edit11([](ChunkModel& c) {
         c.fn_blocks = 2;
         c.fn_branches = {fb::Branch(2, 1, 0, 0, 0), fb::Branch(1, 1, 2, 0, 0)};
       })},
      {"facts-target", "format 1.1: a branch of f jumps to block 5 of 2", edit11([](ChunkModel& c) {
         c.fn_blocks = 2;
         c.fn_branches = {fb::Branch(1, 1, 5, 0, 0), fb::Branch(2, 1, 0, 0, 0)};
       })},
      {"facts-flags", "format 1.1: a branch of f has flags 4",
       edit11([](ChunkModel& c) { c.fn_branches = {fb::Branch(1, 1, 0, 0, 4)}; })},
      {"facts-return-condition", "format 1.1: f's return has a condition",
       edit11([](ChunkModel& c) { c.fn_branches = {fb::Branch(1, 1, 0, 3, 1)}; })},
      {"facts-condition-unconditional", "format 1.1: an unconditional branch of f names %3",
       edit11([](ChunkModel& c) {
         c.fn_blocks = 2;
         c.fn_branches = {fb::Branch(1, 1, 2, 3, 0), fb::Branch(2, 1, 0, 0, 0)};
       })},
      {"facts-no-blocks", "format 1.1: f's facts have a branch and 0 blocks",
       edit11([](ChunkModel& c) { c.fn_blocks = 0; })},
      {"facts-many-blocks", "format 1.1: f's facts claim 2^32 - 1 blocks",
       edit11([](ChunkModel& c) { c.fn_blocks = ~0u; })},
      {"empty", "zero bytes", []() { return Bytes(); }},
      {"truncated", "the file cut in the middle of its last chunk",
       flip([](Encoded& e) { e.chunks[1].resize(e.chunks[1].size() / 2); })},
      {"stray-bytes", "two bytes of a third chunk's size prefix after the first chunk",
       flip([](Encoded& e) { e.chunks[1].resize(2); })},
      {"no-final-chunk", "the first chunk only, as a writer that died leaves it",
       flip([](Encoded& e) { e.chunks.pop_back(); })},
      {"trailing-bytes", "eight zero bytes after the final chunk",
       flip([](Encoded& e) { e.chunks.push_back(Bytes(8, 0)); })},
      {"newer-major", "format version 3.0 (a newer major version) in every chunk",
       edit([](auto& t) {
         for (ChunkModel& c : t) c.format_major = 3;
       })},
      {"newer-minor", "format version 1.7 with a field this reader does not know (id 40)",
       edit([](auto& t) {
         for (ChunkModel& c : t) {
           c.format_minor = 7;
           c.extra_field_id = 40;
         }
       })},
      {"format-zero", "format version 0.0", edit([](auto& t) {
         for (ChunkModel& c : t) c.format_major = 0;
       })},
      {"bad-identifier", "the file identifier of chunk 1 overwritten with \"IRTX\"",
       flip([](Encoded& e) { e.chunks[1][4 + 4 + 3] = 'X'; })},
      {"flip-structure",
       "a flipped byte in the length of chunk 1's string vector (fails FlatBuffers "
       "verification)",
       flip([](Encoded& e) {
         Bytes& c = e.chunks[1];
         c[StringsVectorOffset(c) + 3] ^= 0x40;
       })},
      {"flip-root-offset",
       "a flipped byte in chunk 0's root offset (fails FlatBuffers verification)",
       flip([](Encoded& e) { e.chunks[0][4] ^= 0x80; })},
      {"flip-node-class",
       "a flipped byte in the class index of node 4 (verifies, but names no class)",
       flip([](Encoded& e) {
         Bytes& c = e.chunks[1];
         c[NodeOffset(c, 1) + kNodeCls] ^= 0x10;
       })},
      {"flip-class-kind", "a flipped byte in the node kind of chunk 1's class 0 (kind 0x82)",
       flip([](Encoded& e) {
         Bytes& c = e.chunks[1];
         c[ClassOffset(c, 0) + kClassKind] ^= 0x80;
       })},
      {"tensor-none",
       "the value kind of chunk 0's class 1 flipped from Function to Tensor: node 1 holds "
       "tensor 0 of a chunk that has no tensors",
       flip([](Encoded& e) {
         Bytes& c = e.chunks[0];
         c[ClassOffset(c, 1) + kClassVKind] ^=
             static_cast<uint8_t>(fb::VKind::Function) ^ static_cast<uint8_t>(fb::VKind::Tensor);
       })},
      {"flip-value-kind",
       "the value kind of chunk 0's class 2 flipped from F64 to Bool (node 2 holds 1.0)",
       flip([](Encoded& e) {
         Bytes& c = e.chunks[0];
         c[ClassOffset(c, 2) + kClassVKind] ^=
             static_cast<uint8_t>(fb::VKind::F64) ^ static_cast<uint8_t>(fb::VKind::Bool);
       })},
      {"forward-ref", "node 3 references node 4 (backward distance -1 stored as 0xFFFFFFFF)",
       flip([](Encoded& e) {
         Bytes& c = e.chunks[1];
         StoreU32(c, RefsOffset(c, 0), 0xFFFFFFFFu);
       })},
      {"self-ref", "node 4's first reference names node 4 itself (distance 0)",
       flip([](Encoded& e) {
         Bytes& c = e.chunks[1];
         StoreU32(c, RefsOffset(c, 1), 0);
       })},
      {"ref-before-start", "node 3 references node -7 (distance 10)", flip([](Encoded& e) {
         Bytes& c = e.chunks[1];
         StoreU32(c, RefsOffset(c, 0), 10);
       })},
      {"return-closes-wrong-call", "the return (node 5) closes node 2, which is not the open call",
       flip([](Encoded& e) {
         Bytes& c = e.chunks[1];
         StoreU32(c, RefsOffset(c, 4), 3);
       })},
      {"unclosed-call", "the return is recorded as a primitive: the root call never closes",
       edit([](auto& t) { t[1].nodes[2] = fb::Node(F64Bits(1.8414709848078965), 1, 3); })},
      {"chunk-number", "chunk 1 numbered 2 (a lost chunk)", edit([](auto& t) { t[1].index = 2; })},
      {"chunk-base", "chunk 1 says it starts at node 4, the chunk before it ends at node 2",
       edit([](auto& t) { t[1].base = 4; })},
      {"base-depth", "chunk 1 says no call is open when it starts (the root call is)",
       edit([](auto& t) { t[1].base_depth = 0; })},
      {"total-nodes", "the final chunk says the trace has 7 nodes, the chunks hold 6",
       edit([](auto& t) { t[1].total_nodes = 7; })},
      {"first-not-call", "the first node is an argument, not the root call's marker",
       edit([](auto& t) { t[0].nodes[0] = fb::Node(0, 1, 0); })},
      {"tensor-size", "a 2x2 Float64 tensor in chunk 1 with 24 bytes of data", edit([](auto& t) {
         t[1].tensors.push_back({fb::DType::F64, {2, 2}, Bytes(24, 0)});
       })},
      {"string-range", "node 1's function name is string 9 of a chunk that has 1",
       edit([](auto& t) { t[0].nodes[1] = fb::Node(9, 1, 0); })},
      {"odd-producer",
       "a valid trace whose producer name holds a quote, a backslash and a tab, and whose "
       "version holds a newline",
       edit([](auto& t) {
         for (ChunkModel& c : t) {
           c.producer_name = "say \"hi\" \\ tab\t";
           c.producer_version = "1\n2";
         }
       })},
      {"marker-with-value", "the root call's marker (class 0 of chunk 0) carries a Float64",
       edit([](auto& t) {
         t[0].classes[0] = Class(fb::Kind::Call, 0, 0, 0, 0, 1, fb::VKind::F64);
       })},
      {"return-no-value", "the return (class 2 of chunk 1) has no value", edit([](auto& t) {
         t[1].classes[2] = Class(fb::Kind::Return, ~0u, 1, 1, 0, 1, fb::VKind::None);
       })},
      {"error-with-value", "the root call closed by an Error that carries a Float64",
       edit([](auto& t) {
         t[1].classes[2] = Class(fb::Kind::Error, ~0u, 1, 1, 0, 1, fb::VKind::F64);
       })},
      {"flags-2", "class 0 of chunk 1 has flags 2 (taken when true) without a condition",
       edit([](auto& t) {
         fb::NodeClass k = t[1].classes[0];
         t[1].classes[0] = fb::NodeClass(k.op(), k.block(), k.pos(), k.aux(), k.first_operand(),
                                         k.line(), k.col(), k.n_operands(), k.kind(), k.vkind(), 2);
       })},
      {"f32-high-bits", "node 2 is a Float32 with its high 32 bits set", edit([](auto& t) {
         t[0].classes[2] = Class(fb::Kind::Argument, ~0u, 1, 2, 0, 0, fb::VKind::F32);
         t[0].nodes[2] = fb::Node(0x100000000ull | 0x3f800000u, 2, 0);
       })},
      {"bool-tensor-2", "a Bool tensor in chunk 1 holding the byte 2", edit([](auto& t) {
         t[1].tensors.push_back({fb::DType::Bool, {2}, Bytes{1, 2}});
       })},
      {"no-producer", "chunk 1 names no producer", edit([](auto& t) { t[1].no_producer = true; })},
      {"meta-dup-key", "node 4 has the metadata key 'tag' twice", edit([](auto& t) {
         t[1].strings.push_back("tag");
         uint32_t key = static_cast<uint32_t>(t[1].strings.size() - 1);
         t[1].meta.push_back(fb::Meta(fb::Value(1, fb::VKind::I64), 1, key));
         t[1].meta.push_back(fb::Meta(fb::Value(2, fb::VKind::I64), 1, key));
       })},
      {"minor-newer-vkind", "format 1.2 whose node 2 uses value kind 10, appended in 1.2",
       edit([](auto& t) {
         for (ChunkModel& c : t) c.format_minor = 2;
         t[0].classes[2] = Class(fb::Kind::Argument, ~0u, 1, 2, 0, 0, static_cast<fb::VKind>(10));
       })},
      {"tuple-bomb",
       "x (node 2) holds tuple 29 of t0 = (1.0, 1.0), t[i] = (t[i-1], t[i-1]): 2^30 leaves "
       "in 30 tuples",
       edit([](auto& t) {
         ChunkModel& c = t[0];
         c.tuples.push_back(
             {fb::Value(F64Bits(1.0), fb::VKind::F64), fb::Value(F64Bits(1.0), fb::VKind::F64)});
         for (uint64_t i = 1; i < 30; ++i) {
           c.tuples.push_back(
               {fb::Value(i - 1, fb::VKind::Tuple), fb::Value(i - 1, fb::VKind::Tuple)});
         }
         c.classes[2] = Class(fb::Kind::Argument, kNoOp, 1, 2, 0, 0, fb::VKind::Tuple);
         c.nodes[2] = fb::Node(29, 2, 0);
       })},
      {"matmul-huge",
       "a valid trace of matmul(A, B) with A 2^31x0 and B 0x2^31 (a 2^62-element product)",
       []() { return EncodeAll(HugeMatmulTrace()).Join(); }},
      {"op-forge",
       "a valid trace whose sin is named \"sin\", a newline, ESC [31m and a forged "
       "\"irt-grad: error:\" line",
       edit([](auto& t) { t[1].strings[0] = "sin\n\x1b[31mirt-grad: error: forged\x1b[0m"; })},
      {"root-forge",
       "a valid trace whose root function is named \"f\", a newline and a forged "
       "\"irt-grad: error:\" line",
       edit([](auto& t) { t[0].strings[0] = "f\nirt-grad: error: forged"; })},
      {"op-utf8", "a valid trace whose sin is named with bytes that are not UTF-8 (s FF in C3)",
       edit([](auto& t) { t[1].strings[0] = "s\xffin\xc3"; })},
      {"op-long", "a valid trace whose sin is named with 100000 bytes",
       edit([](auto& t) { t[1].strings[0] = std::string(100000, 'x'); })},
      {"meta-unsorted", "chunk 1's metadata not sorted by node", edit([](auto& t) {
         t[1].strings.push_back("tag");
         uint32_t key = static_cast<uint32_t>(t[1].strings.size() - 1);
         t[1].meta.push_back(fb::Meta(fb::Value(1, fb::VKind::I64), 2, key));
         t[1].meta.push_back(fb::Meta(fb::Value(2, fb::VKind::I64), 0, key));
       })},
  };
}

bool WriteFile(const std::string& path, const Bytes& b) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = b.empty() || std::fwrite(b.data(), 1, b.size(), f) == b.size();
  return std::fclose(f) == 0 && ok;
}

bool ReadFile(const std::string& path, Bytes* b) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) b->insert(b->end(), buf, buf + n);
  bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

// Walks the chunk framing of a valid trace and overwrites one reference.
int SetRef(const char* in, uint64_t node, uint32_t k, uint32_t value, const char* out) {
  Bytes file;
  if (!ReadFile(in, &file)) {
    std::fprintf(stderr, "make_bad_traces: cannot read '%s'\n", in);
    return 1;
  }
  for (size_t at = 0; at + 4 <= file.size();) {
    uint32_t size;
    std::memcpy(&size, file.data() + at, 4);
    const fb::Chunk* c = fb::GetSizePrefixedChunk(file.data() + at);
    uint64_t n = c->nodes() ? c->nodes()->size() : 0;
    if (node >= c->base() && node < c->base() + n) {
      uint32_t first = c->nodes()->Get(static_cast<uint32_t>(node - c->base()))->first_ref();
      size_t ref =
          static_cast<size_t>(reinterpret_cast<const uint8_t*>(c->refs()->Data()) - file.data()) +
          4 * (static_cast<size_t>(first) + k - 1);
      StoreU32(file, ref, value);
      return WriteFile(out, file) ? 0 : 1;
    }
    at += 4 + static_cast<size_t>(size);
  }
  std::fprintf(stderr, "make_bad_traces: '%s' has no node %llu\n", in,
               static_cast<unsigned long long>(node));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::strcmp(argv[1], "--set-ref") == 0) {
    return SetRef(argv[2], std::strtoull(argv[3], nullptr, 10),
                  static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10)),
                  static_cast<uint32_t>(std::strtoul(argv[5], nullptr, 0)), argv[6]);
  }
  std::vector<Variant> variants = Variants();
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const Variant& v : variants) std::printf("%-26s %s\n", v.name, v.what);
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: make_bad_traces VARIANT FILE | --list | --set-ref IN NODE K VALUE OUT\n");
    return 2;
  }
  for (const Variant& v : variants) {
    if (std::strcmp(v.name, argv[1]) != 0) continue;
    if (!WriteFile(argv[2], v.make())) {
      std::fprintf(stderr, "make_bad_traces: cannot write '%s'\n", argv[2]);
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "make_bad_traces: unknown variant '%s' (see --list)\n", argv[1]);
  return 2;
}
