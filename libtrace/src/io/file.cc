#include "irt/file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace irt {

Result<std::string> ReadTextFile(const std::string& path, size_t max_bytes) {
  std::string name = "'" + path + "'";
  // O_NONBLOCK: opening a FIFO must not wait for a writer before we refuse it.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return IoError(name + ": cannot open: " + strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) return IoError(name + ": cannot stat: " + strerror(errno));
  if (S_ISDIR(st.st_mode)) return IoError(name + ": is a directory");
  if (!S_ISREG(st.st_mode)) return IoError(name + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return DataError(name + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                     std::to_string(max_bytes) + " a text input may have");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  // The file may grow while it is read: read up to the cap and no further.
  for (;;) {
    if (got == text.size()) {
      if (text.size() > max_bytes) {
        return DataError(name + ": more than the " + std::to_string(max_bytes) +
                         " bytes a text input may have");
      }
      text.resize(std::min(max_bytes + 1, text.size() + 4096));
    }
    ssize_t r = read(fd, text.data() + got, text.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return IoError(name + ": read error: " + strerror(errno));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  text.resize(got);
  return text;
}

}  // namespace irt
