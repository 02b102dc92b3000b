#include "io/tempfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace irt::internal {

namespace {

// Live temporaries, for the signal handler: fixed storage (no allocation in
// the handler), a slot is published by setting `used` after its name is
// written and retired by clearing it before the name can change.
constexpr int kSlots = 16;
struct Slot {
  std::atomic<bool> used{false};
  char path[PATH_MAX] = {};  // constant: no start-up code touches the 64 KiB
};
Slot g_slots[kSlots];
std::mutex g_slots_mutex;  // writers only; the handler reads lock-free
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGABRT};

void RemoveTempsAndReraise(int sig) {
  for (Slot& s : g_slots) {
    if (s.used.load(std::memory_order_acquire)) unlink(s.path);  // async-signal-safe
  }
  // Die of the same signal, so the parent sees what happened.
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallHandlersOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kSignals) {
      struct sigaction old;
      if (sigaction(sig, nullptr, &old) != 0) continue;
      // A signal the caller ignores (nohup, a shell's background job) stays
      // ignored.
      if (old.sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_handler = RemoveTempsAndReraise;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESETHAND;
      sigaction(sig, &sa, nullptr);
    }
  });
}

bool Register(const std::string& path) {
  if (path.size() >= PATH_MAX) return false;
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (Slot& s : g_slots) {
    if (s.used.load(std::memory_order_relaxed)) continue;
    memcpy(s.path, path.c_str(), path.size() + 1);
    s.used.store(true, std::memory_order_release);
    return true;
  }
  return false;  // more live outputs than slots: that one is not cleaned up
}

}  // namespace

Result<int> CreateSpoolFile(const std::string& purpose) {
  const char* dir = getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/irtrace-XXXXXX";
  int fd = mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) {
    return IoError("cannot create a temporary file for " + purpose + ": " + strerror(errno));
  }
  unlink(tmpl.c_str());
  return fd;
}

int WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

Result<int> CreateTempNextTo(const std::string& path, std::string* tmp_path) {
  InstallHandlersOnce();
  std::string tmpl = path + ".tmpXXXXXX";
  // Signals wait until the name is registered, so that none can strike
  // between the creation and the registration.
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : kSignals) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  int fd = mkostemp(tmpl.data(), O_CLOEXEC);
  int e = errno;
  if (fd >= 0) Register(tmpl);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (fd < 0) return IoError("'" + path + "': cannot create: " + strerror(e));
  // mkstemp creates 0600; give the file the permissions a plain create would.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  *tmp_path = tmpl;
  return fd;
}

void UnregisterTemp(const std::string& tmp_path) {
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (Slot& s : g_slots) {
    if (s.used.load(std::memory_order_relaxed) && tmp_path == s.path) {
      s.used.store(false, std::memory_order_release);
      return;
    }
  }
}

}  // namespace irt::internal
