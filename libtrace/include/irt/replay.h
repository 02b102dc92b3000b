// Incremental re-evaluation of a recorded computation. Given changes to the
// values of some nodes (arguments of the root or of any call, or any node
// with a value), the recorded primitive operations of their forward slice
// are evaluated again, from the trace alone (irt/eval.h), and everything
// else is copied: chunks without a changed node are copied byte for byte,
// the others are rebuilt with the new values. Random draws keep their
// recorded values (replay conditions on the recorded randomness).
//
// Every branch decision inside the re-evaluated slice is checked: a
// recorded jump whose condition changed, and a conditional branch that was
// not taken before the recorded one in its block (found in the callee's
// control-flow facts, schema/README.md §7.1) whose condition changed. If one would now go the
// other way, the trace cannot be replayed past it: that is a divergence,
// reported with the node's path and the old and new condition values.
#ifndef IRT_REPLAY_H_
#define IRT_REPLAY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "irt/eval.h"
#include "irt/output.h"
#include "irt/status.h"
#include "irt/trace.h"
#include "irt/value.h"

namespace irt {

/// One requested change: the node at `path` ("@8/@2", as irt-print numbers
/// nodes) takes `value`.
struct ReplayChange {
  std::string path;
  Value value;
};

/// Parses "@PATH=VALUE"; VALUE is a literal or @FILE.npy
/// (irt::ParseValueArgument).
/// Errors: kUsage; ReadNpy's for a file that cannot be read.
Result<ReplayChange> ParseReplayChange(std::string_view spec);

struct ReplayOptions {
  /// Primitive implementations; nullptr means PrimitiveTable::Builtins().
  const PrimitiveTable* primitives = nullptr;
  /// On a divergence, produce the valid prefix: the nodes before the
  /// diverging one, with their new values, as an unfinished trace (no final
  /// chunk; readers take it with OpenOptions::allow_partial).
  bool prefix = false;
};

/// Why the replay cannot continue past a node.
struct ReplayDivergence {
  enum class Kind {
    kBranch,           // a recorded jump would not be taken now
    kNotTaken,         // a branch not taken before the recorded one would be taken now
    kFailure,          // a re-evaluated primitive fails now (the program would stop there)
    kRecordedFailure,  // a statement that failed when recorded would not fail now
  };
  Kind kind = Kind::kBranch;
  NodeId node = kNoNode;  // the first node that is no longer valid
  std::string path;       // its path, "@8/@6"
  std::string branch;     // the branch in IR terms: "§1:&1 (br 2 unless %5)"
  NodeId condition = kNoNode;
  std::string condition_path;
  Value old_value, new_value;  // of the condition
  /// One line: "@8/@6: ... would now go the other way: @8/@5 was true, is now false".
  std::string message;
};

struct ReplayResult {
  /// Nodes whose value changed (the changed nodes themselves included), and
  /// recorded failures whose message changed (a failed statement that fails
  /// again, differently), ascending. Empty when the replay diverged without
  /// `prefix`.
  std::vector<NodeId> changed;
  /// Nodes whose value was computed again (primitives evaluated, arguments
  /// and returns passed on).
  uint64_t evaluated = 0;
  /// Nodes looked at: from the first changed node to the end (or the divergence).
  uint64_t visited = 0;
  uint64_t nodes = 0;  // in the trace
  /// Chunks rebuilt, of all.
  uint64_t chunks_rebuilt = 0, chunks = 0;
  std::optional<ReplayDivergence> divergence;
  /// Things the replay could not check (e.g. a callee without control-flow
  /// facts, so untaken branches of its blocks were not checked).
  std::vector<std::string> warnings;
};

/// A replay of one trace: the result and the new trace's chunks.
class Replay {
 public:
  /// Resolves and checks the changes (kUsage: a path that does not
  /// exist, a nested call, a jump or a return, a value of another type than
  /// the recorded one, a node set twice), then re-evaluates. Errors:
  /// kUnsupported when a node of the slice has an operation the primitive
  /// table does not know (such as a call recorded without its body);
  /// kDataError for a malformed trace. `trace` must outlive the Replay.
  static Result<Replay> Run(const Trace& trace, std::span<const ReplayChange> changes,
                            const ReplayOptions& options = {});
  /// Same, with changes already resolved to node ids.
  static Result<Replay> RunOnNodes(const Trace& trace,
                                   std::span<const std::pair<NodeId, Value>> changes,
                                   const ReplayOptions& options = {});

  Replay(Replay&&) noexcept;
  Replay& operator=(Replay&&) noexcept;
  ~Replay();

  const ReplayResult& result() const;
  /// Whether there is a new trace to write: no divergence, or a prefix.
  bool has_output() const;
  /// Streams the new trace: unchanged chunks copied, changed ones rebuilt.
  /// kInvalidArgument if !has_output().
  Status Write(Output& out) const;
  /// The new trace as one byte string.
  Result<std::vector<uint8_t>> Bytes() const;

 private:
  Replay();
  static Result<Replay> RunImpl(const Trace& trace,
                                std::span<const std::pair<NodeId, Value>> changes,
                                const ReplayOptions& options, const std::vector<NodeId>* open);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A trace held in memory and updated in place by replays, for programs
/// that change a trace repeatedly (an MCMC move, a parameter sweep) and
/// query it in between.
class MutableTrace {
 public:
  /// Reads `path` ("-": standard input) into memory.
  static Result<MutableTrace> Open(const std::string& path);
  static Result<MutableTrace> FromBytes(std::vector<uint8_t> bytes, std::string name);

  MutableTrace(MutableTrace&&) noexcept;
  MutableTrace& operator=(MutableTrace&&) noexcept;
  ~MutableTrace();

  /// The current trace (valid until the next Update).
  const Trace& trace() const;
  const std::vector<uint8_t>& bytes() const;

  /// Applies `changes` and re-evaluates their forward slice in place. On a
  /// divergence the trace is left unchanged (or, with options.prefix,
  /// replaced by the valid prefix) and the result says where.
  Result<ReplayResult> Update(std::span<const ReplayChange> changes,
                              const ReplayOptions& options = {});
  Result<ReplayResult> UpdateNodes(std::span<const std::pair<NodeId, Value>> changes,
                                   const ReplayOptions& options = {});

 private:
  MutableTrace();
  Status Adopt(std::vector<uint8_t> bytes, bool partial);
  std::string name_;
  std::unique_ptr<std::vector<uint8_t>> bytes_;
  std::unique_ptr<Trace> trace_;
};

}  // namespace irt

#endif  // IRT_REPLAY_H_
