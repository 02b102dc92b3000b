// The reader's two per-node costs on a stored trace: unpacking a format-2
// chunk's packed node column into the node and reference columns, and
// checking every node of it (the checker's node pass, internal::CheckNodes),
// one chunk after the other on one core, as each of irt-grad's two threads
// does ahead of its forward pass (the reverse sweep unpacks every chunk
// once more). Prints the best of --runs passes over every chunk, one figure
// per line:
//
//   irt-decode-bench [--runs N] TRACE...
//
// Every chunk is verified once first (internal::VerifyChunk), so that the
// passes measured run on checked tables; a pass reuses one pair of column
// buffers from chunk to chunk, as irt-grad's transient columns do.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "io/chunk.h"

namespace {

using irt::internal::ChunkFacts;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "irt-decode-bench: %s\n", what.c_str());
  return 1;
}

int Usage() {
  std::fprintf(stderr, "usage: irt-decode-bench [--runs N] TRACE...\n");
  return 2;
}

struct Chunk {
  const irt::fb::Chunk* root;
  std::unique_ptr<ChunkFacts> facts;
};

int Bench(const std::string& path, int runs) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Fail(path + (ec ? ": cannot open: " + ec.message() : ": not a regular file"));
  }
  const uint64_t size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) return Fail(path + ": cannot open");
  // Read once, straight into 8-byte aligned memory (trace bytes must be).
  std::vector<uint64_t> words(size / 8 + 1);
  if (!in.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(size))) {
    return Fail(path + ": cannot read");
  }
  const uint8_t* data = reinterpret_cast<const uint8_t*>(words.data());
  std::vector<Chunk> chunks;
  uint64_t off = 0;
  irt::NodeId nodes = 0;
  uint64_t packed = 0;
  irt::NodeId packed_nodes = 0;
  while (off < size) {
    uint64_t len = 0, need = 0;
    irt::internal::ChunkHeader h;
    irt::Status s = irt::internal::FrameChunk(data + off, size - off, /*ended=*/true, off,
                                              chunks.size(), nodes, &len, &h, &need);
    if (!s.ok()) return Fail(path + ": " + s.message());
    auto facts = std::make_unique<ChunkFacts>();
    facts->transient = true;  // decoded into its own buffers, as irt-grad's are
    s = irt::internal::VerifyChunk(data + off, 4 + len, facts.get());
    if (!s.ok())
      return Fail(path + ": chunk " + std::to_string(chunks.size()) + ": " + s.message());
    if (facts->packed) {
      ++packed;
      packed_nodes += h.num_nodes;
    }
    chunks.push_back({irt::fb::GetSizePrefixedChunk(data + off), std::move(facts)});
    nodes += h.num_nodes;
    off += 4 + len;
  }
  if (nodes == 0) return Fail(path + ": no nodes");
  double unpack = 1e30, check = 1e30;
  for (int r = 0; r < runs; ++r) {
    double u = 0, c = 0;
    ChunkFacts* prev = nullptr;
    for (Chunk& ch : chunks) {
      ChunkFacts& f = *ch.facts;
      if (prev != nullptr && f.packed) {
        f.columns = std::move(prev->columns);
      }
      double t0 = Now();
      if (f.packed) {
        irt::Status s = irt::internal::RedecodeChunk(ch.root, &f);
        if (!s.ok()) return Fail(path + ": " + s.message());
      }
      double t1 = Now();
      irt::Status s = irt::internal::CheckNodes(ch.root, &f);
      if (!s.ok()) return Fail(path + ": " + s.message());
      double t2 = Now();
      u += t1 - t0;
      c += t2 - t1;
      if (f.packed) prev = &f;
    }
    unpack = std::min(unpack, u);
    check = std::min(check, c);
  }
  const char* p = path.c_str();
  std::printf("%s nodes %llu\n", p, static_cast<unsigned long long>(nodes));
  std::printf("%s chunks %zu (%llu packed)\n", p, chunks.size(),
              static_cast<unsigned long long>(packed));
  if (packed != 0) {
    std::printf("%s unpack %.3f ms  %.2f ns/node\n", p, unpack * 1e3,
                unpack * 1e9 / static_cast<double>(packed_nodes));
  }
  std::printf("%s check %.3f ms  %.2f ns/node\n", p, check * 1e3,
              check * 1e9 / static_cast<double>(nodes));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
      if (runs < 1) return Usage();
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return Usage();
    } else {
      paths.push_back(argv[i]);
    }
  }
  if (paths.empty()) return Usage();
  for (const std::string& path : paths) {
    int rc = Bench(path, runs);
    if (rc != 0) return rc;
  }
  return 0;
}
