// lx::execute: carries out a compiled Plan (the only code that acts on the kernel). Returns the exit
// status cage should exit with, or the Error that kept the workload from starting.
#pragma once
#include <functional>

#include "common/error.h"
#include "linux/cgroup_plan.h"
#include "linux/explain_notify.h"
#include "linux/output_cap.h"
#include "linux/plan.h"
#include "linux/tmpfs_usage.h"
#include "proxy/event.h"

namespace cage::lx {

struct RunOutcome {
  int exit_status = 0;
  bool timed_out = false;
  int wait_status = 0;  // the workload's raw wait status
  bool have_wait_status = false;  // false: init died before reporting (its own status is in wait_status)
  bool aborted = false;           // RunHooks::abort_fd fired: the sandbox was killed (--audit-required)
  // The signal exit_status stands for (128+N) and cage should die of once its report is done: the
  // workload's, or the SIGTERM or SIGHUP cage got when it had to end a run that ignored it. 0: none.
  int died_of = 0;
  cgroup::Stats cgroup;           // counters of the run's cgroups, read before they were removed
  std::vector<std::string> offline_lookups;  // without --net: the names the workload looked up
  std::vector<output_cap::StreamStats> output;  // each capped stream (--max-output): counts and hash
  std::vector<TmpfsUsage> tmpfs;             // each sized private tmpfs as the run left it
  explain_notify::Log explained;             // --explain: the workload's observed path calls
  std::string private_dir;  // landlock_only: where the plan's <private> HOME and TMPDIR were (removed now)
};

// What the audit log and the result learn from a run while it happens.
struct RunHooks {
  proxy::EventSink net;                                             // every proxy decision
  std::function<void(const char* reason, int signal)> killed;       // cage signalled the sandbox
  int abort_fd = -1;  // readable: kill the sandbox now (the audit log failed under --audit-required)
  // landlock_only with --net (landlock_only.cc): the port of the host-loopback proxy, already serving.
  uint16_t proxy_port = 0;
  // landlock_only: the run's private HOME and TMPDIR, which init removes if the supervisor dies.
  std::string private_dir;
  // The user manager refused the scope: these limits fall back (to rlimits) for the reason given.
  std::function<void(const std::vector<Unenforced>&, const std::string& reason)> limits_fallback;
  // --max-output: hash each capped stream (the result records the SHA-256); off without --result.
  bool hash_output = true;
};

Result<RunOutcome> execute(const Plan& plan, const RunHooks& hooks = {});
// The namespaces path (execute.cc); execute() (landlock_only.cc) prepares a landlock_only plan first.
Result<RunOutcome> execute_plan(const Plan& plan, const RunHooks& hooks);

// --check: the host's probes and the intended run's plan (see check.cc). Exit status.
int check_host(bool json, const Result<policy::Policy>& intended,
               const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace cage::lx
