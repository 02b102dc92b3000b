// Progress counting: what the writer, Trace and ChunkStream count, and when
// a subclass is polled.
#include "irt/progress.h"

#include <gtest/gtest.h>

#include "irt/check.h"
#include "irt/trace.h"
#include "irt/writer.h"
#include "test_util.h"

namespace irt {
namespace {

// Records the node counts at which it was polled; polls again `every` nodes on.
class Recorder : public Progress {
 public:
  explicit Recorder(uint64_t every) : every_(every) { PollAt(0); }
  std::vector<uint64_t> polls;

 protected:
  void OnPoll() override {
    polls.push_back(nodes());
    PollAt(nodes() + every_);
  }

 private:
  uint64_t every_;
};

// f(x) in chunks of (at most) two nodes.
std::string SmallChunks(const std::string& name, Progress* progress) {
  WriterOptions opts;
  opts.chunk_nodes = 2;
  opts.progress = progress;
  return testing::WriteTrace(name, testing::WriteSeedF, opts);
}

TEST(ProgressTest, PlainProgressCountsAndNeverPolls) {
  Progress p;
  EXPECT_LT(p.fraction(), 0);
  p.AddTotal(10);
  p.Add(4, 100);
  EXPECT_EQ(p.nodes(), 4u);
  EXPECT_EQ(p.bytes(), 100u);
  EXPECT_DOUBLE_EQ(p.fraction(), 0.4);
  p.AddTotal(0, 1000);  // a total of bytes takes precedence
  EXPECT_DOUBLE_EQ(p.fraction(), 0.1);
  p.Add(10, 2000);
  EXPECT_DOUBLE_EQ(p.fraction(), 1.0);
}

TEST(ProgressTest, PollsWhenTheMarkIsReached) {
  Recorder r(5);
  for (int i = 0; i < 12; ++i) r.Add(1);
  EXPECT_EQ(r.polls, (std::vector<uint64_t>{1, 6, 11}));
}

TEST(ProgressTest, WriterCountsEachChunkWritten) {
  Recorder r(1);
  std::string path = SmallChunks("progress-writer.fb", &r);
  EXPECT_EQ(r.nodes(), 6u);
  EXPECT_EQ(r.bytes(), testing::ReadFile(path).size());
  EXPECT_EQ(r.polls, (std::vector<uint64_t>{2, 4, 6}));
  EXPECT_EQ(r.total_nodes(), 0u);
}

TEST(ProgressTest, TraceCountsChunksAsTheyAreVerified) {
  std::string path = SmallChunks("progress-trace.fb", nullptr);
  Progress p;
  auto t = Trace::Open(path, {.progress = &p});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->progress(), &p);
  EXPECT_EQ(p.total_nodes(), 6u);
  ASSERT_GE(t->chunks().size(), 3u);
  uint64_t last = t->chunks().back().num_nodes;
  EXPECT_EQ(p.nodes(), last);  // Open verifies the final chunk only
  ASSERT_TRUE(t->node(0).ok());
  EXPECT_EQ(p.nodes(), last + 2);
  ASSERT_TRUE(t->node(1).ok());  // the same chunk: counted once
  EXPECT_EQ(p.nodes(), last + 2);
  for (NodeId id = 0; id < t->size(); ++id) ASSERT_TRUE(t->node(id).ok());
  EXPECT_EQ(p.nodes(), 6u);
  EXPECT_DOUBLE_EQ(p.fraction(), 1.0);
}

TEST(ProgressTest, CheckCountsTheFileRead) {
  std::string path = SmallChunks("progress-check.fb", nullptr);
  Progress p;
  auto sum = CheckTrace(path, &p);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(p.nodes(), 6u);
  EXPECT_EQ(p.total_bytes(), testing::ReadFile(path).size());
  EXPECT_EQ(p.bytes(), p.total_bytes());
  EXPECT_DOUBLE_EQ(p.fraction(), 1.0);
}

TEST(ProgressTest, AStreamCountsItsFileWhenOpened) {
  std::string path = SmallChunks("progress-stream.fb", nullptr);
  uint64_t size = testing::ReadFile(path).size();
  Progress p;
  auto first = ChunkStream::Open(path, &p);
  auto second = ChunkStream::Open(path, &p);  // a second pass over the same file
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(p.total_bytes(), 2 * size);
  EXPECT_EQ(p.bytes(), 0u);
  for (ChunkStream* s : {&*first, &*second}) {
    for (;;) {
      auto c = s->Next();
      ASSERT_TRUE(c.ok()) << c.status().message();
      if (*c == nullptr) break;
    }
  }
  EXPECT_EQ(p.bytes(), 2 * size);
  EXPECT_EQ(p.nodes(), 12u);
}

}  // namespace
}  // namespace irt
