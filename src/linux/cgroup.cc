// cgroup limits, parent side: the supervisor creates "cage-<its pid>" under each parent the plan names
// (removing stale ones whose supervisor died), writes the limits, moves cage's init there before the
// workload starts, reads the counters when the run ends and removes the directories on every exit
// path it controls. Proved by tests/integration/limits_cgroup.sh.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "common/unique_fd.h"
#include "linux/cgroup_plan.h"

namespace cage::lx::cgroup {

namespace {

int write_file(const std::string& path, const std::string& value) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return errno;
  ssize_t n = ::write(fd.get(), value.data(), value.size());
  if (n < 0) return errno;
  return n == static_cast<ssize_t>(value.size()) ? 0 : EIO;
}

std::string read_small(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return "";
  char buf[4096];
  ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// "key value" lines (memory.events, pids.events, memory.oom_control, cpu.stat).
int64_t keyed(const std::string& text, const std::string& key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (text.compare(pos, key.size() + 1, key + " ") == 0)
      return std::strtoll(text.c_str() + pos + key.size() + 1, nullptr, 10);
    pos = end + 1;
  }
  return -1;
}

int64_t number(const std::string& path) {
  std::string t = read_small(path);
  return t.empty() ? -1 : std::strtoll(t.c_str(), nullptr, 10);
}

void kill_members(const std::string& dir) {
  write_file(dir + "/cgroup.kill", "1");  // v2, Linux 5.14+; absent elsewhere
  std::string procs = read_small(dir + "/cgroup.procs");
  char* p = procs.data();
  while (*p) {
    char* end = nullptr;
    long pid = std::strtol(p, &end, 10);
    if (end == p) break;
    if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
    p = end;
    while (*p == '\n') ++p;
  }
}

// rmdir fails with EBUSY until the last member has been reaped; killed processes take a moment.
bool remove_dir(const std::string& dir) {
  for (int i = 0; i < 200; ++i) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    if (i % 20 == 0) kill_members(dir);
    struct timespec ts {0, 10 * 1000 * 1000};
    ::nanosleep(&ts, nullptr);
  }
  return false;
}

// --- the sentinel -------------------------------------------------------------------------------
// A supervisor killed with SIGKILL cannot clean up: its sandbox dies with it (init has a parent-death
// signal), but the empty directories would stay. So a sentinel process, forked once the directories
// exist and before anything joins them, waits on a pipe whose write end only the supervisor holds:
// a byte means "cleaned up, go"; end of file means the supervisor died, and the sentinel removes the
// directories itself. It stays in the supervisor's own cgroups (outside the run's), holds no other
// descriptor, ignores the terminal's and a group's signals (the supervisor answers those), and uses
// raw system calls only: the supervisor may have other threads when it forks.
constexpr int kMaxSentinelDirs = 4;
struct SentinelDirs {
  char path[kMaxSentinelDirs][512];
  int n = 0;
};

void sentinel_sleep_10ms() {
  struct timespec ts {0, 10 * 1000 * 1000};
  ::nanosleep(&ts, nullptr);
}

// SIGKILL to each pid listed in dir/cgroup.procs, parsed without allocating.
void sentinel_kill_members(const char* dir) {
  char path[600], buf[4096];
  size_t dl = std::strlen(dir);
  if (dl + 14 >= sizeof path) return;
  std::memcpy(path, dir, dl);
  std::memcpy(path + dl, "/cgroup.procs", 14);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  long pid = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] >= '0' && buf[i] <= '9') {
      pid = pid * 10 + (buf[i] - '0');
    } else {
      if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
      pid = 0;
    }
  }
}

[[noreturn]] void sentinel_main(int rd, const SentinelDirs& d) {
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2})
    ::sigaction(sig, &ign, nullptr);
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && null >= 0; ++fd) ::dup2(null, fd);
  // Nothing else of the supervisor's: a write end held here would keep a pipe from ever ending.
  if (rd > 3) ::syscall(SYS_close_range, 3u, static_cast<unsigned>(rd - 1), 0u);
  ::syscall(SYS_close_range, static_cast<unsigned>(rd + 1), ~0u, 0u);
  char b;
  ssize_t n;
  do n = ::read(rd, &b, 1);
  while (n < 0 && errno == EINTR);
  if (n == 1) ::_exit(0);  // the supervisor removed them itself
  for (int i = 0; i < d.n; ++i)
    for (int k = 0; k < 300; ++k) {
      if (::rmdir(d.path[i]) == 0 || errno == ENOENT || errno != EBUSY) break;
      if (k % 20 == 0) sentinel_kill_members(d.path[i]);
      sentinel_sleep_10ms();
    }
  ::_exit(0);
}

// The next cage run under the same parent also removes what a dead supervisor left (a sentinel
// that was itself killed).
void remove_stale(const std::string& parent, int owner_pid) {
  DIR* d = ::opendir(parent.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, "cage-", 5) != 0) continue;
    char* end = nullptr;
    long pid = std::strtol(e->d_name + 5, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == owner_pid) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(parent + "/" + e->d_name);
  }
  ::closedir(d);
  for (const auto& s : stale) remove_dir(s);
}

}  // namespace

Result<std::unique_ptr<Run>> Run::create(const CgroupPlan& plan, int owner_pid) {
  auto run = std::make_unique<Run>();
  run->plan_ = &plan;
  const std::string name = "/cage-" + std::to_string(owner_pid);
  for (const auto& d : plan.dirs) {
    remove_stale(d.parent, owner_pid);
    std::string dir = d.parent + name;
    if (::mkdir(dir.c_str(), 0755) != 0 && !(errno == EEXIST && remove_dir(dir) && ::mkdir(dir.c_str(), 0755) == 0))
      return unavailable("cgroup " + dir, "cannot create the run's cgroup", "run cage --check", errno);
    run->dirs_.push_back(dir);
  }
  if (int e = run->start_sentinel())
    return unavailable("cgroup", "cannot start the process that removes the run's cgroups should cage be killed",
                       "check the process limit", e);
  for (const auto& w : plan.writes) {
    int e = write_file(run->dirs_[w.dir] + "/" + w.file, w.value);
    if (e == ENOENT && w.optional) continue;
    if (e) return unavailable(w.why, "cannot write " + w.file + " = " + w.value + " in " + run->dirs_[w.dir],
                              "check the cgroup's permissions, or run cage --check", e);
  }
  return run;
}

Status Run::attach(int pid) {
  for (const auto& dir : dirs_)
    if (int e = write_file(dir + "/cgroup.procs", std::to_string(pid)))
      return unavailable("cgroup " + dir, "cannot move the sandbox into its cgroup", "run cage --check", e);
  return Ok{};
}

Stats Run::stats() const {
  Stats s;
  if (!plan_) return s;
  for (size_t i = 0; i < dirs_.size(); ++i) {
    const std::string& dir = dirs_[i];
    if (plan_->version == 2) {
      s.oom_kills = keyed(read_small(dir + "/memory.events"), "oom_kill");
      s.memory_peak = number(dir + "/memory.peak");
      s.pids_refused = keyed(read_small(dir + "/pids.events"), "max");
      s.cpu_usec = keyed(read_small(dir + "/cpu.stat"), "usage_usec");
    } else if (plan_->dirs[i].controller == "memory") {
      s.oom_kills = keyed(read_small(dir + "/memory.oom_control"), "oom_kill");
      s.memory_peak = number(dir + "/memory.max_usage_in_bytes");
    } else if (plan_->dirs[i].controller == "pids") {
      s.pids_refused = keyed(read_small(dir + "/pids.events"), "max");
    }
  }
  return s;
}

int Run::start_sentinel() {
  SentinelDirs d;
  for (const auto& dir : dirs_) {
    if (d.n == kMaxSentinelDirs || dir.size() >= sizeof d.path[0]) return ENAMETOOLONG;
    std::memcpy(d.path[d.n++], dir.c_str(), dir.size() + 1);
  }
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return errno;
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(p[0]);
    ::close(p[1]);
    return e;
  }
  if (pid == 0) sentinel_main(p[0], d);
  ::close(p[0]);
  sentinel_ = UniqueFd(p[1]);
  sentinel_pid_ = pid;
  return 0;
}

void Run::remove() {
  for (const auto& dir : dirs_) remove_dir(dir);
  dirs_.clear();
  if (sentinel_pid_ > 0) {  // done: the sentinel leaves at once, and is reaped before cage exits
    char go = 'q';
    if (::write(sentinel_.get(), &go, 1) != 1) { /* it is gone already */ }
    sentinel_.reset();
    while (::waitpid(sentinel_pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    sentinel_pid_ = -1;
  }
}

Run::~Run() { remove(); }

}  // namespace cage::lx::cgroup
