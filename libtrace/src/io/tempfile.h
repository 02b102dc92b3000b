// Temporary files, in one place: anonymous spool files in $TMPDIR (unlinked
// as soon as they are created, so nothing is left behind however the process
// ends), and the named temporaries that Output renames into place, which a
// signal handler removes when SIGINT, SIGTERM, SIGHUP or SIGABRT ends the
// process first. Internal to libtrace.
#ifndef IRT_SRC_TEMPFILE_H_
#define IRT_SRC_TEMPFILE_H_

#include <cstddef>
#include <string>

#include "irt/status.h"

namespace irt::internal {

/// Creates a file in $TMPDIR (or /tmp), unlinks it at once and returns its
/// descriptor (read-write, close-on-exec). `purpose` names it in errors
/// ("cannot create a temporary file for PURPOSE: ...").
Result<int> CreateSpoolFile(const std::string& purpose);

/// Writes all n bytes to fd, retrying after EINTR; the errno of a failure.
int WriteAll(int fd, const void* p, size_t n);

/// Creates "<path>.tmpXXXXXX" next to `path` with the permissions a plain
/// create would give, stores its name in *tmp_path and registers it for
/// removal on a fatal signal (UnregisterTemp() when it is renamed or
/// removed). Errors say "'PATH': cannot create: ...".
Result<int> CreateTempNextTo(const std::string& path, std::string* tmp_path);

/// Forgets a temporary registered by CreateTempNextTo (after it has been
/// renamed into place or unlinked).
void UnregisterTemp(const std::string& tmp_path);

}  // namespace irt::internal

#endif  // IRT_SRC_TEMPFILE_H_
