// Mode, timestamp, owner and extended attribute mediation for Mechanism::landlock_only: see
// metadata_notify.h.
#include "linux/metadata_notify.h"

#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "common/unique_fd.h"
#include "linux/workload_access.h"
#include "policy/policy.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

namespace cage::lx::metadata_notify {
namespace {

enum class Op { mode, times, owner, set_xattr, remove_xattr };
enum class Times { none, utimbuf, timeval, timespec };

struct Call {
  int nr;
  Op op;
  int dirfd_arg;   // -1: relative to the cwd
  int path_arg;    // -1: the call names an fd (fchmod)
  int value_arg;   // mode, the pointer to the times, uid (gid follows), or the xattr name (value, size, flags follow)
  int flags_arg;   // -1: none
  Times times = Times::none;
  bool nofollow = false;  // lchown, lsetxattr, lremovexattr
};

// fchmodat2, utimensat and fchownat take AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH; utimensat with a
// NULL path acts on dirfd itself (futimens).
const Call kCalls[] = {
#ifdef SYS_chmod
    {SYS_chmod, Op::mode, -1, 0, 1, -1},
#endif
    {SYS_fchmod, Op::mode, 0, -1, 1, -1},
    {SYS_fchmodat, Op::mode, 0, 1, 2, -1},
    {SYS_fchmodat2, Op::mode, 0, 1, 2, 3},
#ifdef SYS_utime
    {SYS_utime, Op::times, -1, 0, 1, -1, Times::utimbuf},
#endif
#ifdef SYS_utimes
    {SYS_utimes, Op::times, -1, 0, 1, -1, Times::timeval},
#endif
#ifdef SYS_futimesat
    {SYS_futimesat, Op::times, 0, 1, 2, -1, Times::timeval},
#endif
    {SYS_utimensat, Op::times, 0, 1, 2, 3, Times::timespec},
#ifdef SYS_chown
    {SYS_chown, Op::owner, -1, 0, 1, -1},
    {SYS_lchown, Op::owner, -1, 0, 1, -1, Times::none, true},
#endif
    {SYS_fchown, Op::owner, 0, -1, 1, -1},
    {SYS_fchownat, Op::owner, 0, 1, 2, 4},
    {SYS_setxattr, Op::set_xattr, -1, 0, 1, -1},
    {SYS_lsetxattr, Op::set_xattr, -1, 0, 1, -1, Times::none, true},
    {SYS_fsetxattr, Op::set_xattr, 0, -1, 1, -1},
    {SYS_removexattr, Op::remove_xattr, -1, 0, 1, -1},
    {SYS_lremovexattr, Op::remove_xattr, -1, 0, 1, -1, Times::none, true},
    {SYS_fremovexattr, Op::remove_xattr, 0, -1, 1, -1},
};

// Inode flags and attributes are changed by ioctl on any open fd, a read-only one included (the kernel
// asks for ownership, not write access), and Landlock checks no ioctl of a regular file: `chattr
// +d`, nodump/noatime/nocow, a project id or a new inode generation reached every file the user owns.
// The workload's fd is taken (pidfd_getfd, the very open file it holds: no later dup2 can swap it)
// and the change made on it by cage, with the argument copied once, only when that file lies where
// the workload may write. `size` is what the kernel reads (SETFLAGS and SETVERSION read an int,
// whatever their number says). fs-verity and fscrypt carry pointers into the workload's memory:
// cage does not make those on its behalf, anywhere (EPERM); both make a file permanently read-only
// or encrypted, which no sandboxed build needs. With read-only mounts (namespaces) all of these
// fail with EROFS outside --rw already.
struct Ioctl {
  uint32_t cmd;
  uint32_t size;
  bool mediated;
};
const Ioctl kIoctls[] = {
    {FS_IOC_SETFLAGS, sizeof(int), true},
    {_IOW('f', 2, int), sizeof(int), true},   // FS_IOC32_SETFLAGS
    {FS_IOC_FSSETXATTR, sizeof(struct fsxattr), true},
    {FS_IOC_SETVERSION, sizeof(int), true},
    {_IOW('v', 2, int), sizeof(int), true},   // FS_IOC32_SETVERSION
    {_IOW('f', 4, long), sizeof(int), true},  // EXT4_IOC_SETVERSION
    {_IOW('f', 4, int), sizeof(int), true},   // EXT4_IOC32_SETVERSION
    {_IO('f', 9), 0, true},                   // EXT4_IOC_MIGRATE: rewrites the inode's block map
    {_IO('f', 12), 0, true},                  // EXT4_IOC_ALLOC_DA_BLKS
    {FS_IOC_ENABLE_VERITY, 0, false},
    {FS_IOC_SET_ENCRYPTION_POLICY, 0, false},
    {BTRFS_IOC_SUBVOL_SETFLAGS, sizeof(uint64_t), true},  // a subvolume read-only or writable
    // btrfs makes and removes subvolumes and snapshots in the fd's directory with its own lookups,
    // past the mkdir/rmdir hooks Landlock checks; their arguments name a second fd: refused.
    {BTRFS_IOC_SNAP_CREATE, 0, false},
    {BTRFS_IOC_SNAP_CREATE_V2, 0, false},
    {BTRFS_IOC_SUBVOL_CREATE, 0, false},
    {BTRFS_IOC_SUBVOL_CREATE_V2, 0, false},
    {BTRFS_IOC_SNAP_DESTROY, 0, false},
    {BTRFS_IOC_SNAP_DESTROY_V2, 0, false},
};

const Ioctl* find_ioctl(uint32_t cmd) {
  for (const auto& i : kIoctls)
    if (i.cmd == cmd) return &i;
  return nullptr;
}

const Call* find(int nr) {
  for (const auto& c : kCalls)
    if (c.nr == nr) return &c;
  return nullptr;
}

// Reads a NUL-terminated string of the workload, page by page (a partial read stops at an unmapped
// page). 0, EFAULT or ENAMETOOLONG.
int read_path(pid_t tid, uint64_t addr, char* out, size_t size) {
  size_t got = 0;
  while (got < size) {
    size_t page_left = 4096 - ((addr + got) & 4095);
    size_t want = std::min(page_left, size - got);
    ssize_t n = read_workload_memory(tid, addr + got, out + got, want);
    if (n <= 0) return EFAULT;
    if (std::memchr(out + got, '\0', static_cast<size_t>(n))) return 0;
    got += static_cast<size_t>(n);
  }
  return ENAMETOOLONG;
}

int read_mem(pid_t tid, uint64_t addr, void* out, size_t size) {
  return read_workload_memory(tid, addr, out, size) == static_cast<ssize_t>(size) ? 0 : EFAULT;
}

// The timestamps the workload asked for, as utimensat's; *none for "now" (a NULL pointer).
int read_times(const seccomp_notif& req, const Call& c, timespec ts[2], bool* none) {
  uint64_t p = req.data.args[c.value_arg];
  *none = p == 0;
  if (*none) return 0;
  const auto tid = static_cast<pid_t>(req.pid);
  switch (c.times) {
    case Times::utimbuf: {
      int64_t t[2];
      if (int e = read_mem(tid, p, t, sizeof t)) return e;
      ts[0] = {t[0], 0};
      ts[1] = {t[1], 0};
      return 0;
    }
    case Times::timeval: {
      struct timeval tv[2];
      if (int e = read_mem(tid, p, tv, sizeof tv)) return e;
      for (int i = 0; i < 2; ++i) {
        if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000) return EINVAL;
        ts[i] = {tv[i].tv_sec, tv[i].tv_usec * 1000};
      }
      return 0;
    }
    case Times::timespec: return read_mem(tid, p, ts, 2 * sizeof *ts);
    case Times::none: break;
  }
  return EINVAL;
}

// "/proc/self/..." and "/proc/thread-self/..." name the workload's own entries, not ours (glibc's
// fchmodat(AT_SYMLINK_NOFOLLOW) goes through /proc/self/fd/N).
void own_proc(const char* in, char* out, size_t size, pid_t tid) {
  const int t = static_cast<int>(tid);
  if (std::strncmp(in, "/proc/self/", 11) == 0) std::snprintf(out, size, "/proc/%d/%s", t, in + 11);
  else if (std::strncmp(in, "/proc/thread-self/", 18) == 0) std::snprintf(out, size, "/proc/%d/task/%d/%s", t, t, in + 18);
  else std::snprintf(out, size, "%s", in);
}

// The directory a path is resolved from: the workload's cwd or a duplicate of its dirfd.
int open_dir(const seccomp_notif& req, int pidfd, int dirfd, UniqueFd& out) {
  if (dirfd == AT_FDCWD) {
    char cwd[64];
    std::snprintf(cwd, sizeof cwd, "/proc/%d/cwd", static_cast<int>(req.pid));
    out.reset(::open(cwd, O_PATH | O_CLOEXEC));
  } else {
    out.reset(workload_fd(pidfd, static_cast<pid_t>(req.pid), dirfd));
  }
  return out.valid() ? 0 : (errno == EBADF ? EBADF : EACCES);
}

// The file the call names, opened once (O_PATH) the way the kernel would resolve it for the workload.
int open_target(const seccomp_notif& req, const Call& c, int pidfd, UniqueFd& out) {
  const int dirfd = c.dirfd_arg < 0 ? AT_FDCWD : static_cast<int>(req.data.args[c.dirfd_arg]);
  const unsigned flags = c.flags_arg < 0 ? (c.nofollow ? AT_SYMLINK_NOFOLLOW : 0)
                                         : static_cast<unsigned>(req.data.args[c.flags_arg]);
  if (flags & ~static_cast<unsigned>(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return EINVAL;
  // fchmod(fd) and utimensat(fd, NULL, ...): the fd itself.
  if (c.path_arg < 0 || (c.op == Op::times && req.data.args[c.path_arg] == 0)) {
    if (c.path_arg >= 0 && flags) return EINVAL;
    return open_dir(req, pidfd, dirfd, out);
  }
  char raw[PATH_MAX], path[PATH_MAX + 64];
  if (int e = read_path(static_cast<pid_t>(req.pid), req.data.args[c.path_arg], raw, sizeof raw)) return e;
  if (raw[0] == '\0') {
    if (!(flags & AT_EMPTY_PATH)) return ENOENT;
    return open_dir(req, pidfd, dirfd, out);
  }
  own_proc(raw, path, sizeof path, static_cast<pid_t>(req.pid));
  UniqueFd dir;
  if (path[0] != '/')
    if (int e = open_dir(req, pidfd, dirfd, dir)) return e;
  int oflags = O_PATH | O_CLOEXEC | ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0);
  out.reset(::openat(path[0] == '/' ? AT_FDCWD : dir.get(), path, oflags));
  return out.valid() ? 0 : errno;
}

// The path of the opened file beneath one of the places the workload may write.
bool writable_by_workload(int fd, const std::vector<std::string>& writable) {
  char link[64], path[PATH_MAX + 1];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = ::readlink(link, path, PATH_MAX);
  if (n <= 0 || path[0] != '/') return false;  // pipes, sockets, anonymous inodes
  std::string p(path, static_cast<size_t>(n));
  if (std::none_of(writable.begin(), writable.end(), [&](const std::string& w) { return policy::is_beneath(p, w); }))
    return false;
  // The name must lead to this very file in our (the workload's) mount namespace: a file reached
  // through /proc/PID/root of a process in another mount namespace is named relative to that one.
  struct stat by_fd {}, by_name {};
  return ::fstat(fd, &by_fd) == 0 && ::fstatat(AT_FDCWD, p.c_str(), &by_name, AT_SYMLINK_NOFOLLOW) == 0 &&
         by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

// What act() uses of the workload's memory, copied before the last ID check (see decide()).
struct Copied {
  timespec ts[2] = {};
  bool now = false;           // utimes with a NULL pointer: "now"
  char name[256] = {};        // the xattr's name
  uint64_t size = 0;          // the xattr value's size; the bytes are in value
  const char* value = nullptr;
};

int copy_args(const seccomp_notif& req, const Call& c, Copied& out) {
  const auto* a = req.data.args;
  const auto tid = static_cast<pid_t>(req.pid);
  switch (c.op) {
    case Op::times: return read_times(req, c, out.ts, &out.now);
    case Op::set_xattr:
    case Op::remove_xattr: {
      if (int e = read_path(tid, a[c.value_arg], out.name, sizeof out.name)) return e == ENAMETOOLONG ? ERANGE : e;
      if (c.op == Op::remove_xattr) return 0;
      out.size = a[c.value_arg + 2];
      if (out.size > 65536) return E2BIG;
      static thread_local char value[65536];
      if (out.size && read_mem(tid, a[c.value_arg + 1], value, out.size)) return EFAULT;
      out.value = value;
      return 0;
    }
    case Op::mode:
    case Op::owner: return 0;  // their values are in the registers (req.data.args), already copied
  }
  return ENOSYS;
}

// Makes the change on the opened file (already the final one: a link only when the workload asked
// not to follow), from the copies only; the kernel judges ownership with this thread's credentials,
// which hold no capability.
int act(const seccomp_notif& req, const Call& c, int target, const Copied& in) {
  char self[64];
  std::snprintf(self, sizeof self, "/proc/self/fd/%d", target);
  struct stat st {};
  if (::fstat(target, &st) != 0) return errno;
  const auto* a = req.data.args;
  switch (c.op) {
    case Op::mode:
      if (S_ISLNK(st.st_mode)) return EOPNOTSUPP;  // what fchmodat2(AT_SYMLINK_NOFOLLOW) answers for a link
      return ::chmod(self, static_cast<mode_t>(a[c.value_arg])) == 0 ? 0 : errno;
    case Op::times:
      return ::utimensat(target, "", in.now ? nullptr : in.ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
    case Op::owner:
      return ::fchownat(target, "", static_cast<uid_t>(a[c.value_arg]), static_cast<gid_t>(a[c.value_arg + 1]),
                        AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
    case Op::set_xattr:
    case Op::remove_xattr:
      if (S_ISLNK(st.st_mode)) return EPERM;  // no user xattrs on links; the rest needs capabilities
      if (c.op == Op::remove_xattr) return ::removexattr(self, in.name) == 0 ? 0 : errno;
      return ::setxattr(self, in.name, in.value, in.size, static_cast<int>(a[c.value_arg + 3])) == 0 ? 0 : errno;
  }
  return ENOSYS;
}

// An open file for the ioctl: the workload's own (pidfd_getfd), or where an outer filter refuses that
// (Docker's default profile without CAP_SYS_PTRACE: chattr in --rw failed in every container) the
// same file reopened. workload_fd() gives then an O_PATH descriptor of the file the workload's fd
// holds (/proc/TID/fd/N, behind the same ptrace access check), and ioctl needs a real open file: it
// is reopened read-only through our own /proc/self/fd/M (the inode the O_PATH one pins, not the name,
// so no rename or dup2 in the workload can swap it), for regular files and directories only (opening
// anything else can act, a tty or a FIFO), and must be the same st_dev/st_ino. A file the workload
// may not read is thus not changed by this route (EACCES).
int open_for_ioctl(int pidfd, pid_t tid, int fd, UniqueFd& out) {
  out.reset(workload_fd(pidfd, tid, fd));
  if (!out.valid()) return errno == EBADF ? EBADF : EACCES;
  const int fl = ::fcntl(out.get(), F_GETFL);
  if (fl < 0) return EACCES;
  if (!(fl & O_PATH)) return 0;
  struct stat held {}, reopened {};
  if (::fstat(out.get(), &held) != 0) return EACCES;
  if (!S_ISREG(held.st_mode) && !S_ISDIR(held.st_mode)) return ENOTTY;
  char self[64];
  std::snprintf(self, sizeof self, "/proc/self/fd/%d", out.get());
  UniqueFd file(::open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!file.valid()) return errno == EACCES || errno == EPERM ? EACCES : EBADF;
  if (::fstat(file.get(), &reopened) != 0 || reopened.st_dev != held.st_dev || reopened.st_ino != held.st_ino)
    return EACCES;
  out = std::move(file);
  return 0;
}

// The kernel reads the command as an unsigned int (the filter compares the low 32 bits as well).
int decide_ioctl(const seccomp_notif& req, int pidfd, const std::vector<std::string>& writable,
                 bool (*still_waiting)(void*), void* ctx) {
  const auto cmd = static_cast<uint32_t>(req.data.args[1]);
  const Ioctl* i = find_ioctl(cmd);
  if (!i) return ENOTTY;
  if (!i->mediated) return EPERM;
  UniqueFd file;
  if (int e = open_for_ioctl(pidfd, static_cast<pid_t>(req.pid), static_cast<int>(req.data.args[0]), file)) return e;
  alignas(8) char arg[sizeof(struct fsxattr)] = {};
  if (i->size && read_mem(static_cast<pid_t>(req.pid), req.data.args[2], arg, i->size)) return EFAULT;
  // Last: the fd number and the memory were the notifying thread's only while it waits (decide()).
  if (!still_waiting(ctx)) return EACCES;
  if (!writable_by_workload(file.get(), writable)) return EACCES;
  return ::ioctl(file.get(), cmd, i->size ? arg : nullptr) == 0 ? 0 : errno;
}

}  // namespace

const std::vector<int>& calls() {
  static const std::vector<int> nrs = [] {
    std::vector<int> v;
    for (const auto& c : kCalls) v.push_back(c.nr);
    return v;
  }();
  return nrs;
}

const std::vector<uint32_t>& ioctls() {
  static const std::vector<uint32_t> cmds = [] {
    std::vector<uint32_t> v;
    for (const auto& i : kIoctls) v.push_back(i.cmd);
    return v;
  }();
  return cmds;
}

bool mediates(int nr) { return nr == SYS_ioctl || find(nr) != nullptr; }

int decide(const seccomp_notif& req, int pidfd, const std::vector<std::string>& writable, bool (*still_waiting)(void*),
           void* ctx) {
  if (req.data.nr == SYS_ioctl) return decide_ioctl(req, pidfd, writable, still_waiting, ctx);
  const Call* c = find(req.data.nr);
  if (!c) return ENOSYS;
  UniqueFd target;
  if (int e = open_target(req, *c, pidfd, target)) return e;
  Copied copied;
  if (int e = copy_args(req, *c, copied)) return e;
  // The cwd, fds and memory read above were the notifying thread's only if it is still waiting in
  // this call (a thread that left it, and a reused tid, are someone else). seccomp_unotify(2), under
  // SECCOMP_IOCTL_NOTIF_ID_VALID, has the supervisor check the id after it got hold of the target
  // (there: opened /proc/TID/mem, which stays bound to that process); process_vm_readv names the
  // tid anew on every read, so here every read of the workload comes before this last check, which
  // vouches for all of them, and act() uses the copies only (never the workload's memory again,
  // which a sibling thread may change at any time).
  if (!still_waiting(ctx)) return EACCES;
  // Landlock's answer to a write outside the grants.
  if (!writable_by_workload(target.get(), writable)) return EACCES;
  return act(req, *c, target.get(), copied);
}

int drop_effective_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return errno;
  data[0].effective = data[1].effective = 0;
  return ::syscall(SYS_capset, &header, data) == 0 ? 0 : errno;
}

}  // namespace cage::lx::metadata_notify
