// What every irt-* tool shares: option parsing with CLI11 (-h/--help,
// --version, -q, -v, --color), diagnostics on stderr through spdlog
// ("irt-print: error: ..."), exit codes (0 ok, 1 failure, 2 usage), the
// stdin/terminal rules and atomic output files.
#ifndef IRT_TOOLS_COMMON_CLI_H_
#define IRT_TOOLS_COMMON_CLI_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "irt/output.h"
#include "irt/status.h"

namespace spdlog {
class logger;
}

namespace irt::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

class Cli {
 public:
  /// `name` is the tool's constant name (never argv[0]).
  Cli(std::string name, std::string description);
  ~Cli();
  CLI::App& app() { return app_; }
  const std::string& name() const { return name_; }

  /// Parses, initialises logging, runs `body` and maps its Status to an exit
  /// code: ok -> 0, kUsage -> 2, anything else -> 1. A
  /// broken pipe on stdout is a quiet exit 1.
  int Run(int argc, char** argv, const std::function<Status()>& body);
  /// Same, for tools with exit codes of their own (irt-diff): `body` returns
  /// the exit code, or an error Status mapped as above (with `trouble_code`
  /// used instead of 1).
  int RunWithCode(int argc, char** argv, const std::function<Result<int>()>& body,
                  int trouble_code = kExitFailure);

  /// Usage error when `path` is "-" and stdin is an interactive terminal.
  Status CheckInput(const std::string& path) const;
  /// Opens "-" (stdout) or a file written atomically. Binary output to a
  /// terminal is refused unless --force was given (tools that write binary
  /// call AddForceOption()).
  Result<std::unique_ptr<Output>> OpenOutput(const std::string& path, bool binary) const;
  /// Adds -f/--force (write binary to a terminal).
  void AddForceOption();
  /// Whether stdout output may use colour: --color=always/never/auto; auto
  /// means stdout is a terminal, TERM is not "dumb" and NO_COLOR is unset or empty.
  bool StdoutColor() const;
  /// Whether -q was given: tools print errors only (no summaries).
  bool quiet() const { return quiet_; }
  spdlog::logger& log() const { return *log_; }

 private:
  void InitLogging();
  std::string name_;
  CLI::App app_;
  int verbose_ = 0;
  bool quiet_ = false;
  bool force_ = false;
  std::string color_ = "auto";
  std::shared_ptr<spdlog::logger> log_;
};

/// "no" / "yes" for colour decisions on a file descriptor.
bool ColorAllowed(int fd, const std::string& mode);

/// A check for count options: decimal digits only, so that "-1" is an error
/// rather than a huge unsigned number.
CLI::Validator Count();

/// An error of an analysis of the trace named `name` ("'h.fb'"), prefixed
/// with that name unless it already starts with it; usage errors as they are.
template <typename T>
Result<T> InTrace(const std::string& name, Result<T> r) {
  if (r.ok() || r.status().code() == Code::kUsage || r.status().message().starts_with(name)) {
    return r;
  }
  return r.status().Prefixed(name);
}

}  // namespace irt::tools

#endif  // IRT_TOOLS_COMMON_CLI_H_
