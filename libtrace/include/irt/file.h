// Reading the small text inputs of the tools (IR modules, derivative rule
// files) whole, with a size cap, so that a device or a pipe named where a file
// is expected ("/dev/zero", "/dev/urandom") is refused instead of read until
// memory runs out.
#ifndef IRT_FILE_H_
#define IRT_FILE_H_

#include <cstddef>
#include <string>

#include "irt/status.h"

namespace irt {

/// The largest text file ReadTextFile accepts by default: 64 MiB, far beyond
/// any IR module or rule file.
inline constexpr size_t kMaxTextFileBytes = size_t{64} << 20;

/// Returns the contents of the regular file at `path`. Refuses, without
/// reading it, anything that is not a regular file (directories, devices,
/// FIFOs, sockets: kIoError "'PATH': is a directory" / "'PATH': not a regular
/// file") and a file larger than `max_bytes` (kDataError). "-" is a file
/// name like any other. Errors name the file: "'PATH': cannot open: ...".
Result<std::string> ReadTextFile(const std::string& path, size_t max_bytes = kMaxTextFileBytes);

}  // namespace irt

#endif  // IRT_FILE_H_
