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
#include <cstdio>

namespace cage::lx {

namespace {

struct Record {
  uint32_t index;  // the MountStep
  uint32_t full;
  uint64_t size, used;
};
constexpr uint32_t kSandboxEmpty = 0xffffffff;  // an index no plan has

void write_record(int out_fd, const Record& r) {
  ssize_t n;
  do n = ::write(out_fd, &r, sizeof r);
  while (n < 0 && errno == EINTR);
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

void send_tmpfs_usage(const Plan& plan, const int* fds, int out_fd) {
  for (size_t i = 0; i < plan.mounts.size(); ++i) {
    struct statfs st {};
    if (fds[i] < 0 || ::fstatfs(fds[i], &st) != 0) continue;
    const uint64_t bsize = static_cast<uint64_t>(st.f_bsize);
    const uint64_t size = st.f_blocks * bsize, free = st.f_bfree * bsize;
    const uint64_t slack = std::max<uint64_t>(std::min<uint64_t>(size / 100, 1 << 20), 1);
    write_record(out_fd, Record{static_cast<uint32_t>(i), free < slack || (st.f_files != 0 && st.f_ffree == 0),
                                size, size - free});
  }
}

void send_sandbox_empty(int out_fd) { write_record(out_fd, Record{kSandboxEmpty, 0, 0, 0}); }

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
