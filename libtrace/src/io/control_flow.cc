#include "io/control_flow.h"

#include <algorithm>
#include <charconv>

#include "io/column_reader.h"
#include "irt/value.h"

namespace irt {

std::string CheckControlFlow(const ControlFlow& facts) {
  if (facts.blocks == 0) return "no blocks (a function has at least one)";
  std::string s = internal::BranchRules::CheckCounts(facts.blocks, facts.branches.size());
  if (!s.empty()) return s;
  internal::BranchRules rules(facts.blocks);
  for (size_t i = 0; i < facts.branches.size(); ++i) {
    s = rules.Next(i, facts.branches[i]);
    if (!s.empty()) return s;
  }
  return "";
}

namespace internal {

namespace {
std::string Count(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}
}  // namespace

std::string BranchRules::CheckCounts(uint32_t blocks, uint64_t n) {
  if (blocks > kMaxControlFlowBlocks) {
    return Count(blocks, "block", "blocks") + ", more than " +
           std::to_string(kMaxControlFlowBlocks);
  }
  if (blocks == 0 && n > 0) return Count(n, "branch", "branches") + " but no blocks";
  if (n > kMaxControlFlowBranches) {
    return Count(n, "branch", "branches") + ", more than " +
           std::to_string(kMaxControlFlowBranches);
  }
  return "";
}

std::string BranchRules::Next(uint64_t i, const BranchFact& b) {
  std::string where = "branch " + std::to_string(i) + " (§" + std::to_string(b.block) + ":&" +
                      std::to_string(b.pos) + "): ";
  if (b.block == 0 || b.block > blocks_) {
    return where + "block out of range (" + Count(blocks_, "block", "blocks") + ")";
  }
  if (b.block < prev_block_) return where + "not sorted by block";
  uint32_t want = b.block == prev_block_ ? prev_pos_ + 1 : 1;
  if (b.pos != want) {
    return where + "position " + std::to_string(b.pos) + " where " + std::to_string(want) +
           " is due (positions count 1, 2, ... in each block)";
  }
  if (b.target > blocks_) {
    return where + "target block " + std::to_string(b.target) + " out of range (" +
           Count(blocks_, "block", "blocks") + ")";
  }
  if (b.is_return() && b.conditional) return where + "a return has no condition";
  if (!b.conditional && (b.condition != 0 || b.taken_when)) {
    return where + "a condition on an unconditional branch";
  }
  prev_block_ = b.block;
  prev_pos_ = b.pos;
  return "";
}

BranchFact DecodeBranch(const fb::Branch& b) {
  BranchFact f;
  f.block = b.block();
  f.pos = b.pos();
  f.target = b.target();
  f.condition = b.cond();
  f.conditional = (b.flags() & 1) != 0;
  f.taken_when = (b.flags() & 2) != 0;
  return f;
}

std::string CheckBranchFlags(const fb::Branch& b) {
  if (b.flags() > 3 || (b.flags() & 3) == 2) {
    return "flags " + std::to_string(b.flags()) + " (bit 0: conditional, bit 1 only with bit 0)";
  }
  return "";
}

uint8_t EncodeBranchFlags(const BranchFact& b) {
  return static_cast<uint8_t>((b.conditional ? 1 : 0) | (b.conditional && b.taken_when ? 2 : 0));
}

// ---------------------------------------------------------------- 1.0 text

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Strips a comment that starts outside a string literal.
std::string_view StripComment(std::string_view s) {
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && quoted) {
      ++i;
    } else if (s[i] == '"') {
      quoted = !quoted;
    } else if (s[i] == '#' && !quoted) {
      return s.substr(0, i);
    }
  }
  return s;
}

// A keyword followed by the end, a blank or (for `return`) a parenthesis.
bool StartsWord(std::string_view line, std::string_view word) {
  if (line.substr(0, word.size()) != word) return false;
  if (line.size() == word.size()) return true;
  char c = line[word.size()];
  return c == ' ' || c == '\t' || c == '(';
}

// Digits at the start of `s` as a number, 0 if there are none or too many.
uint32_t LeadingNumber(std::string_view s) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() ? v : 0;
}

}  // namespace

ControlFlow ParseControlFlowText(std::string_view ir) {
  // Branches by block, in the order the text lists them (a block's header
  // may repeat; its branches then continue its positions).
  std::map<uint32_t, std::vector<BranchFact>> by_block;
  uint32_t block = 0, max_block = 1;
  uint64_t count = 0;
  size_t at = 0;
  while (at < ir.size()) {
    size_t nl = ir.find('\n', at);
    if (nl == std::string_view::npos) nl = ir.size();
    std::string_view line = Trim(StripComment(ir.substr(at, nl - at)));
    at = nl + 1;
    if (line.empty()) continue;
    size_t digits = 0;
    while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') ++digits;
    if (digits > 0 && digits < line.size() && line[digits] == ':') {
      block = LeadingNumber(line);
      if (block > kMaxControlFlowBlocks) block = 0;  // 0: lines outside any block
      if (block > max_block) max_block = block;
      continue;
    }
    if (block == 0 || count >= kMaxControlFlowBranches) continue;
    bool is_br = line.size() >= 2 && line.substr(0, 2) == "br" &&
                 (line.size() == 2 || line[2] == ' ' || line[2] == '\t');
    bool is_return = StartsWord(line, "return");
    if (!is_br && !is_return) continue;
    BranchFact b;
    b.block = block;
    if (is_br) {
      // A target that cannot be read (or names no block the facts may
      // have) is recorded as block 1: only positions and conditions matter
      // to the analyses.
      b.target = LeadingNumber(Trim(line.substr(2)));
      if (b.target == 0 || b.target > kMaxControlFlowBlocks) b.target = 1;
      if (b.target > max_block) max_block = b.target;
      size_t u = line.rfind(" unless ");
      if (u != std::string_view::npos) {
        b.conditional = true;
        b.taken_when = false;
        std::string_view c = Trim(line.substr(u + 8));
        if (c.size() > 1 && c[0] == '%') {
          uint32_t ssa = 0;
          auto [p, ec] = std::from_chars(c.data() + 1, c.data() + c.size(), ssa);
          if (ec == std::errc() && p == c.data() + c.size()) b.condition = ssa;
        }
      }
    }
    std::vector<BranchFact>& list = by_block[block];
    b.pos = static_cast<uint32_t>(list.size() + 1);
    list.push_back(b);
    ++count;
  }
  ControlFlow out;
  out.blocks = max_block;
  out.branches.reserve(count);
  for (auto& [b, list] : by_block) {
    out.branches.insert(out.branches.end(), list.begin(), list.end());
  }
  return out;
}

std::optional<ControlFlow> FactsOfEntry(const fb::Chunk* chunk, const fb::FunctionIR* f) {
  if (f->blocks() > 0) {
    ControlFlow out;
    out.blocks = f->blocks();
    if (f->branches() != nullptr) {
      out.branches.reserve(f->branches()->size());
      for (const fb::Branch* b : *f->branches()) out.branches.push_back(DecodeBranch(*b));
    }
    return out;
  }
  if (chunk->format_major() == 1 && chunk->format_minor() == 0 && f->ir() != nullptr) {
    return ParseControlFlowText(f->ir()->string_view());
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- queries

FunctionFlow::FunctionFlow(ControlFlow facts) : facts_(std::move(facts)) {
  for (const BranchFact& b : facts_.branches) {
    if (b.conditional && b.condition != 0) conds_.push_back(b.condition);
  }
  std::sort(conds_.begin(), conds_.end());
  conds_.erase(std::unique(conds_.begin(), conds_.end()), conds_.end());
}

std::span<const BranchFact> FunctionFlow::Block(uint32_t b) const {
  auto lo = std::lower_bound(facts_.branches.begin(), facts_.branches.end(), b,
                             [](const BranchFact& f, uint32_t v) { return f.block < v; });
  auto hi = lo;
  while (hi != facts_.branches.end() && hi->block == b) ++hi;
  return {lo, hi};
}

bool FunctionFlow::IsCondition(uint32_t ssa) const {
  return std::binary_search(conds_.begin(), conds_.end(), ssa);
}

const FunctionFlow* ControlFlowIndex::Find(std::string_view fn, NodeId marker,
                                           std::string* missing) {
  missing->clear();
  auto it = cache_.find(fn);
  if (it != cache_.end()) return it->second.get();
  std::unique_ptr<FunctionFlow> flow;
  if (t_.size() > 0) {
    int64_t start = t_.chunk_of(std::min<NodeId>(marker, t_.size() - 1));
    for (int64_t i = start; i >= 0 && flow == nullptr; --i) {
      Result<const ChunkColumns*> columns = ColumnsOf(t_, static_cast<uint32_t>(i));
      if (!columns) break;
      const fb::Chunk* c = (*columns)->chunk;
      if (c->functions() == nullptr) continue;
      for (const fb::FunctionIR* f : *c->functions()) {
        if (c->strings()->Get(f->name())->string_view() != fn) continue;
        if (std::optional<ControlFlow> facts = FactsOfEntry(c, f)) {
          flow = std::make_unique<FunctionFlow>(std::move(*facts));
          break;
        }
      }
    }
  }
  if (flow == nullptr) {
    bool v10 = t_.format_major() == 1 && t_.format_minor() == 0;
    *missing = (v10 ? "no IR text for '" : "no control-flow facts for '") + DisplayString(fn) + "'";
  }
  const FunctionFlow* p = flow.get();
  cache_.emplace(std::string(fn), std::move(flow));
  return p;
}

}  // namespace internal
}  // namespace irt
