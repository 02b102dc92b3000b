// What every irt-* tool shares: option parsing with CLI11 (-h/--help,
// --version, -q, -v, --color), diagnostics on stderr through spdlog
// ("irt-print: error: ..."), exit codes (0 ok, 1 failure, 2 usage), the
// stdin/terminal rules, atomic output files and the progress line of long
// work (--no-progress).
//
// CLI11 is header-only and its templates are heavy: only cli.cc includes
// it, and the tools declare their options through Cli::AddOption and
// Cli::AddFlag, so that each tool's main compiles in seconds.
#ifndef IRT_TOOLS_COMMON_CLI_H_
#define IRT_TOOLS_COMMON_CLI_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "irt/output.h"
#include "irt/progress.h"
#include "irt/status.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace spdlog {
class logger;
}

namespace irt::tools {

class TerminalProgress;

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// An option or flag a tool declared; its settings chain, as CLI11's do.
class Opt {
 public:
  explicit Opt(CLI::Option* option) : option_(option) {}
  /// The name of its value in --help ("N", "FILE").
  Opt& TypeName(const std::string& name);
  Opt& Required();
  /// Only one of these values.
  Opt& OneOf(const std::vector<std::string>& values);
  Opt& OneOf(std::initializer_list<int> values);
  /// Decimal digits only, so that "-1" is an error rather than a huge
  /// unsigned number.
  Opt& Count();
  /// One value per occurrence, as often as given (all are kept), so that
  /// positional arguments may follow it.
  Opt& Repeatable();
  /// Not together with `other` (either way round).
  Opt& Excludes(Opt other);
  /// Whether it was on the command line.
  bool given() const;

 private:
  CLI::Option* option_;
};

class Cli {
 public:
  /// `name` is the tool's constant name (never argv[0]).
  Cli(std::string name, std::string description);
  ~Cli();
  const std::string& name() const { return name_; }

  /// Declares an option (names as CLI11's: "-l,--levels", or "input" for a
  /// positional argument) that stores its value in `target`.
  Opt AddOption(const std::string& names, std::string& target, const std::string& help);
  Opt AddOption(const std::string& names, std::vector<std::string>& target,
                const std::string& help);
  Opt AddOption(const std::string& names, double& target, const std::string& help);
  Opt AddOption(const std::string& names, int64_t& target, const std::string& help);
  Opt AddOption(const std::string& names, uint64_t& target, const std::string& help);
  Opt AddOption(const std::string& names, uint32_t& target, const std::string& help);
  Opt AddOption(const std::string& names, uint16_t& target, const std::string& help);
  /// Declares a flag that sets `target` when given.
  Opt AddFlag(const std::string& names, bool& target, const std::string& help);

  /// Parses, initialises logging, runs `body` and maps its Status to an exit
  /// code: ok -> 0, kUsage (and a command line CLI11 rejects) -> 2, anything
  /// else -> 1. When an output of OpenOutput() lost its reader (EPIPE, as
  /// with `| head`), the error is not reported: a quiet exit 1.
  int Run(int argc, char** argv, const std::function<Status()>& body);
  /// Same, for tools with exit codes of their own: `body` returns the exit
  /// code, or an error Status mapped as above, except that errors other than
  /// usage errors exit `trouble_code` instead of 1. irt-diff keeps diff(1)'s
  /// codes (0 same, 1 different, 2 trouble: usage errors included).
  int RunWithCode(int argc, char** argv, const std::function<Result<int>()>& body,
                  int trouble_code = kExitFailure);

  /// Usage error when `path` is "-" and stdin is an interactive terminal.
  Status CheckInput(const std::string& path) const;
  /// Opens "-" (stdout) or a file written atomically. Binary output to a
  /// terminal is refused unless --force was given (tools that write binary
  /// call AddForceOption()). The Cli owns the output until Run() returns, so
  /// that it can tell a reader that went away from a failure; an output not
  /// committed by then is removed.
  Result<Output*> OpenOutput(const std::string& path, bool binary);
  /// Adds the positional trace input of a tool that reads one trace (it
  /// stays "-", standard input, when absent).
  void AddTraceInput(std::string* path);
  /// Adds -o/--output FILE (OpenOutput writes it atomically), with its
  /// common help text unless `help` is given.
  void AddOutputOption(std::string* path, const std::string& help = "");
  /// Adds -f/--force (write binary to a terminal).
  void AddForceOption();
  /// Adds --no-progress, for tools whose work can take long: they pass
  /// progress() to libtrace (OpenOptions, CheckTrace, WriterOptions).
  void AddProgressOption();
  /// The progress line (common/progress.h) while Run's body runs, when the
  /// tool called AddProgressOption(), stderr is a terminal, TERM is not
  /// "dumb" and neither -q nor --no-progress was given; nullptr otherwise.
  Progress* progress() const;
  /// Whether stdout output may use colour: --color=always/never/auto; auto
  /// means stdout is a terminal, TERM is not "dumb" and NO_COLOR is unset or empty.
  bool StdoutColor() const;
  /// Whether -q was given: tools print errors only (no summaries).
  bool quiet() const { return quiet_; }
  /// The logger; using it erases the progress line first, so that a
  /// message never shares a line with it. Tools pass it whole messages
  /// (fmt::format them first): spdlog's formatting overloads are templates
  /// that cost each main seconds of compile time.
  spdlog::logger& log() const;

 private:
  void InitLogging();
  std::string name_;
  std::unique_ptr<CLI::App> app_;
  int verbose_ = 0;
  bool quiet_ = false;
  bool force_ = false;
  bool progress_option_ = false;
  bool no_progress_ = false;
  std::unique_ptr<TerminalProgress> progress_;
  std::string color_ = "auto";
  std::shared_ptr<spdlog::logger> log_;
  std::vector<std::unique_ptr<Output>> outputs_;
};

/// Whether output to file descriptor `fd` may use colour under --color=`mode`.
bool ColorAllowed(int fd, const std::string& mode);

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
