// The sentinel: what cage leaves on the host for a run (its cgroup directories, the Landlock-only
// mechanism's private directory) must not outlive a cage killed with SIGKILL, which cannot clean up.
// A sentinel process, forked once those exist, waits on a pipe whose write end only the supervisor
// holds: release() writes a byte ("cleaned up, go") and reaps it; end of file means the supervisor
// died, and the sentinel removes them itself. It stays in the supervisor's cgroups, holds no other
// descriptor, ignores the terminal's and a group's signals (the supervisor answers those), and uses
// raw system calls only (the supervisor may have other threads when it forks). Proved by
// tests/integration/limits_cgroup.sh and fault_kill9.sh.
#pragma once
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace cage::lx {

class Sentinel {
 public:
  enum class Kind { cgroup, tree };  // rmdir, its member processes killed; or removed with its contents
  Sentinel() = default;
  Sentinel(const Sentinel&) = delete;
  Sentinel& operator=(const Sentinel&) = delete;
  ~Sentinel() { release(); }
  // Forks the sentinel for these paths (at most 4, each under 512 bytes). 0 or an errno.
  int start(const std::vector<std::pair<Kind, std::string>>& paths);
  // The supervisor has removed them itself: the sentinel leaves and is reaped. Idempotent.
  void release();
  int pid() const { return pid_; }

 private:
  UniqueFd pipe_;  // the write end
  int pid_ = -1;
};

}  // namespace cage::lx
