#include "common/cli.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>

#include "common/progress.h"

namespace irt::tools {

bool ColorAllowed(int fd, const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fd) != 0;
}

Opt& Opt::TypeName(const std::string& name) {
  option_->type_name(name);
  return *this;
}

Opt& Opt::Required() {
  option_->required();
  return *this;
}

Opt& Opt::OneOf(const std::vector<std::string>& values) {
  option_->check(CLI::IsMember(values));
  return *this;
}

Opt& Opt::OneOf(std::initializer_list<int> values) {
  option_->check(CLI::IsMember(values));
  return *this;
}

Opt& Opt::Count() {
  option_->check(CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
          return "expected a non-negative integer, got '" + text + "'";
        }
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size()) {
          return "'" + text + "' is too large";
        }
        return "";
      },
      ""));
  return *this;
}

Opt& Opt::Repeatable() {
  option_->expected(1)->allow_extra_args(false)->multi_option_policy(
      CLI::MultiOptionPolicy::TakeAll);
  return *this;
}

Opt& Opt::Excludes(Opt other) {
  option_->excludes(other.option_);
  return *this;
}

bool Opt::given() const { return option_->count() > 0; }

Cli::Cli(std::string name, std::string description)
    : name_(std::move(name)), app_(std::make_unique<CLI::App>(std::move(description), name_)) {
  app_->set_version_flag("--version", name_ + " (irtrace) " IRT_VERSION);
  app_->add_flag("-q,--quiet", quiet_, "Print errors only");
  app_->add_flag("-v,--verbose", verbose_, "Print more (repeat for debug output)");
  app_->add_option("--color", color_, "Colour: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN");
  app_->footer("See " + name_ + "(1).");
}

Cli::~Cli() = default;

Opt Cli::AddOption(const std::string& names, std::string& target, const std::string& help) {
  return Opt(app_->add_option(names, target, help));
}

Opt Cli::AddOption(const std::string& names, std::vector<std::string>& target,
                   const std::string& help) {
  return Opt(app_->add_option(names, target, help));
}

Opt Cli::AddOption(const std::string& names, double& target, const std::string& help) {
  return Opt(app_->add_option(names, target, help));
}

Opt Cli::AddOption(const std::string& names, int64_t& target, const std::string& help) {
  return Opt(app_->add_option(names, target, help));
}

Opt Cli::AddOption(const std::string& names, uint64_t& target, const std::string& help) {
  return Opt(app_->add_option(names, target, help));
}

Opt Cli::AddOption(const std::string& names, uint32_t& target, const std::string& help) {
  return Opt(app_->add_option(names, target, help));
}

Opt Cli::AddOption(const std::string& names, uint16_t& target, const std::string& help) {
  return Opt(app_->add_option(names, target, help));
}

Opt Cli::AddFlag(const std::string& names, bool& target, const std::string& help) {
  return Opt(app_->add_flag(names, target, help));
}

void Cli::AddTraceInput(std::string* path) {
  app_->add_option("input", *path,
                   "Trace file (plain or zstd-compressed), or '-' for standard input")
      ->type_name("TRACE");
}

void Cli::AddOutputOption(std::string* path, const std::string& help) {
  app_->add_option("-o,--output", *path,
                   help.empty()
                       ? "Write to FILE (atomically) instead of stdout; FILE.zst is zstd-compressed"
                       : help)
      ->type_name("FILE");
}

void Cli::AddForceOption() {
  app_->add_flag("-f,--force", force_, "Write binary output even to a terminal");
}

void Cli::AddProgressOption() {
  progress_option_ = true;
  app_->add_flag("--no-progress", no_progress_,
                 "Do not show a progress line on a terminal (stderr) during long work");
}

Progress* Cli::progress() const { return progress_.get(); }

spdlog::logger& Cli::log() const {
  if (progress_ != nullptr) progress_->Clear();
  return *log_;
}

void Cli::InitLogging() {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
      ColorAllowed(STDERR_FILENO, color_) ? spdlog::color_mode::always : spdlog::color_mode::never);
  log_ = std::make_shared<spdlog::logger>(name_, sink);
  log_->set_pattern("%n: %^%l%$: %v");
  if (quiet_) {
    log_->set_level(spdlog::level::err);
  } else if (verbose_ >= 2) {
    log_->set_level(spdlog::level::debug);
  } else if (verbose_ == 1) {
    log_->set_level(spdlog::level::info);
  } else {
    log_->set_level(spdlog::level::warn);
  }
}

int Cli::Run(int argc, char** argv, const std::function<Status()>& body) {
  return RunWithCode(
      argc, argv,
      [&]() -> Result<int> {
        Status s = body();
        if (!s.ok()) return s;
        return kExitOk;
      },
      kExitFailure);
}

int Cli::RunWithCode(int argc, char** argv, const std::function<Result<int>()>& body,
                     int trouble_code) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app_->help();
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    InitLogging();
    std::string what = e.what();
    if (!what.empty() && what.back() == '\n') what.pop_back();
    log_->error("{}", what);
    log_->error("run '{} --help' for usage", name_);
    return kExitUsage;
  }
  InitLogging();
  if (progress_option_ && !quiet_ && !no_progress_ && isatty(STDERR_FILENO) != 0) {
    const char* term = std::getenv("TERM");
    if (term == nullptr || std::strcmp(term, "dumb") != 0) {
      progress_ = std::make_unique<TerminalProgress>(name_, stderr);
    }
  }
  // The library reports allocation failures it can foresee as a Status; this
  // is the last resort for the rest, so that no input ends in an abort.
  Result<int> r = Internal("unreachable");
  try {
    r = body();
  } catch (const std::bad_alloc&) {
    progress_.reset();
    std::cout.flush();
    outputs_.clear();
    log_->error("out of memory");
    return trouble_code;
  }
  progress_.reset();  // erases the line
  std::cout.flush();
  bool reader_gone = false;
  for (const auto& out : outputs_) reader_gone = reader_gone || out->reader_gone();
  outputs_.clear();  // removes the temporaries of outputs not committed
  if (r.has_value()) return *r;
  // Whatever failed after the reader went away failed because of it, and
  // the reader has what it wanted (gnulib's close_stdout is as quiet).
  if (reader_gone) return trouble_code;
  const Status& s = r.error();
  log_->error("{}", s.message());
  return s.code() == Code::kUsage ? kExitUsage : trouble_code;
}

Status Cli::CheckInput(const std::string& path) const {
  if (path == "-" && isatty(STDIN_FILENO)) {
    return UsageError("standard input is a terminal; give a trace file or pipe one in");
  }
  return Status::Ok();
}

Result<Output*> Cli::OpenOutput(const std::string& path, bool binary) {
  IRT_ASSIGN_OR_RETURN(auto out, Output::Open(path));
  if (binary && !force_ && out->IsTerminal()) {
    return UsageError(
        "refusing to write a binary trace to a terminal; use -o FILE, a pipe, or --force");
  }
  // Text on the terminal that shows the progress line would run into it.
  if (progress_ != nullptr && out->IsTerminal()) progress_->Stop();
  outputs_.push_back(std::move(out));
  return outputs_.back().get();
}

bool Cli::StdoutColor() const { return ColorAllowed(STDOUT_FILENO, color_); }

}  // namespace irt::tools
