// CheckTrace (irt/check.h): the summary of a valid trace, and the first
// violation of a truncated, incomplete or missing one.
#include "irt/check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "irt/writer.h"
#include "test_util.h"

namespace irt {
namespace {

using testing::TempPath;
using testing::WriteSeedF;
using testing::WriteTrace;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

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

TEST(CheckTest, MissingFileIsAnIoError) {
  auto sum = CheckTrace(TempPath("does-not-exist.fb"));
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), Code::kIoError);
  EXPECT_NE(sum.status().message().find("does-not-exist.fb"), std::string::npos);
}

}  // namespace
}  // namespace irt
