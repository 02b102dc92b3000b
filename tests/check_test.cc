// CheckTrace (irt/check.h): the summary of a valid trace, and the first
// violation of a truncated, incomplete or missing one.
#include "irt/check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "irt/trace.h"
#include "irt/writer.h"
#include "irtrace_generated.h"
#include "test_util.h"

namespace irt {
namespace {

using testing::TempPath;
using testing::WriteSeedF;
using testing::WriteTrace;

std::string ReadBytes(const std::string& path) { return testing::ReadFile(path); }

TEST(CheckTest, SummaryOfAValidTrace) {
  WriterOptions opts;
  opts.producer_name = "check-test";
  opts.producer_version = "0.1";
  opts.chunk_nodes = 4;
  std::string path = WriteTrace("f.fb", WriteSeedF, opts);
  auto sum = CheckTrace(path);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->format_major, kFormatMajor);
  EXPECT_EQ(sum->producer_name, "check-test");
  EXPECT_EQ(sum->producer_version, "0.1");
  EXPECT_EQ(sum->nodes, 6u);
  EXPECT_EQ(sum->calls, 1u);
  EXPECT_EQ(sum->max_depth, 1u);
  EXPECT_GE(sum->chunks, 2u);  // chunks of 4 nodes
  EXPECT_EQ(sum->bytes, std::filesystem::file_size(path));
  EXPECT_TRUE(sum->complete);
}

TEST(CheckTest, TruncatedTraceNamesTheChunk) {
  std::string bytes = ReadBytes(WriteTrace("f.fb", WriteSeedF));
  std::string path = TempPath("cut.fb");
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 7);
  auto sum = CheckTrace(path);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), Code::kDataError);
  EXPECT_NE(sum.status().message().find("chunk"), std::string::npos) << sum.status().message();
}

TEST(CheckTest, IncompleteTraceIsAnError) {
  std::string path = TempPath("incomplete.fb");
  {
    auto out = Output::Open(path);
    ASSERT_TRUE(out.ok());
    WriterOptions opts;
    opts.chunk_nodes = 2;
    TraceWriter w(out->get(), opts);
    ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
    ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
    ClassId cr = w.DefineClass(root), cc = w.DefineClass(c);
    w.Append(cr, Value(), {});
    for (int i = 0; i < 5; ++i) w.Append(cc, Value::I64(i), {});
    ASSERT_TRUE((*out)->Commit().ok());  // no Finish(): the writer died
  }
  auto sum = CheckTrace(path);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), Code::kDataError);
}

// A ChunkStream reads the next chunk ahead and verifies it on a second
// thread: chunks still come out in order with their own bytes, and a bad
// chunk (at any position, so in either of the two chunks in flight) is
// reported after every chunk before it, and nothing after it.
TEST(CheckTest, AStreamGivesChunksInOrderAndStopsAtTheFirstBadOne) {
  WriterOptions opts;
  opts.chunk_nodes = 8;
  std::string path = WriteTrace(
      "many.fb",
      [](TraceWriter& w) {
        const testing::ConstantClasses k = testing::DefineConstantClasses(w);
        w.Append(k.root, Value(), {});
        NodeId last = 0;
        for (int i = 0; i < 100; ++i) last = w.Append(k.constant, Value::I64(i), {});
        w.Append(k.ret, Value::I64(99), std::vector<NodeId>{last});
      },
      opts);
  const std::string bytes = ReadBytes(path);
  auto trace = Trace::Open(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const std::vector<ChunkInfo> chunks = trace->chunks();
  ASSERT_GE(chunks.size(), 12u);

  // Streams `file` through a pipe (a small file is read without the
  // second thread; a pipe, whose size is unknown, with it): the chunks
  // before the first error, and that error.
  auto stream = [&](const std::string& file, std::string* error) {
    size_t good = 0;
    const std::string data = ReadBytes(file);
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    EXPECT_LE(data.size(), 65536u);  // what a pipe holds before a reader takes it
    EXPECT_EQ(write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
    close(fds[1]);
    auto s = ChunkStream::OpenAs("/dev/fd/" + std::to_string(fds[0]), "pipe");
    close(fds[0]);
    EXPECT_TRUE(s.ok());
    if (!s.ok()) return good;
    for (;;) {
      auto c = s->Next();
      if (!c.ok()) {
        *error = c.status().message();
        auto after = s->Next();  // the stream has ended
        EXPECT_TRUE(after.ok() && *after == nullptr);
        return good;
      }
      if (*c == nullptr) return good;
      const ChunkInfo& info = s->info();
      EXPECT_EQ(info.index, good);
      EXPECT_EQ(info.offset, chunks[good].offset);
      EXPECT_EQ(info.num_nodes, chunks[good].num_nodes);
      EXPECT_EQ(s->bytes_read(), info.offset + info.size + 4);
      std::span<const uint8_t> own = s->chunk_bytes();
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(own.data()), own.size()),
                bytes.substr(info.offset, info.size + 4));
      ++good;
    }
  };
  std::string error;
  EXPECT_EQ(stream(path, &error), chunks.size());
  EXPECT_EQ(error, "");

  for (size_t k = 0; k < chunks.size(); ++k) {
    const std::string at = "chunk " + std::to_string(k);
    // Cut inside chunk k: its read fails.
    std::string cut = TempPath("cut.fb");
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, chunks[k].offset + 20);
    error.clear();
    EXPECT_EQ(stream(cut, &error), k);
    EXPECT_NE(error.find(at), std::string::npos) << error;
    // A node count beyond the packed column: its verification fails.
    std::string edited = bytes;
    auto* base = reinterpret_cast<uint8_t*>(edited.data()) + chunks[k].offset;
    const fb::Chunk* c = fb::GetSizePrefixedChunk(base);
    const uint8_t* field =
        reinterpret_cast<const flatbuffers::Table*>(c)->GetAddressOf(fb::Chunk::VT_NODE_COUNT);
    ASSERT_NE(field, nullptr);
    uint32_t huge = 1u << 20;
    std::memcpy(base + (field - base), &huge, sizeof(huge));
    std::string bad = TempPath("bad.fb");
    std::ofstream(bad, std::ios::binary) << edited;
    error.clear();
    EXPECT_EQ(stream(bad, &error), k);
    EXPECT_NE(error.find(at), std::string::npos) << error;
    auto sum = CheckTrace(bad);
    ASSERT_FALSE(sum.ok());
    EXPECT_NE(sum.status().message().find(at), std::string::npos) << sum.status().message();
  }
}

TEST(CheckTest, MissingFileIsAnIoError) {
  auto sum = CheckTrace(TempPath("does-not-exist.fb"));
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), Code::kIoError);
  EXPECT_NE(sum.status().message().find("does-not-exist.fb"), std::string::npos);
}

}  // namespace
}  // namespace irt
