// cgroup limits, parent side: the supervisor creates "cage-<its pid>" under each parent the plan names
// (removing stale ones whose supervisor died), writes the limits, moves cage's init there before the
// workload starts, reads the counters when the run ends and removes the directories on every exit
// path it controls. Proved by tests/integration/limits_cgroup.sh.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "common/unique_fd.h"
#include "linux/cgroup_plan.h"
#include "linux/sentinel.h"
#include "linux/systemd_scope.h"

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

// A supervisor killed with SIGKILL leaves its directories to its sentinel (sentinel.h); the next
// cage run under the same parent removes what a dead supervisor left should the sentinel have been
// killed too.
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
  run->owner_pid_ = owner_pid;
  // A user scope is created by attach() and removed by systemd once its last process is gone
  // (an empty scope is stopped), which would be as soon as init exits: before the supervisor has
  // read the scope's counters. So a sentinel with nothing to remove joins the scope as a keeper; it
  // leaves in remove(), or on its own when cage dies (its pipe ends), and the scope goes with it.
  if (plan.via == CgroupVia::user_scope) {
    if (int e = run->sentinel_.start({}))
      return unavailable("cgroup", "cannot start the process that keeps the run's scope until it is read",
                         "check the process limit", e);
    return run;
  }
  const std::string name = "/cage-" + std::to_string(owner_pid);
  for (const auto& d : plan.dirs) {
    remove_stale(d.parent, owner_pid);
    std::string dir = d.parent + name;
    if (::mkdir(dir.c_str(), 0755) != 0 && !(errno == EEXIST && remove_dir(dir) && ::mkdir(dir.c_str(), 0755) == 0))
      return unavailable("cgroup " + dir, "cannot create the run's cgroup", "run cage --check", errno);
    run->dirs_.push_back(dir);
  }
  std::vector<std::pair<Sentinel::Kind, std::string>> paths;
  for (const auto& dir : run->dirs_) paths.emplace_back(Sentinel::Kind::cgroup, dir);
  if (int e = run->sentinel_.start(paths))
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
  if (plan_->via == CgroupVia::user_scope) {
    // Under emulation or load the manager can be slow; past this the run falls back or fails.
    constexpr int kScopeTimeoutMs = 30000;
    auto cg = start_user_scope(plan_->scope.socket, "cage-" + std::to_string(owner_pid_) + ".scope",
                               {pid, sentinel_.pid()}, plan_->scope.properties, kScopeTimeoutMs);
    if (!cg) return cg.error();
    dirs_.push_back(plan_->scope.mount + *cg);
    return Ok{};
  }
  for (const auto& dir : dirs_)
    if (int e = write_file(dir + "/cgroup.procs", std::to_string(pid)))
      return unavailable("cgroup " + dir, "cannot move the sandbox into its cgroup", "run cage --check", e);
  return Ok{};
}

Stats Run::stats() const {
  Stats s;
  if (!plan_) return s;
  if (!dirs_.empty()) s.path = dirs_.front();
  for (size_t i = 0; i < dirs_.size(); ++i) {
    const std::string& dir = dirs_[i];
    if (plan_->version == 2) {
      s.oom_kills = keyed(read_small(dir + "/memory.events"), "oom_kill");
      s.memory_peak = number(dir + "/memory.peak");
      s.pids_refused = keyed(read_small(dir + "/pids.events"), "max");
      s.pids_peak = number(dir + "/pids.peak");
      s.cpu_usec = keyed(read_small(dir + "/cpu.stat"), "usage_usec");
    } else if (plan_->dirs.size() > i && plan_->dirs[i].controller == "memory") {
      s.oom_kills = keyed(read_small(dir + "/memory.oom_control"), "oom_kill");
      s.memory_peak = number(dir + "/memory.max_usage_in_bytes");
    } else if (plan_->dirs.size() > i && plan_->dirs[i].controller == "pids") {
      s.pids_refused = keyed(read_small(dir + "/pids.events"), "max");
    }
  }
  return s;
}

void Run::remove() {
  if (plan_ && plan_->via == CgroupVia::user_scope) {
    for (const auto& dir : dirs_) kill_members(dir);  // the keeper too: systemd removes the emptied scope
    dirs_.clear();
    sentinel_.release();
    return;
  }
  for (const auto& dir : dirs_) remove_dir(dir);
  dirs_.clear();
  sentinel_.release();
}

Run::~Run() { remove(); }

}  // namespace cage::lx::cgroup
