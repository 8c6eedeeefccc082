// The compile side of cgroup limits (cgroup_plan.cc, pure) and the supervisor side (cgroup.cc).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "linux/sentinel.h"
#include "linux/host_view.h"
#include "linux/plan.h"

namespace cage::lx {

// Fills plan.cgroup from plan.limits; appends fallback rlimits to plan.limits.rlimits. With
// --strict-limits a limit no cgroup can enforce is spawn_sandbox_unavailable naming the limit.
// runtime_dir: the caller's $XDG_RUNTIME_DIR, where its systemd user manager listens ("" for
// /run/user/UID).
Status compile_cgroups(Plan& plan, const HostView& host, const std::string& runtime_dir = "");
// 33554432 -> "32M"; sizes that are not whole units stay in bytes.
std::string format_size(uint64_t bytes);

namespace cgroup {

// What the run's cgroups reported when it ended (cgroup.cc, parent side). -1: not known.
struct Stats {
  int64_t oom_kills = -1;       // memory.events oom_kill (v2) / memory.oom_control oom_kill (v1)
  int64_t memory_peak = -1;     // memory.peak (v2) / memory.max_usage_in_bytes (v1), bytes
  int64_t pids_refused = -1;    // pids.events max: forks refused because pids.max was reached
  int64_t pids_peak = -1;       // pids.peak (v2; Linux 6.1 and later): the most tasks at once
  int64_t cpu_usec = -1;        // cpu.stat usage_usec (v2); v1 leaves it to getrusage
  std::string path;             // the run's (first) cgroup directory, e.g. the user scope's
};

// The run's cgroup directories, removed on destruction (every exit path of the supervisor).
class Run {
 public:
  Run() = default;
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  ~Run();
  // Removes stale "cage-<pid>" directories whose supervisor is dead, creates ours and writes limits.
  static Result<std::unique_ptr<Run>> create(const CgroupPlan& plan, int owner_pid);
  // Moves pid (cage's init, before it starts the workload) into every directory of the run; for a
  // user scope, asks the user manager for "cage-<owner pid>.scope" holding it.
  Status attach(int pid);
  Stats stats() const;
  // Kills whatever is left (v2: cgroup.kill; else SIGKILL to each listed pid) and removes the directories.
  void remove();

 private:
  const CgroupPlan* plan_ = nullptr;
  int owner_pid_ = 0;
  std::vector<std::string> dirs_;  // created, parallel to plan_->dirs
  Sentinel sentinel_;              // removes them should the supervisor die first
};

}  // namespace cgroup
}  // namespace cage::lx
