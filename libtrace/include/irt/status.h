// Errors as values: Status and Result<T>, mirroring std::expected so that a
// move to C++23 is mechanical. Nothing in libtrace throws across its API.
#ifndef IRT_STATUS_H_
#define IRT_STATUS_H_

#include <string>
#include <utility>
#include <variant>

namespace irt {

enum class Code {
  kOk = 0,
  kUsage,            // the command line asked for something malformed (exit status 2)
  kInvalidArgument,  // a value an operation cannot take (data: exit status 1)
  kNotFound,         // a path, node or name that does not exist
  kDataError,        // the input is malformed, truncated or inconsistent
  kUnsupported,      // a newer format, an unknown kind of value
  kIoError,          // the operating system refused
  kRuntimeError,     // the traced program failed
  kInternal,
};

/// A code and a one-line, lower-case message that says what and where.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  /// Returns a copy whose message is "prefix: message".
  Status Prefixed(const std::string& prefix) const {
    return ok() ? *this : Status(code_, prefix + ": " + message_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status UsageError(std::string m) { return {Code::kUsage, std::move(m)}; }
inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status DataError(std::string m) { return {Code::kDataError, std::move(m)}; }
inline Status Unsupported(std::string m) { return {Code::kUnsupported, std::move(m)}; }
inline Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
inline Status RuntimeError(std::string m) { return {Code::kRuntimeError, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }

/// A value or an error Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit like std::expected
  Result(Status status) : v_(std::move(status)) {}  // NOLINT
  bool has_value() const { return v_.index() == 0; }
  bool ok() const { return has_value(); }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  /// The error; Status::Ok() when a value is held.
  Status status() const { return has_value() ? Status() : std::get<1>(v_); }
  const Status& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace irt

#define IRT_CONCAT_INNER_(a, b) a##b
#define IRT_CONCAT_(a, b) IRT_CONCAT_INNER_(a, b)

/// Returns the Status from the enclosing function if it is an error.
#define IRT_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::irt::Status irt_status_ = (expr);        \
    if (!irt_status_.ok()) return irt_status_; \
  } while (0)

#define IRT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.has_value()) return tmp.error();        \
  lhs = std::move(tmp).value()

/// `IRT_ASSIGN_OR_RETURN(auto x, F())` declares x from a Result or returns its error.
#define IRT_ASSIGN_OR_RETURN(lhs, expr) \
  IRT_ASSIGN_OR_RETURN_IMPL_(IRT_CONCAT_(irt_result_, __LINE__), lhs, expr)

#endif  // IRT_STATUS_H_
