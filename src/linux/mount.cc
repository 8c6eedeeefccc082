// Mounts (child side): a fresh tmpfs root with every MountStep of the plan beneath it, then
// pivot_root into it, so nothing of the host is reachable but what the plan shows. Bind sources are
// fds the supervisor opened before clone (no path race on the host side); targets are opened with
// RESOLVE_NO_SYMLINKS beneath the new root. Proved by tests/escape/ (read_host_files, write_outside, symlink_*, mount_propagation).
// The curated /etc's ~70 entries are created by the supervisor while the child mounts the rest
// (plan_fill, fill_tmpfs): the supervisor waits idle for the child otherwise, and a run's start-up is
// shorter by what the two then do at once.
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/send_fd.h"
#include "linux/child.h"
#include "linux/devices.h"
#include "linux/terminal.h"

namespace cage::lx {

namespace {

// The staging directory for the new root inside our private mount namespace. Host /tmp is only
// covered in this namespace; bind sources come from fds, so paths under /tmp stay grantable.
constexpr const char* kStage = "/tmp";
constexpr unsigned long kNoSuidDev = MS_NOSUID | MS_NODEV;

int sys_mount_setattr(const char* path, unsigned flags, uint64_t set) {
  struct mount_attr attr {};
  attr.attr_set = set;
  return static_cast<int>(::syscall(SYS_mount_setattr, AT_FDCWD, path, flags | AT_SYMLINK_NOFOLLOW, &attr,
                                    sizeof attr));
}

int err_of(int rc) { return rc < 0 ? errno : 0; }

// Joins kStage and an absolute target into buf; no allocation.
bool staged(char* buf, size_t n, const std::string& target) {
  int len = std::snprintf(buf, n, "%s%s", kStage, target == "/" ? "" : target.c_str());
  return len > 0 && static_cast<size_t>(len) < n;
}

int openat2_nofollow(int dirfd, const char* rel, int flags, uint64_t resolve = 0) {
  struct open_how how {};
  how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | resolve;
  return static_cast<int>(::syscall(SYS_openat2, dirfd, rel, &how, sizeof how));
}

// Opens the parent directory of target beneath root_fd, creating missing directories on the way,
// one component at a time and refusing every symlink: a component swapped for a link (in a --rw
// grant, by a process outside) can never make cage create or mount anything outside the view.
// The walk starts at start_fd, the directory of the first `skip` characters of target (root_fd
// and 0 for a walk from the top); `resolve` adds RESOLVE_ flags to each step's. On success *leaf
// points at the last component inside buf.
int open_parent_from(int start_fd, size_t skip, const std::string& target, char* buf, size_t n, const char** leaf,
                     int* parent, uint64_t resolve = 0) {
  if (target.size() + 1 > n || target.size() < 2 || skip + 1 >= target.size()) return ENAMETOOLONG;
  std::memcpy(buf, target.c_str() + 1, target.size());  // without the leading '/', with the NUL
  int cur = ::fcntl(start_fd, F_DUPFD_CLOEXEC, 0);
  if (cur < 0) return errno;
  char* comp = buf + skip;  // buf lacks target's leading '/': buf[skip - 1] is the '/' after the start
  for (char* slash; (slash = std::strchr(comp, '/')) != nullptr; comp = slash + 1) {
    *slash = '\0';
    int next = openat2_nofollow(cur, comp, O_PATH | O_DIRECTORY, resolve);
    if (next < 0 && errno == ENOENT && ::mkdirat(cur, comp, 0755) == 0)
      next = openat2_nofollow(cur, comp, O_PATH | O_DIRECTORY, resolve);
    int e = errno;
    *slash = '/';
    ::close(cur);
    if (next < 0) return e;
    cur = next;
  }
  *leaf = comp;
  *parent = cur;
  return 0;
}

int open_parent(int root_fd, const std::string& target, char* buf, size_t n, const char** leaf, int* parent) {
  return open_parent_from(root_fd, 0, target, buf, n, leaf, parent);
}

int ensure_mount_point(int parent, const char* leaf, bool is_dir) {
  struct stat st {};
  if (::fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) return (S_ISDIR(st.st_mode) == is_dir) ? 0 : ENOTDIR;
  if (is_dir) return ::mkdirat(parent, leaf, 0755) == 0 || errno == EEXIST ? 0 : errno;
  int fd = ::openat(parent, leaf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

// Opens the target beneath the staged root refusing every symlink, and returns its magic-link path
// in /proc/self/fd, so a swapped component cannot redirect the mount.
int open_target(const std::string& target, int root_fd, char* link, size_t n, int* fd_out) {
  struct open_how how {};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
  const char* rel = target.c_str() + 1;
  int fd = static_cast<int>(::syscall(SYS_openat2, root_fd, *rel ? rel : ".", &how, sizeof how));
  if (fd < 0) return errno;
  std::snprintf(link, n, "/proc/self/fd/%d", fd);
  *fd_out = fd;
  return 0;
}

// size=0 leaves the kernel's default (half of RAM): only for what the workload cannot write.
int mount_tmpfs(const char* at, unsigned mode, bool noexec, uint64_t size = 0) {
  char opts[64];
  if (size)
    std::snprintf(opts, sizeof opts, "mode=%04o,size=%llu", mode, static_cast<unsigned long long>(size));
  else
    std::snprintf(opts, sizeof opts, "mode=%04o", mode);
  return err_of(::mount("tmpfs", at, "tmpfs", kNoSuidDev | (noexec ? MS_NOEXEC : 0), opts));
}

// Attaches a detached tree (open_sources) at the target fd, with its flags set on the whole tree first.
int attach(int tree, int target_fd, bool read_only, bool noexec = false) {
  struct mount_attr attr {};
  attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (read_only ? MOUNT_ATTR_RDONLY : 0) |
                  (noexec ? MOUNT_ATTR_NOEXEC : 0);
  if (::syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) return errno;
  if (::syscall(SYS_move_mount, tree, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    return errno;
  return 0;
}

int bind(const char* src, const char* at, const char* attr_path, bool read_only, bool nodev) {
  if (::mount(src, at, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
  uint64_t set = MOUNT_ATTR_NOSUID | (nodev ? MOUNT_ATTR_NODEV : 0) | (read_only ? MOUNT_ATTR_RDONLY : 0);
  return err_of(sys_mount_setattr(attr_path, AT_RECURSIVE, set));
}

// A new file: a step's file goes only into a tmpfs of cage's own, made for this run (compile refuses
// such steps beneath a bind), so an entry already there means the view is not what the plan says.
int write_file(int parent, const char* leaf, const std::string& content) {
  int fd = ::openat(parent, leaf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return errno;
  size_t off = 0;
  while (off < content.size()) {
    ssize_t w = ::write(fd, content.data() + off, content.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      ::close(fd);
      return e;
    }
    off += static_cast<size_t>(w);
  }
  ::close(fd);
  return 0;
}

// Minimal /dev: a tmpfs holding binds of the harmless host devices, a private devpts instance
// (ptys of this sandbox only), /dev/shm and the usual links.
int build_dev(const char* at, uint64_t shm_size, bool shm_noexec) {
  char p[4096 + 64], q[64];
  if (int e = mount_tmpfs(at, 0755, true)) return e;
  for (const char* d : kDevices) {
    std::snprintf(p, sizeof p, "%s/%s", at, d);
    std::snprintf(q, sizeof q, "/dev/%s", d);
    int fd = ::open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return errno;
    ::close(fd);
    if (int e = bind(q, p, p, false, false)) return e;
  }
  // The caller's terminal, when the workload's stdin, stdout or stderr is one: bound at /dev/console,
  // so that ttyname(3) (tty, tmux, screen, gpg's pinentry) finds a name for the terminal the
  // workload already holds open. Nothing new is reachable: it is the same device.
  if (char tty[256]; caller_pty(tty, sizeof tty)) {
    std::snprintf(p, sizeof p, "%s/console", at);
    int cfd = ::open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (cfd < 0) return errno;
    ::close(cfd);
    if (int e = bind(tty, p, p, false, false)) return e;
  }
  std::snprintf(p, sizeof p, "%s/pts", at);
  if (::mkdir(p, 0755) != 0) return errno;
  if (::mount("devpts", p, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") != 0) return errno;
  std::snprintf(p, sizeof p, "%s/shm", at);
  if (::mkdir(p, 01777) != 0) return errno;
  if (int e = mount_tmpfs(p, 01777, shm_noexec, shm_size)) return e;
  const char* links[][2] = {{"ptmx", "pts/ptmx"}, {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
                            {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}};
  for (auto& l : links) {
    std::snprintf(p, sizeof p, "%s/%s", at, l[0]);
    if (::symlink(l[1], p) != 0) return errno;
  }
  return err_of(sys_mount_setattr(at, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC));
}

// The parent directory of the last link, file or directory step, kept open for the next ones (the
// /etc snapshot puts a hundred entries into a few directories). Compile refuses such steps beneath
// a bind, so the kept directory lies in cage's own tmpfs: a rename there keeps it inside the view,
// and a directory reached from it is reached by the same walk as from the top. Every mount drops
// it, since the mount may cover it.
struct ParentCache {
  char path[4096];
  size_t len = 0;
  int fd = -1;
  uint64_t resolve = 0;  // RESOLVE_ flags added to every walk made through this cache
  void drop() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    len = 0;
  }
};

bool creates_entry(MountKind k) { return k == MountKind::symlink || k == MountKind::file || k == MountKind::dir; }

// open_parent for a link, file or directory step: the kept directory when it is the parent, a walk
// from it when the parent lies beneath it, else a walk from root_fd, the directory of target's first
// root_skip characters (the top: 0). The cache owns *parent.
int open_parent_cached(int root_fd, size_t root_skip, const std::string& target, ParentCache& cache, char* buf,
                       size_t n, const char** leaf, int* parent) {
  if (target.size() + 1 > n || target.size() < 2) return ENAMETOOLONG;
  const size_t plen = target.rfind('/');  // the parent is target[0, plen); the root when 0
  const bool same = cache.fd >= 0 && cache.len == plen && std::memcmp(cache.path, target.c_str(), plen) == 0;
  if (same) {
    std::memcpy(buf, target.c_str() + 1, target.size());
    *leaf = buf + plen;
    *parent = cache.fd;
    return 0;
  }
  const bool beneath = cache.fd >= 0 && plen > cache.len && target[cache.len] == '/' &&
                       std::memcmp(cache.path, target.c_str(), cache.len) == 0;
  int fd = -1;
  int e = beneath ? open_parent_from(cache.fd, cache.len, target, buf, n, leaf, &fd, cache.resolve)
                  : open_parent_from(root_fd, root_skip, target, buf, n, leaf, &fd, cache.resolve);
  cache.drop();
  if (e) return e;
  if (plen < sizeof cache.path) {
    std::memcpy(cache.path, target.c_str(), plen);
    cache.len = plen;
    cache.fd = fd;
  }
  *parent = fd;
  return 0;
}

// Creates the link, file or directory of a step beneath root_fd, the directory of the target's first
// root_skip characters; see open_parent for why every component is opened without following links.
int create_entry(const MountStep& s, int root_fd, size_t root_skip, ParentCache& cache) {
  char rel[4096];
  const char* leaf = nullptr;
  int parent = -1;
  if (int e = open_parent_cached(root_fd, root_skip, s.target, cache, rel, sizeof rel, &leaf, &parent)) return e;
  int e = 0;
  if (s.kind == MountKind::symlink) {
    e = ::symlinkat(s.source.c_str(), parent, leaf) == 0 ? 0 : errno;
  } else if (s.kind == MountKind::file) {
    e = write_file(parent, leaf, s.content);
  } else if (::mkdirat(parent, leaf, 0755) != 0) {  // a directory the view needs: new, or one already there
    struct stat st {};
    e = errno == EEXIST && ::fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 ? (S_ISDIR(st.st_mode) ? 0 : ENOTDIR)
                                                                                     : errno;
  }
  if (cache.fd != parent) ::close(parent);  // a target too long to keep
  return e;
}

// Creates what a step needs at its target (a link, a file, a directory or a mount point) beneath
// root_fd; see open_parent for why every component is opened without following links.
int prepare_target(const MountStep& s, int root_fd, ParentCache& cache) {
  if (s.target == "/") return 0;  // the staging root itself
  if (creates_entry(s.kind)) return create_entry(s, root_fd, 0, cache);
  char rel[4096];
  const char* leaf = nullptr;
  int parent = -1;
  cache.drop();
  if (int e = open_parent(root_fd, s.target, rel, sizeof rel, &leaf, &parent)) return e;
  int e = 0;
  switch (s.kind) {
    case MountKind::proc_ro: break;  // exists in the proc instance
    case MountKind::tmpfs:
    case MountKind::proc:
    case MountKind::dev: e = ensure_mount_point(parent, leaf, true); break;
    case MountKind::bind_ro:
    case MountKind::bind_rw:
    case MountKind::hide: e = ensure_mount_point(parent, leaf, s.is_dir); break;
    case MountKind::over_file: {  // the host's file, there since compile: never created in a grant
      struct stat st {};
      e = ::fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : ESTALE;
      break;
    }
    case MountKind::symlink:
    case MountKind::file:
    case MountKind::dir: break;
  }
  ::close(parent);
  return e;
}

// A file of cage's over the host's file at target_fd: written on the staging tmpfs (stage_fd, never
// covered: a grant of "/" mounts over it, not into it), cloned as a detached mount and attached
// read-only, then unlinked (the mount keeps it; move_mount refuses an unlinked source, ENOENT).
// Nothing is left in the view but the mounted file.
int mount_content_over(int stage_fd, const std::string& content, int target_fd) {
  constexpr const char* kScratch = ".cage-generated";
  if (int e = write_file(stage_fd, kScratch, content)) return e;
  int tree = static_cast<int>(::syscall(SYS_open_tree, stage_fd, kScratch, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  int e = tree < 0 ? errno : attach(tree, target_fd, true);
  if (::unlinkat(stage_fd, kScratch, 0) != 0 && e == 0) e = errno;
  if (tree >= 0) ::close(tree);
  return e;
}

int apply_step(const ChildContext& c, size_t i, int root_fd, int stage_fd, ParentCache& cache) {
  const MountStep& s = c.plan->mounts[i];
  char at[4096], link[64];
  if (!staged(at, sizeof at, s.target)) return ENAMETOOLONG;
  if (int e = prepare_target(s, root_fd, cache)) return e;
  if (creates_entry(s.kind)) return 0;
  int tfd = -1;
  if (int e = open_target(s.target, root_fd, link, sizeof link, &tfd)) return e;
  int e = 0;
  switch (s.kind) {
    case MountKind::tmpfs: e = mount_tmpfs(link, s.mode, s.noexec, s.size_bytes); break;
    case MountKind::bind_ro:
    case MountKind::bind_rw: {
      e = attach(c.source_fds[i], tfd, s.kind == MountKind::bind_ro, s.noexec);
      break;
    }
    case MountKind::proc:
      e = err_of(::mount("proc", link, "proc", kNoSuidDev | MS_NOEXEC, nullptr));
      break;
    case MountKind::proc_ro:
      e = bind(at, link, at, true, true);
      break;
    case MountKind::dev:
      e = build_dev(at, s.size_bytes, s.noexec);
      break;
    case MountKind::hide:
      if (s.is_dir) {
        e = mount_tmpfs(link, 0, true);
        if (!e) e = err_of(sys_mount_setattr(at, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
      } else {
        char src[64];
        std::snprintf(src, sizeof src, "/proc/self/fd/%d", c.dev_null);
        e = bind(src, link, at, true, true);  // nodev: opening the mask fails with EACCES
      }
      break;
    case MountKind::over_file:
      e = mount_content_over(stage_fd, s.content, tfd);
      break;
    case MountKind::symlink:
    case MountKind::file:
    case MountKind::dir: break;
  }
  ::close(tfd);
  return e;
}

// The tmpfs of step i (the curated /etc) for the supervisor to fill (plan_fill): a detached mount
// (fsopen, Linux 5.2) attached at its target like any other, whose descriptor goes to the
// supervisor; returns 0 and sets *handed. Where the kernel has no fsopen or a filter refuses it, the
// tmpfs is mounted as any other, the supervisor is told so ('n') and the child creates its entries
// itself (*handed false). Either way nothing beneath it is touched until the entries are in.
int mount_filled(const ChildContext& c, size_t i, int root_fd, ParentCache& cache, bool* handed) {
  const MountStep& s = c.plan->mounts[i];
  *handed = false;
  char link[64], mode[16];
  if (int e = prepare_target(s, root_fd, cache)) return e;
  int tfd = -1;
  if (int e = open_target(s.target, root_fd, link, sizeof link, &tfd)) return e;
  std::snprintf(mode, sizeof mode, "%04o", s.mode);
  int mfd = -1;
  int fs = static_cast<int>(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
  if (fs >= 0) {
    if (::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) == 0 &&
        ::syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0)
      mfd = static_cast<int>(::syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
    ::close(fs);
  }
  int e = 0;
  if (mfd < 0) {
    e = mount_tmpfs(link, s.mode, false);
    const char none = 'n';
    if (!e && ::send(c.fill_fd, &none, 1, MSG_NOSIGNAL) != 1) e = errno;
  } else {
    if (::syscall(SYS_move_mount, mfd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) e = errno;
    if (!e) e = send_fd(c.fill_fd, mfd, 'm');
    *handed = e == 0;
    ::close(mfd);
  }
  ::close(tfd);
  return e;
}

// The supervisor's answer once it has created the entries (fill_tmpfs); end of stream if it died.
int await_fill(const ChildContext& c, int* failed_index) {
  FillResult r;
  ssize_t n;
  do n = ::read(c.fill_fd, &r, sizeof r);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof r)) {
    *failed_index = c.fill_index;
    return n < 0 ? errno : EPIPE;
  }
  *failed_index = r.index;
  return r.err;
}

// Bind sources are opened before the staging tmpfs covers anything, refusing every symlink on the
// way (the paths are canonical: a symlink now means the host changed since compile), and checked
// to still be what the plan expects.
int open_sources(const ChildContext& c, int* failed_index) {
  const auto& steps = c.plan->mounts;
  for (size_t i = 0; i < steps.size(); ++i) {
    const MountStep& s = steps[i];
    if (s.kind != MountKind::bind_ro && s.kind != MountKind::bind_rw) continue;
    struct open_how how {};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, s.source.c_str(), &how, sizeof how));
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode) != s.is_dir) {
      *failed_index = static_cast<int>(i);
      return fd < 0 ? errno : ESTALE;
    }
    // A detached copy of the source's mount tree, taken before the staging tmpfs exists: a grant of
    // the staging directory itself (/tmp), or of an ancestor (/), cannot copy the stage into the view.
    int tree = static_cast<int>(::syscall(SYS_open_tree, fd, "",
                                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    int e = errno;
    ::close(fd);
    if (tree < 0) {
      *failed_index = static_cast<int>(i);
      return e;
    }
    c.source_fds[i] = tree;
  }
  c.dev_null = ::open("/dev/null", O_PATH | O_CLOEXEC);
  return c.dev_null < 0 ? errno : 0;
}

}  // namespace

int build_root(const ChildContext& c, ChildStep* step, int* failed_index) {
  *failed_index = -1;
  *step = ChildStep::mount_propagation;
  // Private, not slave: nothing we mount reaches the host, and nothing the host mounts later reaches
  // the view. A slave receives every new host mount beneath a grant with the host's flags: one made
  // under a --ro grant while the run lasts would arrive read-write (beneath a private root such as
  // /tmp, Landlock's rule for that root would let the write through too). bubblewrap makes / a slave
  // "so that we still receive mounts from the real root" and remounts read-only only the submounts
  // present when it binds (bind_mount() in bind-mount.c); its PR #522 weighed private propagation and
  // its cost, which cage takes: a host unmount beneath a grant does not reach a running sandbox (the
  // filesystem stays busy until the run ends). Clones of these mounts (open_tree) are private too.
  if (::mount(nullptr, "/", nullptr, MS_PRIVATE | MS_REC, nullptr) != 0) return errno;
  *step = ChildStep::mount_step;
  if (int e = open_sources(c, failed_index)) return e;
  *step = ChildStep::root_tmpfs;
  if (int e = mount_tmpfs(kStage, 0755, false)) return e;
  int root_fd = ::open(kStage, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return errno;
  int stage_fd = ::open(kStage, O_PATH | O_DIRECTORY | O_CLOEXEC);  // the staging tmpfs, even once covered
  if (stage_fd < 0) {
    int e = errno;
    ::close(root_fd);
    return e;
  }
  const auto& steps = c.plan->mounts;
  *step = ChildStep::mount_step;
  ParentCache cache;
  // With a tmpfs the supervisor fills (plan_fill), every step beneath it waits until its entries are
  // in: the supervisor's own (FillRole::supervisor) are skipped here, the rest applied after, in order.
  bool handed = false;
  auto later = [&](size_t i) { return c.fill_index >= 0 && c.fill_roles[i] != FillRole::child; };
  auto fail = [&](int e, int index) {
    *failed_index = index;
    cache.drop();
    ::close(root_fd);
    ::close(stage_fd);
    return e;
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    if (later(i)) continue;
    int e = static_cast<int>(i) == c.fill_index ? mount_filled(c, i, root_fd, cache, &handed)
                                                 : apply_step(c, i, root_fd, stage_fd, cache);
    if (e) return fail(e, static_cast<int>(i));
    // A grant of "/" now covers the staging root: later steps must start from the top mount.
    if (steps[i].target == "/") {
      ::close(root_fd);
      root_fd = ::open(kStage, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root_fd < 0) return errno;
    }
  }
  if (c.fill_index >= 0) {
    cache.drop();
    int index = -1;
    if (handed)
      if (int e = await_fill(c, &index)) return fail(e, index);
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!later(i) || (handed && c.fill_roles[i] == FillRole::supervisor)) continue;
      if (int e = apply_step(c, i, root_fd, stage_fd, cache)) return fail(e, static_cast<int>(i));
    }
  }
  cache.drop();
  ::close(stage_fd);
  // Read-only tmpfs (/etc) once populated; then the root itself.
  *step = ChildStep::mount_attr;
  char at[4096];
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != MountKind::tmpfs || !steps[i].read_only) continue;
    staged(at, sizeof at, steps[i].target);
    if (sys_mount_setattr(at, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) != 0) {
      *failed_index = static_cast<int>(i);
      ::close(root_fd);
      return errno;
    }
  }
  ::close(root_fd);
  if (sys_mount_setattr(kStage, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) != 0) return errno;
  *step = ChildStep::pivot_root;
  // pivot_root(".", ".") stacks the old root over the new one; a lazy unmount of "." then drops it,
  // so no put_old directory has to exist inside the sandbox.
  if (::chdir(kStage) != 0) return errno;
  if (::syscall(SYS_pivot_root, ".", ".") != 0) return errno;
  if (::umount2(".", MNT_DETACH) != 0) return errno;
  if (::chdir("/") != 0) return errno;
  return 0;
}

// Which steps the supervisor creates: beneath the first read-only tmpfs (the curated /etc) that
// no other step mounts over, every link, file and directory no other mount beneath it covers. The
// others beneath it (binds of whole /etc directories, grants, what lies inside them) keep their
// order and follow the fill. Not worth a round trip for a few entries.
int plan_fill(const Plan& plan, std::vector<FillRole>& roles) {
  using policy::is_beneath;
  constexpr size_t kFillAtLeast = 8;
  const auto& steps = plan.mounts;
  roles.assign(steps.size(), FillRole::child);
  if (!plan.init.build_root) return -1;
  for (size_t f = 0; f < steps.size(); ++f) {
    const MountStep& t = steps[f];
    if (t.kind != MountKind::tmpfs || !t.read_only || t.target == "/") continue;
    bool usable = true;
    std::vector<const MountStep*> mounts;  // the mounts beneath the tmpfs
    for (size_t j = 0; j < steps.size() && usable; ++j) {
      if (j == f || !is_beneath(steps[j].target, t.target)) continue;
      usable = j > f && steps[j].target != t.target;
      if (!creates_entry(steps[j].kind)) mounts.push_back(&steps[j]);
    }
    if (!usable) continue;
    size_t filled = 0;
    for (size_t j = f + 1; j < steps.size(); ++j) {
      if (!is_beneath(steps[j].target, t.target)) continue;
      const bool covered = std::any_of(mounts.begin(), mounts.end(),
                                       [&](const MountStep* m) { return is_beneath(steps[j].target, m->target); });
      roles[j] = creates_entry(steps[j].kind) && !covered ? FillRole::supervisor : FillRole::deferred;
      filled += roles[j] == FillRole::supervisor;
    }
    if (filled >= kFillAtLeast) return static_cast<int>(f);  // the tmpfs itself stays the child's
    roles.assign(steps.size(), FillRole::child);
  }
  return -1;
}

int fill_tmpfs(const Plan& plan, const std::vector<FillRole>& roles, size_t fill, int mount_fd, int* failed_index) {
  const size_t skip = plan.mounts[fill].target.size();
  ParentCache cache;
  // Nothing is mounted beneath the entries the supervisor creates (plan_fill): a walk that meets a
  // mount there (made into the sandbox's namespace meanwhile) is refused, never followed.
  cache.resolve = RESOLVE_NO_XDEV;
  // As the child's (build_view): the view never takes the caller's umask. The umask is the whole
  // process's: the supervisor's other threads (the proxy's loop, the mediator) create no file.
  const mode_t mask = ::umask(022);
  int e = 0;
  for (size_t j = 0; j < roles.size() && !e; ++j) {
    if (roles[j] != FillRole::supervisor) continue;
    e = create_entry(plan.mounts[j], mount_fd, skip, cache);
    if (e) *failed_index = static_cast<int>(j);
  }
  cache.drop();
  ::umask(mask);
  return e;
}

}  // namespace cage::lx
