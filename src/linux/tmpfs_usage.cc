// See tmpfs_usage.h.
#include "linux/tmpfs_usage.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdio>

namespace cage::lx {

namespace {

struct Record {
  uint32_t index;  // the MountStep
  uint32_t full;
  uint64_t size, used;
};
constexpr uint32_t kSandboxEmpty = 0xffffffff;  // an index no plan has

void write_all(int out_fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(out_fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the supervisor is gone: nobody to tell
    p += w, n -= static_cast<size_t>(w);
  }
}

}  // namespace

void open_sized_tmpfs(const Plan& plan, int* fds) {
  for (size_t i = 0; i < plan.mounts.size(); ++i) {
    const MountStep& m = plan.mounts[i];
    fds[i] = -1;
    if (m.size_bytes == 0) continue;
    char path[4096];
    std::snprintf(path, sizeof path, "%s%s", m.target.c_str(), m.kind == MountKind::dev ? "/shm" : "");
    struct open_how how {};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
    struct statfs st {};
    if (fd >= 0 && ::fstatfs(fd, &st) == 0 && st.f_type == TMPFS_MAGIC) fds[i] = fd;
    else if (fd >= 0) ::close(fd);
  }
}

void send_exit_report(const Plan& plan, const int* fds, int status, bool empty, int out_fd) {
  char buf[PIPE_BUF] = {};  // a write of at most PIPE_BUF bytes reaches the pipe whole
  size_t used = 0;
  auto add = [&](const void* p, size_t n) {
    if (used + n > sizeof buf) {
      write_all(out_fd, buf, used);
      used = 0;
    }
    std::memcpy(buf + used, p, n);
    used += n;
  };
  add(&status, sizeof status);
  for (size_t i = 0; fds && i < plan.mounts.size(); ++i) {
    struct statfs st {};
    if (fds[i] < 0 || ::fstatfs(fds[i], &st) != 0) continue;
    const uint64_t bsize = static_cast<uint64_t>(st.f_bsize);
    const uint64_t size = st.f_blocks * bsize, free = st.f_bfree * bsize;
    const uint64_t slack = std::max<uint64_t>(std::min<uint64_t>(size / 100, 1 << 20), 1);
    const Record r{static_cast<uint32_t>(i), free < slack || (st.f_files != 0 && st.f_ffree == 0), size, size - free};
    add(&r, sizeof r);
  }
  if (empty) {
    const Record r{kSandboxEmpty, 0, 0, 0};
    add(&r, sizeof r);
  }
  write_all(out_fd, buf, used);
}

std::vector<TmpfsUsage> read_tmpfs_usage(const Plan& plan, int in_fd, bool* empty) {
  std::vector<TmpfsUsage> out;
  Record r{};
  while (::read(in_fd, &r, sizeof r) == static_cast<ssize_t>(sizeof r)) {
    if (r.index == kSandboxEmpty && empty) *empty = true;
    if (r.index >= plan.mounts.size()) break;
    const MountStep& m = plan.mounts[r.index];
    out.push_back(TmpfsUsage{m.kind == MountKind::dev ? m.target + "/shm" : m.target, static_cast<int64_t>(r.size),
                             static_cast<int64_t>(r.used), r.full != 0});
  }
  return out;
}

}  // namespace cage::lx
