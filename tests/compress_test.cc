// zstd-compressed traces: written through Output to "*.zst", read by Trace
// and ChunkStream as if they were plain, and damaged ones rejected.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "io/bytesource.h"
#include "ir_test_util.h"
#include "irt/output.h"
#include "irt/trace.h"

namespace irt {
namespace {

std::string ReadAll(const std::string& path) { return testing::ReadFile(path); }

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The plain trace of powsum(x, 20000): 160,011 nodes in 3 chunks.
std::string PlainTrace() {
  static const std::string path =
      irt::testing::TraceTestdata("compress", "loop.ir", "powsum", {"0.999", "20000"});
  return path;
}

// Copies `from` through an Output opened at `to` (compressing for "*.zst"),
// in pieces of `piece` bytes.
void CopyThroughOutput(const std::string& from, const std::string& to, size_t piece) {
  std::string bytes = ReadAll(from);
  auto out = Output::Open(to);
  ASSERT_TRUE(out.ok());
  for (size_t at = 0; at < bytes.size(); at += piece) {
    (*out)->Write(bytes.data() + at, std::min(piece, bytes.size() - at));
  }
  ASSERT_TRUE((*out)->Commit().ok());
  EXPECT_TRUE((*out)->compressed());
}

TEST(CompressTest, TraceAndStreamReadACompressedTraceAsThePlainOne) {
  std::string plain = PlainTrace();
  std::string zst = irt::testing::TempPath("powsum.fb.zst");
  CopyThroughOutput(plain, zst, 100000);
  std::string z = ReadAll(zst);
  ASSERT_GE(z.size(), 4u);
  EXPECT_TRUE(internal::IsZstdMagic(reinterpret_cast<const uint8_t*>(z.data())));
  EXPECT_LT(z.size() * 2, ReadAll(plain).size());  // the loop compresses well

  auto a = Trace::Open(plain);
  auto b = Trace::Open(zst);
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().message();
  ASSERT_EQ(a->size(), b->size());
  EXPECT_GT(a->chunks().size(), 1u);
  for (NodeId i = 0; i < a->size(); i += 997) {
    auto x = a->node(i), y = b->node(i);
    ASSERT_TRUE(x.ok() && y.ok());
    EXPECT_EQ(x->bits(), y->bits()) << i;
    EXPECT_EQ(x->kind(), y->kind()) << i;
  }
  auto s = ChunkStream::Open(zst);
  ASSERT_TRUE(s.ok());
  uint64_t chunks = 0;
  for (;;) {
    auto c = s->Next();
    ASSERT_TRUE(c.ok()) << c.status().message();
    if (*c == nullptr) break;
    ++chunks;
  }
  EXPECT_EQ(chunks, a->chunks().size());
  EXPECT_EQ(s->bytes_read(), ReadAll(plain).size());
}

// Small reads, reads across frame boundaries and several frames in a row
// give back exactly the bytes that were compressed.
TEST(CompressTest, ByteSourceReturnsTheExactBytesInAnyPieces) {
  std::string plain = ReadAll(PlainTrace());
  std::string one = irt::testing::TempPath("one.zst");
  std::string two = irt::testing::TempPath("two.zst");
  CopyThroughOutput(PlainTrace(), one, 7);
  // Two frames: the first 1000 bytes, then the rest.
  std::string head = irt::testing::TempPath("head"), tail = irt::testing::TempPath("tail");
  WriteAll(head, plain.substr(0, 1000));
  WriteAll(tail, plain.substr(1000));
  CopyThroughOutput(head, head + ".zst", 1000);
  CopyThroughOutput(tail, tail + ".zst", 1 << 20);
  WriteAll(two, ReadAll(head + ".zst") + ReadAll(tail + ".zst"));

  std::mt19937 rng(5);
  for (const std::string& path : {one, two, PlainTrace()}) {
    int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    internal::ByteSource src(fd);
    std::string got;
    std::vector<char> buf(70000);
    for (;;) {
      size_t n = std::uniform_int_distribution<size_t>(1, buf.size())(rng);
      auto r = src.Read(buf.data(), n);
      ASSERT_TRUE(r.ok()) << r.status().message();
      if (*r == 0) break;
      got.append(buf.data(), *r);
    }
    close(fd);
    EXPECT_EQ(src.compressed(), path != PlainTrace());
    EXPECT_TRUE(got == plain) << path << ": " << got.size() << " bytes, want " << plain.size();
  }
}

TEST(CompressTest, DamagedCompressedTracesAreDataErrors) {
  std::string zst = irt::testing::TempPath("d.fb.zst");
  CopyThroughOutput(PlainTrace(), zst, 1 << 16);
  std::string z = ReadAll(zst);
  // Cut anywhere inside the frame.
  for (size_t cut : {size_t{4}, size_t{20}, z.size() / 3, z.size() - 1}) {
    std::string p = irt::testing::TempPath("cut.zst");
    WriteAll(p, z.substr(0, cut));
    auto t = Trace::Open(p);
    ASSERT_FALSE(t.ok()) << cut;
    EXPECT_EQ(t.status().code(), Code::kDataError) << cut << ": " << t.status().message();
  }
  // Flipped bytes: the frame checksum (or the decoder) notices.
  std::mt19937 rng(11);
  for (int k = 0; k < 20; ++k) {
    std::string b = z;
    size_t at = std::uniform_int_distribution<size_t>(4, b.size() - 1)(rng);
    b[at] = static_cast<char>(b[at] ^ 0x5a);
    std::string p = irt::testing::TempPath("flip.zst");
    WriteAll(p, b);
    auto s = ChunkStream::Open(p);
    ASSERT_TRUE(s.ok());
    Status st = Status::Ok();
    for (;;) {
      auto c = s->Next();
      if (!c.ok()) {
        st = c.status();
        break;
      }
      if (*c == nullptr) break;
    }
    EXPECT_EQ(st.code(), Code::kDataError) << "byte " << at;
  }
}

}  // namespace
}  // namespace irt
