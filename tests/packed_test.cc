// Format 2's packed node column (io/packed.h, schema/README.md §3.1): the
// writer's format-2 and format-1.1 traces of one program read the same,
// node for node; irt-convert's library call turns each into the other; and
// every way a packed column can be broken is refused with its node named,
// by the same checker that refuses a format-1 chunk's references.
#include "io/packed.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io/chunk.h"
#include "io/chunk_encoder.h"
#include "irt/check.h"
#include "irt/control_flow.h"
#include "irt/convert.h"
#include "irt/output.h"
#include "irt/trace.h"
#include "irt/writer.h"
#include "irtrace_generated.h"
#include "test_util.h"

namespace irt {
namespace {

using testing::TempPath;
using testing::WriteTrace;

// The decoders' buffers: small ones from operator new, from 1 MiB on a
// tensor block whose whole capacity is used, so that a later chunk a
// little larger reuses it; Zeroed clears what it hands out.
TEST(GrowBufferTest, LargeBuffersUseTheirWholeBlock) {
  internal::GrowBuffer<uint32_t> b;
  uint32_t* small = b.Reserve(100);
  ASSERT_NE(small, nullptr);
  small[99] = 7;
  EXPECT_EQ(b.Reserve(50), small);
  const size_t n = (size_t{1} << 20) / 4 + 10;  // a little over 1 MiB
  uint32_t* big = b.Reserve(n);
  ASSERT_NE(big, nullptr);
  std::memset(big, 0xab, n * 4);
  const size_t cap = internal::TensorBlockCapacity(n * 4) / 4;
  ASSERT_GE(cap, n);
  EXPECT_EQ(b.Reserve(cap), big);  // fits in the block as it is
  EXPECT_EQ(b.Reserve(n)[n - 1], 0xababababu);
  uint32_t* z = b.Zeroed(cap);
  EXPECT_EQ(z, big);
  EXPECT_EQ(z[0], 0u);
  EXPECT_EQ(z[cap - 1], 0u);
  internal::GrowBuffer<uint32_t> moved = std::move(b);
  EXPECT_EQ(moved.data(), big);
  EXPECT_EQ(b.data(), nullptr);
  uint32_t* bigger = moved.Reserve(cap + 1);
  ASSERT_NE(bigger, nullptr);
  bigger[cap] = 1;
}

// A loop of `steps` iterations that exercises every value mode: block
// arguments copied from a jump's literal and reference operands, a
// counter (Int64 deltas), a constant repeated every iteration, Bool,
// Float32, String and Tensor values, a tuple, a nested call and its
// return, then an error closing the root call.
void WriteLoop(TraceWriter& w, int steps) {
  ClassSpec root{.kind = NodeKind::kCall, .op = "loop"};
  root.operands = {OperandSpec::Literal(Value::I64(steps))};
  ClassSpec a_fn{.kind = NodeKind::kArgument, .block = 1, .pos = 1};
  ClassSpec a_n{.kind = NodeKind::kArgument, .block = 1, .pos = 2};
  ClassSpec cst{.kind = NodeKind::kConstant, .block = 1, .pos = 3};
  ClassSpec enter{.kind = NodeKind::kJump, .block = 1, .pos = 1, .aux = 2};
  enter.operands = {OperandSpec::Literal(Value::I64(0)), OperandSpec::Ref()};
  ClassSpec b_i{.kind = NodeKind::kArgument, .block = 2, .pos = 4, .aux = 1};
  b_i.operands = {OperandSpec::Ref()};
  ClassSpec b_acc{.kind = NodeKind::kArgument, .block = 2, .pos = 5, .aux = 2};
  b_acc.operands = {OperandSpec::Ref()};
  ClassSpec lt{.kind = NodeKind::kPrimitive, .op = "<", .block = 2, .pos = 6};
  lt.operands = {OperandSpec::Ref(), OperandSpec::Ref()};
  ClassSpec exit{.kind = NodeKind::kJump,
                 .block = 2,
                 .pos = 1,
                 .aux = 3,
                 .has_condition = true,
                 .condition_taken_when = false};
  exit.operands = {OperandSpec::Ref()};
  ClassSpec mul{.kind = NodeKind::kPrimitive, .op = "*", .block = 2, .pos = 7};
  mul.operands = {OperandSpec::Ref(), OperandSpec::Ref()};
  ClassSpec f32{.kind = NodeKind::kPrimitive, .op = "Float32", .block = 2, .pos = 8};
  f32.operands = {OperandSpec::Ref()};
  ClassSpec str{.kind = NodeKind::kConstant, .block = 2, .pos = 9};
  ClassSpec inc{.kind = NodeKind::kPrimitive, .op = "+", .block = 2, .pos = 10};
  inc.operands = {OperandSpec::Ref(), OperandSpec::Literal(Value::I64(1))};
  ClassSpec back{.kind = NodeKind::kJump, .block = 2, .pos = 2, .aux = 2};
  back.operands = {OperandSpec::Ref(), OperandSpec::Ref()};
  ClassSpec ten{.kind = NodeKind::kConstant, .block = 3, .pos = 11};
  ClassSpec tup{.kind = NodeKind::kConstant, .block = 3, .pos = 12};
  ClassSpec call{.kind = NodeKind::kCall, .op = "g", .block = 3, .pos = 13};
  call.operands = {OperandSpec::Ref()};
  ClassSpec g_arg{.kind = NodeKind::kArgument, .block = 1, .pos = 2};
  ClassSpec g_ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
  g_ret.operands = {OperandSpec::Ref()};
  ClassSpec fail{.kind = NodeKind::kError, .op = "error", .block = 3, .pos = 14};
  fail.operands = {OperandSpec::Ref()};
  ClassId c_root = w.DefineClass(root), c_fn = w.DefineClass(a_fn), c_n = w.DefineClass(a_n),
          c_cst = w.DefineClass(cst), c_enter = w.DefineClass(enter), c_i = w.DefineClass(b_i),
          c_acc = w.DefineClass(b_acc), c_lt = w.DefineClass(lt), c_exit = w.DefineClass(exit),
          c_mul = w.DefineClass(mul), c_f32 = w.DefineClass(f32), c_str = w.DefineClass(str),
          c_inc = w.DefineClass(inc), c_back = w.DefineClass(back), c_ten = w.DefineClass(ten),
          c_tup = w.DefineClass(tup), c_call = w.DefineClass(call), c_garg = w.DefineClass(g_arg),
          c_gret = w.DefineClass(g_ret), c_fail = w.DefineClass(fail);
  w.Append(c_root, Value(), {});
  w.Append(c_fn, Value::Function("loop"), {});
  NodeId n = w.Append(c_n, Value::I64(steps), {});
  NodeId c = w.Append(c_cst, Value::F64(1.5), {});
  NodeId jump = w.Append(c_enter, Value(), std::vector<NodeId>{c});
  int64_t i_val = 0;
  double acc_val = 1.5;
  for (;;) {
    NodeId i = w.Append(c_i, Value::I64(i_val), std::vector<NodeId>{jump});
    NodeId acc = w.Append(c_acc, Value::F64(acc_val), std::vector<NodeId>{jump});
    NodeId cond = w.Append(c_lt, Value::Bool(i_val < steps), std::vector<NodeId>{i, n});
    if (i_val >= steps) {
      w.Append(c_exit, Value(), std::vector<NodeId>{cond});
      const double elems[] = {acc_val, -acc_val};
      NodeId t = w.Append(c_ten, Value::MakeTensor(Tensor::FromF64({2}, elems)), {});
      w.Append(c_tup, Value::MakeTuple({Value::I64(i_val), Value::String("end")}), {});
      w.Append(c_call, Value(), std::vector<NodeId>{acc});
      NodeId g = w.Append(c_garg, Value::F64(acc_val), {});
      w.Append(c_gret, Value::F64(acc_val), std::vector<NodeId>{g});
      w.Append(c_fail, Value(), std::vector<NodeId>{t});
      return;
    }
    acc_val *= 1.5;
    NodeId m = w.Append(c_mul, Value::F64(acc_val), std::vector<NodeId>{acc, c});
    w.Append(c_f32, Value::F32(static_cast<float>(acc_val)), std::vector<NodeId>{m});
    w.Append(c_str, Value::String(i_val % 2 == 0 ? "even" : "odd"), {});
    NodeId next = w.Append(c_inc, Value::I64(++i_val), std::vector<NodeId>{i});
    jump = w.Append(c_back, Value(), std::vector<NodeId>{next, m});
  }
}

std::string Describe(const NodeView& v) {
  std::string s = std::string(NodeKindName(v.kind())) + " " + std::string(v.op()) + " " +
                  FormatValue(v.value()) + " refs";
  for (NodeId r : v.refs()) s += " " + std::to_string(r);
  if (v.kind() == NodeKind::kReturn || v.kind() == NodeKind::kError) {
    s += " closes " + std::to_string(v.closes());
  }
  return s;
}

// Every node of two traces, described; they must be equal.
void ExpectSameNodes(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.size(), b.size());
  for (NodeId id = 0; id < a.size(); ++id) {
    auto x = a.node(id);
    auto y = b.node(id);
    ASSERT_TRUE(x.ok()) << x.status().message();
    ASSERT_TRUE(y.ok()) << y.status().message();
    ASSERT_EQ(Describe(*x), Describe(*y)) << "node " << id;
  }
}

WriterOptions Format(uint16_t major, uint32_t chunk_nodes) {
  WriterOptions o;
  o.format_major = major;
  o.chunk_nodes = chunk_nodes;
  return o;
}

TEST(PackedTest, BothFormatsReadTheSameNodeForNode) {
  for (uint32_t chunk : {7u, 1000u}) {
    auto body = [](TraceWriter& w) { WriteLoop(w, 40); };
    auto v2 = Trace::Open(WriteTrace("loop2.fb", body, Format(2, chunk)));
    auto v1 = Trace::Open(WriteTrace("loop1.fb", body, Format(1, chunk)));
    ASSERT_TRUE(v2.ok()) << v2.status().message();
    ASSERT_TRUE(v1.ok()) << v1.status().message();
    EXPECT_EQ(v2->format_major(), 2u);
    EXPECT_EQ(v2->format_minor(), kFormatMinor);
    EXPECT_EQ(v1->format_major(), 1u);
    EXPECT_EQ(v1->format_minor(), kFormat1Minor);
    ExpectSameNodes(*v1, *v2);
    EXPECT_TRUE(CheckTrace(TempPath("loop2.fb")).ok());
    if (chunk == 1000) {  // one chunk: the node column is most of it
      EXPECT_LT(testing::ReadFile(TempPath("loop2.fb")).size() * 2,
                testing::ReadFile(TempPath("loop1.fb")).size());
    }
  }
}

TEST(PackedTest, ConvertsEitherWayNodeForNode) {
  std::string v2 = WriteTrace(
      "c2.fb", [](TraceWriter& w) { WriteLoop(w, 100); }, Format(2, 64));
  auto convert = [](const std::string& in, const std::string& out, uint16_t major) {
    auto o = Output::Open(out);
    ASSERT_TRUE(o.ok());
    ConvertOptions opts;
    opts.format_major = major;
    auto r = ConvertTrace(in, **o, opts);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->chunks_rewritten, r->chunks);
    ASSERT_TRUE((*o)->Commit().ok());
  };
  convert(v2, TempPath("c1.fb"), 1);
  convert(TempPath("c1.fb"), TempPath("c2b.fb"), 2);
  auto a = Trace::Open(v2), b = Trace::Open(TempPath("c1.fb")), c = Trace::Open(TempPath("c2b.fb"));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(b->format_major(), 1u);
  EXPECT_EQ(c->format_major(), 2u);
  ExpectSameNodes(*a, *b);
  ExpectSameNodes(*a, *c);
  // The same format again: every chunk copied as it is.
  auto o = Output::Open(TempPath("c2c.fb"));
  ASSERT_TRUE(o.ok());
  auto r = ConvertTrace(v2, **o, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->chunks_rewritten, 0u);
  ASSERT_TRUE((*o)->Commit().ok());
  EXPECT_EQ(testing::ReadFile(TempPath("c2c.fb")), testing::ReadFile(v2));
}

TEST(PackedTest, AFormat10TraceKeepsItsControlFlowFactsInFormat2) {
  std::string in = std::string(IRT_SOURCE_DIR) + "/testdata/compat/v1/h.fb";
  auto o = Output::Open(TempPath("h2.fb"));
  ASSERT_TRUE(o.ok());
  ASSERT_TRUE(ConvertTrace(in, **o, {}).ok());
  ASSERT_TRUE((*o)->Commit().ok());
  auto old = Trace::Open(in), now = Trace::Open(TempPath("h2.fb"));
  ASSERT_TRUE(old.ok() && now.ok());
  EXPECT_EQ(old->format_minor(), 0u);
  ExpectSameNodes(*old, *now);
  // The 1.0 chunk's facts come from its IR text; the 2.0 chunk stores them.
  auto facts = [](const Trace& t) {
    auto cols = t.columns(0);
    EXPECT_TRUE(cols.ok());
    std::vector<std::string> out;
    for (const auto& f : (*cols)->Functions()) {
      EXPECT_TRUE(f.facts.has_value()) << f.name;
      if (f.facts) out.push_back(std::string(f.name) + ":" + std::to_string(f.facts->blocks));
    }
    return out;
  };
  EXPECT_EQ(facts(*old), facts(*now));
  EXPECT_FALSE(facts(*now).empty());
}

// ------------------------------------------------------------ hostile columns

// A one-chunk format-2 trace built by hand: f's call marker (class 0), a
// constant 2.0 (class 2) and the return of it (class 1, a value reference
// and the link to the marker), with the packed column `packed` of `count`
// nodes.
std::vector<uint8_t> HandChunk(const std::vector<uint8_t>& packed, uint32_t count,
                               bool with_v1_columns = false) {
  flatbuffers::FlatBufferBuilder fbb;
  auto producer = fb::CreateProducer(fbb, fbb.CreateString("hand"), fbb.CreateString("1"));
  std::vector<fb::NodeClass> classes = {
      fb::NodeClass(0, 0, 0, 0, 0, 0, 0, 0, fb::Kind::Call, fb::VKind::None, 0),
      fb::NodeClass(~0u, 1, 1, 0, 0, 0, 0, 1, fb::Kind::Return, fb::VKind::F64, 0),
      fb::NodeClass(~0u, 1, 2, 0, 1, 0, 0, 0, fb::Kind::Constant, fb::VKind::F64, 0)};
  std::vector<uint32_t> operands = {0};
  auto v_classes = fbb.CreateVectorOfStructs(classes);
  auto v_operands = fbb.CreateVector(operands);
  auto v_strings = fbb.CreateVector(
      std::vector<flatbuffers::Offset<flatbuffers::String>>{fbb.CreateString("f")});
  fbb.ForceVectorAlignment(packed.size(), 1, 8);
  auto v_packed = fbb.CreateVector(packed);
  flatbuffers::Offset<flatbuffers::Vector<const fb::Node*>> v_nodes;
  if (with_v1_columns) v_nodes = fbb.CreateVectorOfStructs(std::vector<fb::Node>{});
  fb::ChunkBuilder cb(fbb);
  cb.add_format_major(2);
  cb.add_format_minor(0);
  cb.add_producer(producer);
  cb.add_index(0);
  cb.add_base(0);
  cb.add_base_depth(0);
  cb.add_classes(v_classes);
  cb.add_operands(v_operands);
  cb.add_strings(v_strings);
  cb.add_node_count(count);
  cb.add_packed(v_packed);
  if (with_v1_columns) cb.add_nodes(v_nodes);
  cb.add_last(true);
  cb.add_total_nodes(count);
  fbb.FinishSizePrefixed(cb.Finish(), "IRTC");
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> F64Bytes(double d) {
  std::vector<uint8_t> b(8);
  std::memcpy(b.data(), &d, 8);
  return b;
}

// The column of the valid trace: marker; constant 2.0 written; return with
// reference distance 1 and link distance 2 (zigzag 2 and 4), value 2.0.
std::vector<uint8_t> Valid() {
  std::vector<uint8_t> p = {0x00, 2 << 2};
  for (uint8_t b : F64Bytes(2.0)) p.push_back(b);
  p.insert(p.end(), {1 << 2, 2, 4});
  for (uint8_t b : F64Bytes(2.0)) p.push_back(b);
  return p;
}

// What irt-check says of a hand-made chunk ("" when it is valid).
std::string Verdict(const std::vector<uint8_t>& chunk) {
  std::string path = TempPath("hand.fb");
  {
    auto o = Output::Open(path);
    EXPECT_TRUE(o.ok());
    (*o)->Write(chunk.data(), chunk.size());
    EXPECT_TRUE((*o)->Commit().ok());
  }
  auto r = CheckTrace(path);
  // Every reader agrees with the checker.
  auto t = Trace::Open(path);
  Status random = t.ok() ? t->VerifyChunk(0) : t.status();
  EXPECT_EQ(r.ok(), random.ok()) << (r.ok() ? random.message() : r.status().message());
  if (r.ok()) return "";
  std::string m = r.status().message();
  return m.substr(m.find(": ") + 2);
}

TEST(PackedTest, TheHandMadeColumnIsValid) {
  EXPECT_EQ(Verdict(HandChunk(Valid(), 3)), "");
  auto t = Trace::Open(TempPath("hand.fb"));
  ASSERT_TRUE(t.ok());
  auto ret = t->node(2);
  ASSERT_TRUE(ret.ok());
  EXPECT_EQ(Describe(*ret), "Return  2.0 refs 1 closes 0");
}

TEST(PackedTest, BrokenColumnsAreRefusedAtTheirNode) {
  std::vector<uint8_t> v = Valid();
  auto edited = [&](size_t at, std::vector<uint8_t> bytes, size_t drop = 0) {
    std::vector<uint8_t> p = v;
    p.erase(p.begin() + static_cast<long>(at), p.begin() + static_cast<long>(at + drop));
    p.insert(p.begin() + static_cast<long>(at), bytes.begin(), bytes.end());
    return p;
  };
  EXPECT_EQ(Verdict(HandChunk(v, 4)),
            "chunk 0, node 3: packed column: truncated or overlong node header");
  EXPECT_EQ(Verdict(HandChunk(v, 2)), "chunk 0 at byte 0: packed column: 11 bytes after node 1");
  EXPECT_EQ(Verdict(HandChunk(v, 500)),
            "chunk 0 at byte 0: packed column: 500 nodes in 21 bytes (at most one node per byte, "
            "4194304 per chunk)");
  EXPECT_EQ(Verdict(HandChunk(edited(1, {9 << 2}, 1), 3)),
            "chunk 0, node 1: packed column: class 9 out of range (chunk has 3)");
  EXPECT_EQ(Verdict(HandChunk(edited(0, {0x03}, 1), 3)),
            "chunk 0, node 0: packed column: unknown value mode 3");
  EXPECT_EQ(Verdict(HandChunk(edited(1, {(2 << 2) | 1}, 9), 3)),
            "chunk 0, node 1: packed column: repeats a value its class has not had in this chunk");
  EXPECT_EQ(Verdict(HandChunk(edited(1, {(2 << 2) | 2}, 9), 3)),
            "chunk 0, node 1: packed column: copies a value from a jump operand that it cannot");
  // The return's value reference: a distance past 32 bits, a varint of 11
  // bytes, and distance 2 (the call marker, as a format-1 chunk would say).
  EXPECT_EQ(Verdict(HandChunk(edited(11, {0x80, 0x80, 0x80, 0x80, 0x20}, 1), 3)),
            "chunk 0, node 2: packed column: reference distance beyond 32 bits");
  EXPECT_EQ(Verdict(HandChunk(edited(11, std::vector<uint8_t>(11, 0x80), 1), 3)),
            "chunk 0, node 2: packed column: truncated or overlong reference");
  EXPECT_EQ(Verdict(HandChunk(edited(11, {4}, 1), 3)),
            "chunk 0, node 2: reference 1 points to the call marker at node 0, which has no "
            "value (a call's value is its closer's)");
  EXPECT_EQ(Verdict(HandChunk(edited(11, {0}, 1), 3)),
            "chunk 0, node 2: reference 1 points to itself");
  // The value cut short.
  EXPECT_EQ(Verdict(HandChunk(std::vector<uint8_t>(v.begin(), v.end() - 3), 3)),
            "chunk 0, node 2: packed column: truncated value");
  // Format-1 columns in a format-2 chunk.
  EXPECT_EQ(Verdict(HandChunk(v, 3, /*with_v1_columns=*/true)),
            "chunk 0 at byte 0: a format-2 chunk with format-1 node or reference columns");
}

// The codec on its own: random columns of a few classes survive a round trip.
TEST(PackedTest, CodecRoundTripsEveryModeAndPayload) {
  std::vector<fb::NodeClass> classes = {
      fb::NodeClass(~0u, 1, 1, 0, 0, 0, 0, 0, fb::Kind::Constant, fb::VKind::I64, 0),
      fb::NodeClass(~0u, 1, 2, 0, 0, 0, 0, 2, fb::Kind::Primitive, fb::VKind::F64, 0),
      fb::NodeClass(~0u, 1, 3, 0, 0, 0, 0, 1, fb::Kind::Primitive, fb::VKind::Bool, 0),
      fb::NodeClass(~0u, 1, 4, 0, 0, 0, 0, 0, fb::Kind::Constant, fb::VKind::F32, 0),
      fb::NodeClass(~0u, 1, 5, 0, 0, 0, 0, 0, fb::Kind::Constant, fb::VKind::String, 0),
      // More reference slots than the decoder reads without bounds checks.
      fb::NodeClass(~0u, 1, 6, 0, 0, 0, 0, 2, fb::Kind::Primitive, fb::VKind::F64, 0)};
  std::vector<uint16_t> slots = {0, 2, 1, 0, 0, 12};
  std::vector<uint32_t> operands = {0, 0};
  internal::PackTables t{classes, slots, operands, {}};
  std::vector<internal::NodeRec> nodes;
  std::vector<uint32_t> refs;
  uint64_t seed = 12345;
  auto next = [&]() {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return seed >> 33;
  };
  for (uint32_t i = 0; i < 5000; ++i) {
    uint32_t cls = i < 3 ? 0 : static_cast<uint32_t>(next() % 6);
    uint64_t value = 0;
    switch (cls) {
      case 0:
        value = next() % 3 == 0 ? static_cast<uint64_t>(-static_cast<int64_t>(next())) : i;
        break;
      case 1:
      case 5:
        value = next() % 2 ? 0x400921FB54442D18ull : next() << 20;
        break;
      case 2:
        value = next() % 2;
        break;
      case 3:
        value = next() & 0xFFFFFFFFu;
        break;
      default:
        value = next() % 4;
        break;
    }
    nodes.push_back({value, cls, static_cast<uint32_t>(refs.size())});
    for (uint32_t j = 0; j < slots[cls]; ++j) refs.push_back(1 + static_cast<uint32_t>(next() % i));
  }
  internal::GrowBuffer<uint8_t> packed;
  size_t n = internal::PackNodes(t, nodes, refs, &packed);
  std::vector<internal::NodeRec> back(nodes.size());
  std::vector<uint32_t> back_refs(internal::PackedRefRoom(n));
  uint64_t n_refs = 0;
  uint32_t failed = 0;
  Status s = internal::UnpackNodes(t, {packed.data(), n}, static_cast<uint32_t>(nodes.size()),
                                   back.data(), back_refs.data(), &n_refs, &failed);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(n_refs, refs.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSERT_EQ(back[i].value, nodes[i].value) << i;
    ASSERT_EQ(back[i].cls, nodes[i].cls) << i;
    ASSERT_EQ(back[i].first_ref, nodes[i].first_ref) << i;
  }
  for (size_t i = 0; i < refs.size(); ++i) ASSERT_EQ(back_refs[i], refs[i]) << i;
  // Cut short anywhere near its end (where the decoder checks every byte),
  // the column is refused without a read past it: each prefix is copied to
  // a buffer of exactly its size, which the sanitizers watch.
  std::vector<std::pair<std::string, uint32_t>> refused;
  const size_t first_cut = n > 300 ? n - 300 : 0;
  for (size_t cut = first_cut; cut < n; ++cut) {
    std::vector<uint8_t> prefix(packed.data(), packed.data() + cut);
    s = internal::UnpackNodes(t, prefix, static_cast<uint32_t>(nodes.size()), back.data(),
                              back_refs.data(), &n_refs, &failed);
    ASSERT_FALSE(s.ok()) << cut;
    refused.emplace_back(s.message(), failed);
  }
  // On a thread that decodes for another (which prefetches its output
  // lines, block by block), into buffers of exactly the room asked for:
  // the same nodes, and every cut refused with the same message at the
  // same node.
  int mismatches = 0;
  std::thread([&] {
    internal::DecodeForAnotherThread();
    std::vector<internal::NodeRec> again(nodes.size());
    std::vector<uint32_t> again_refs(internal::PackedRefRoom(n));
    uint64_t again_n = 0;
    uint32_t again_failed = 0;
    Status st = internal::UnpackNodes(t, {packed.data(), n}, static_cast<uint32_t>(nodes.size()),
                                      again.data(), again_refs.data(), &again_n, &again_failed);
    if (!st.ok() || again_n != refs.size()) ++mismatches;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (again[i].value != nodes[i].value || again[i].cls != nodes[i].cls ||
          again[i].first_ref != nodes[i].first_ref) {
        ++mismatches;
      }
    }
    for (size_t i = 0; i < refs.size(); ++i) mismatches += again_refs[i] != refs[i] ? 1 : 0;
    for (size_t cut = first_cut; cut < n; ++cut) {
      std::vector<uint8_t> prefix(packed.data(), packed.data() + cut);
      st = internal::UnpackNodes(t, prefix, static_cast<uint32_t>(nodes.size()), again.data(),
                                 again_refs.data(), &again_n, &again_failed);
      const auto& [message, at] = refused[cut - first_cut];
      if (st.ok() || st.message() != message || again_failed != at) ++mismatches;
    }
  }).join();
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace irt

namespace irt {
namespace {

// The encoder's ids by object address: every key keeps its id through the
// table's growth, neighbouring addresses (one bucket after hashing) each get
// their own slot, and Clear forgets them all.
TEST(PackedTest, AddressIdsKeepEveryKeyThroughGrowthAndClear) {
  std::vector<char> bytes(20000);
  internal::AddressIds ids;
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < bytes.size(); ++i) {
      auto [id, fresh] = ids.TryEmplace(&bytes[i]);
      ASSERT_TRUE(fresh) << i;
      *id = static_cast<uint32_t>(i + 1);
    }
    for (size_t i = 0; i < bytes.size(); ++i) {
      auto [id, fresh] = ids.TryEmplace(&bytes[i]);
      ASSERT_FALSE(fresh) << i;
      ASSERT_EQ(*id, i + 1) << i;
    }
    ids.Clear();
  }
}

// A tensor that many nodes share (an argument handed down a call chain) is
// written once per chunk; an equal tensor that is another object is not
// merged (only shared objects are known to be equal without a comparison).
TEST(PackedTest, ASharedTensorIsWrittenOncePerChunk) {
  std::vector<double> elems(4096, 0.25);
  Value shared = Value::MakeTensor(Tensor::FromF64({4096}, elems));
  auto body = [&](TraceWriter& w, bool share) {
    const testing::ConstantClasses k = testing::DefineConstantClasses(w);
    ClassId cr = k.root, cc = k.constant, ct = k.ret;
    w.Append(cr, Value(), {});
    NodeId last = 0;
    for (int i = 0; i < 100; ++i) {
      last = w.Append(cc, share ? shared : Value::MakeTensor(Tensor::FromF64({4096}, elems)), {});
    }
    w.Append(ct, shared, std::vector<NodeId>{last});
  };
  std::string a = WriteTrace("shared.fb", [&](TraceWriter& w) { body(w, true); });
  std::string b = WriteTrace("copies.fb", [&](TraceWriter& w) { body(w, false); });
  size_t shared_bytes = testing::ReadFile(a).size(), copies_bytes = testing::ReadFile(b).size();
  EXPECT_LT(shared_bytes, 2 * 4096 * 8);
  EXPECT_GT(copies_bytes, 100 * 4096 * 8);
  auto t = Trace::Open(a);
  ASSERT_TRUE(t.ok());
  for (NodeId id : {NodeId{1}, NodeId{50}, NodeId{101}}) {
    auto n = t->node(id);
    ASSERT_TRUE(n.ok());
    ASSERT_TRUE(n->tensor().has_value());
    EXPECT_EQ(n->value().tensor().numel(), 4096);
    EXPECT_EQ(n->value().tensor().at(4095), 0.25);
  }
  EXPECT_TRUE(CheckTrace(a).ok());
}

}  // namespace
}  // namespace irt

namespace irt {
namespace {

// VerifyAhead checks the chunks on a second thread; what the reader gets,
// good chunks and errors alike, is what verifying on its own thread gives.
TEST(PackedTest, VerifyingAheadGivesTheSameNodesAndErrors) {
  std::string path = WriteTrace(
      "ahead.fb", [](TraceWriter& w) { WriteLoop(w, 300); }, Format(2, 16));
  std::string bytes = testing::ReadFile(path);
  // The same trace with one byte of chunk 20's packed column changed.
  std::string bad = bytes;
  size_t at = 0;
  for (int i = 0; i < 20; ++i) {
    uint32_t size;
    std::memcpy(&size, bad.data() + at, 4);
    at += 4 + size;
  }
  const fb::Chunk* c = fb::GetSizePrefixedChunk(bad.data() + at);
  size_t packed_at =
      static_cast<size_t>(reinterpret_cast<const char*>(c->packed()->data()) - bad.data());
  bad[packed_at] = static_cast<char>(0x7F);  // class 31, mode 3
  std::string bad_path = TempPath("ahead-bad.fb");
  {
    auto o = Output::Open(bad_path);
    ASSERT_TRUE(o.ok());
    (*o)->Write(bad.data(), bad.size());
    ASSERT_TRUE((*o)->Commit().ok());
  }
  for (const std::string& p : {path, bad_path}) {
    auto plain = Trace::Open(p);
    auto ahead = Trace::Open(p);
    ASSERT_TRUE(plain.ok() && ahead.ok());
    ahead->VerifyAhead();
    ASSERT_GT(ahead->chunks().size(), 20u);
    for (uint32_t i = 0; i < ahead->chunks().size(); ++i) {
      Status a = ahead->VerifyChunk(i), b = plain->VerifyChunk(i);
      EXPECT_EQ(a.ok(), b.ok()) << i;
      EXPECT_EQ(a.message(), b.message()) << i;
    }
    if (p == bad_path) {
      EXPECT_EQ(
          plain->VerifyChunk(20).message().find(
              "chunk 20, node 320: packed column: class 31 out of range") == std::string::npos,
          false);
    }
    for (NodeId id = 0; id < plain->size(); id += 7) {
      auto x = plain->node(id), y = ahead->node(id);
      ASSERT_EQ(x.ok(), y.ok()) << id;
      if (x.ok()) {
        EXPECT_EQ(Describe(*x), Describe(*y)) << id;
      }
    }
  }
  // A trace dropped while its chunks are being verified ahead.
  for (int k = 0; k < 20; ++k) {
    auto t = Trace::Open(path);
    ASSERT_TRUE(t.ok());
    t->VerifyAhead();
  }
}

}  // namespace
}  // namespace irt

namespace irt {
namespace {

// Decoded columns past the arena's memory budget live in pages of an
// unlinked file; they read back what was written, block after block.
TEST(PackedTest, DecodedColumnsPastTheBudgetLiveInAFile) {
  internal::DecodeArena arena(4u << 20);
  std::vector<uint64_t*> parts;
  for (int i = 0; i < 12; ++i) {
    auto* p = static_cast<uint64_t*>(arena.Allocate(3u << 20));
    for (size_t j = 0; j < (3u << 20) / 8; j += 512) p[j] = static_cast<uint64_t>(i) * 1000003 + j;
    parts.push_back(p);
  }
  for (int i = 0; i < 12; ++i) {
    for (size_t j = 0; j < (3u << 20) / 8; j += 512) {
      ASSERT_EQ(parts[static_cast<size_t>(i)][j], static_cast<uint64_t>(i) * 1000003 + j);
    }
  }
}

}  // namespace
}  // namespace irt
