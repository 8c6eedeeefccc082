// --explain's observer: reads the path a notified call names (see explain_notify.h).
#include "linux/explain_notify.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "linux/workload_access.h"

namespace cage::lx::explain_notify {
namespace {

using explain::Op;

// Where a call's path is: its dirfd argument (-1: relative to the cwd), the path argument, and for
// open calls where the flags are (-1: none; kHowFlags: in the struct open_how at the path's + 1).
constexpr int kHowFlags = -2;
struct Spec {
  int nr;
  int dirfd, path, flags;
  Op op;
  int dirfd2 = -1, path2 = -1;  // rename/link: the new name, a create
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> s = {
#ifdef SYS_open
      {SYS_open, -1, 0, 1, Op::read},
      {SYS_creat, -1, 0, -1, Op::create},
      {SYS_stat, -1, 0, -1, Op::stat},
      {SYS_lstat, -1, 0, -1, Op::stat},
      {SYS_access, -1, 0, -1, Op::stat},
      {SYS_readlink, -1, 0, -1, Op::stat},
      {SYS_mkdir, -1, 0, -1, Op::create},
      {SYS_mknod, -1, 0, -1, Op::create},
      {SYS_unlink, -1, 0, -1, Op::remove},
      {SYS_rmdir, -1, 0, -1, Op::remove},
      {SYS_rename, -1, 0, -1, Op::remove, -1, 1},
      {SYS_link, -1, -1, -1, Op::create, -1, 1},
      {SYS_symlink, -1, -1, -1, Op::create, -1, 1},
#endif
      {SYS_openat, 0, 1, 2, Op::read},
      {SYS_openat2, 0, 1, kHowFlags, Op::read},
      {SYS_execve, -1, 0, -1, Op::exec},
      {SYS_execveat, 0, 1, -1, Op::exec},
      {SYS_newfstatat, 0, 1, -1, Op::stat},
      {SYS_statx, 0, 1, -1, Op::stat},
      {SYS_faccessat, 0, 1, -1, Op::stat},
      {SYS_faccessat2, 0, 1, -1, Op::stat},
      {SYS_readlinkat, 0, 1, -1, Op::stat},
      {SYS_chdir, -1, 0, -1, Op::stat},
      {SYS_truncate, -1, 0, -1, Op::write},
      {SYS_mkdirat, 0, 1, -1, Op::create},
      {SYS_mknodat, 0, 1, -1, Op::create},
      {SYS_unlinkat, 0, 1, -1, Op::remove},
      {SYS_renameat, 0, 1, -1, Op::remove, 2, 3},
      {SYS_renameat2, 0, 1, -1, Op::remove, 2, 3},
      {SYS_linkat, -1, -1, -1, Op::create, 2, 3},
      {SYS_symlinkat, -1, -1, -1, Op::create, 1, 2},
  };
  return s;
}

const Spec* spec_of(int nr) {
  for (const auto& s : specs())
    if (s.nr == nr) return &s;
  return nullptr;
}

// The NUL-terminated string at addr, read a page at a time (the string may end just before an
// unmapped page). Empty when unreadable.
std::string read_string(pid_t tid, uint64_t addr) {
  std::string out;
  char buf[4096];
  while (out.size() < 4096 && addr) {
    size_t chunk = 4096 - (addr & 4095);
    ssize_t n = read_workload_memory(tid, addr, buf, chunk);
    if (n <= 0) return "";
    const void* nul = std::memchr(buf, '\0', static_cast<size_t>(n));
    if (nul) return out.append(buf, static_cast<const char*>(nul) - buf);
    out.append(buf, static_cast<size_t>(n));
    addr += static_cast<uint64_t>(n);
  }
  return "";
}

std::string read_link(const char* path) {
  char buf[4096];
  ssize_t n = ::readlink(path, buf, sizeof buf);
  return n > 0 && static_cast<size_t>(n) < sizeof buf ? std::string(buf, static_cast<size_t>(n)) : "";
}

// The directory a relative path starts from: the cwd, or the directory dirfd holds, as the workload
// sees them (the link text of /proc is relative to the workload's own root).
std::string base_dir(pid_t tid, int dirfd) {
  char path[64];
  if (dirfd == AT_FDCWD)
    std::snprintf(path, sizeof path, "/proc/%d/cwd", static_cast<int>(tid));
  else
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(tid), dirfd);
  return read_link(path);
}

// Joins and folds "." and ".." lexically: the name as the workload wrote it, links not followed.
std::string absolute(const std::string& base, const std::string& path) {
  std::string joined = path[0] == '/' ? path : base + "/" + path;
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= joined.size()) {
    size_t j = joined.find('/', i);
    if (j == std::string::npos) j = joined.size();
    std::string part = joined.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    i = j + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

Op open_op(uint64_t flags, Op op) {
  if (op != Op::read) return op;
  if (flags & O_CREAT) return Op::create;
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) return Op::write;
  return Op::read;
}

// The path the call names at (dirfd_arg, path_arg), absolute; empty when it cannot be read.
std::string path_of(const seccomp_notif& req, int dirfd_arg, int path_arg) {
  const auto tid = static_cast<pid_t>(req.pid);
  std::string p = read_string(tid, req.data.args[path_arg]);
  if (p.empty()) return "";  // AT_EMPTY_PATH: the call acts on a descriptor already open
  if (p[0] == '/') return absolute("", p);
  int dirfd = dirfd_arg < 0 ? AT_FDCWD : static_cast<int>(req.data.args[dirfd_arg]);
  std::string base = base_dir(tid, dirfd);
  return base.empty() || base[0] != '/' ? "" : absolute(base, p);
}

std::string comm_of(pid_t tid) {
  char path[64], buf[32] = {};
  std::snprintf(path, sizeof path, "/proc/%d/comm", static_cast<int>(tid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

void record(Log& log, Op op, std::string path, pid_t tid, const std::string& comm) {
  if (path.empty()) return;
  auto it = log.seen.find({op, path});
  if (it != log.seen.end()) {
    ++it->second.count;
    return;
  }
  if (log.seen.size() >= explain::kMaxDistinct) {
    ++log.dropped;
    return;
  }
  const uint64_t order = log.seen.size();
  log.seen.emplace(explain::Key{op, std::move(path)}, explain::Seen{1, static_cast<int>(tid), comm, order});
}

bool is_new(const Log& log, Op op, const std::string& path) {
  return !path.empty() && log.seen.find({op, path}) == log.seen.end();
}

}  // namespace

const std::vector<int>& calls() {
  static const std::vector<int> nrs = [] {
    std::vector<int> v;
    for (const auto& s : specs()) v.push_back(s.nr);
    return v;
  }();
  return nrs;
}

bool observes(int nr) {
  return spec_of(nr) != nullptr;
}

void observe(const seccomp_notif& req, bool (*still_waiting)(void*), void* ctx, Log& log) {
  const Spec* s = spec_of(req.data.nr);
  if (!s) return;
  const auto tid = static_cast<pid_t>(req.pid);
  std::string first = s->path >= 0 ? path_of(req, s->dirfd, s->path) : "";
  std::string second = s->path2 >= 0 ? path_of(req, s->dirfd2, s->path2) : "";
  Op op = s->op;
  if (s->flags >= 0) {
    op = open_op(req.data.args[s->flags], op);
  } else if (s->flags == kHowFlags) {
    open_how how{};
    if (read_workload_memory(tid, req.data.args[2], &how, sizeof how.flags) == sizeof how.flags)
      op = open_op(how.flags, op);
  }
  // Read only for an access not seen before: most calls repeat one.
  std::string comm = is_new(log, op, first) || is_new(log, Op::create, second) ? comm_of(tid) : "";
  // The thread is still in this call: the pid read above (its cwd, fds, comm) was the workload's.
  if (!still_waiting(ctx)) return;
  record(log, op, std::move(first), tid, comm);
  record(log, Op::create, std::move(second), tid, comm);
}

void refused(const seccomp_notif& req, std::string name, int error, std::string remedy, Log& log, bool killed) {
  auto it = log.refused.find(name);
  if (it != log.refused.end()) {
    ++it->second.seen.count;
    return;
  }
  if (log.refused.size() >= explain::kMaxDistinct) {
    ++log.dropped;
    return;
  }
  const auto tid = static_cast<pid_t>(req.pid);
  // The name of a thread that may already be gone: only a label, never a decision.
  explain::Seen seen{1, static_cast<int>(tid), comm_of(tid), log.seen.size() + log.refused.size()};
  log.refused.emplace(std::move(name), Refusal{std::move(seen), error, std::move(remedy), killed});
}

void direct(const seccomp_notif& req, std::string host_port, Log& log) {
  auto it = log.direct.find({Op::connect, host_port});
  if (it != log.direct.end()) {
    ++it->second.count;
    return;
  }
  if (log.direct.size() >= explain::kMaxDistinct) {
    ++log.dropped;
    return;
  }
  const auto tid = static_cast<pid_t>(req.pid);
  // A label only, as in refused(): the thread may be gone by now.
  explain::Seen seen{1, static_cast<int>(tid), comm_of(tid), log.seen.size() + log.direct.size()};
  log.direct.emplace(explain::Key{Op::connect, std::move(host_port)}, std::move(seen));
}

}  // namespace cage::lx::explain_notify
