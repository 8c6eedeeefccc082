// The macOS run's records (--result "cage.result/2", --audit "cage.audit/1"), built from what a run
// produced: the spawn event (policy, the seatbelt profile's digest, what macOS does not enforce),
// the exit event and the result. Pure, so tests/unit/macos_report_test.cc builds every record of a
// macOS run on Linux and checks it against docs/schema; the session that gathers the facts and
// writes them is macos/session.cc (on the Mac).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/run_record.h"
#include "common/toml.h"
#include "macos/compile.h"
#include "policy/canonical.h"
#include "policy/policy.h"

namespace cage::macos::report {

using record::RunClass;

inline constexpr const char* kMechanism = "seatbelt";  // sandbox-exec with cage's SBPL profile

// How the workload ended, decoded from its wait status by the executor.
struct Ended {
  std::optional<int> exit_code;  // it exited with this code
  int signal = 0;                // or died of this signal
  bool timed_out = false;        // cage stopped it (--timeout)
  bool aborted = false;          // cage killed it: the audit log failed under --audit-required
  int exit_status = 0;           // cage's own exit status for it (128+N, 124, ...)
};

struct RunFacts {
  std::string run_id, policy_hash;  // hash empty when the policy never validated
  toml::table labels;
  std::optional<Error> error;  // cage's own error: the workload never started
  std::optional<Ended> ended;  // the run, when it happened
  int64_t wall_ms = 0;
  int64_t user_ms = -1, system_ms = -1;  // getrusage(RUSAGE_CHILDREN)
  int64_t maxrss_bytes = -1;             // the largest single process (macOS gives ru_maxrss in bytes)
  record::NetTotals net;
  std::vector<toml::table> unenforced;  // limits_not_enforced entries
  bool compiled = false;                // the profile was made: the mechanism is known
  bool audit_requested = false, audit_ok = true;
  std::string audit_error;
};

// Linux's order, without what macOS cannot tell (no cgroup: no oom_killed or pids_exhausted; no
// seccomp; no private tmpfs): cage's error, aborted (sandbox_unavailable), timed_out, signaled, then
// for a non-zero exit network_denied when --net denied something; completed otherwise.
RunClass classify(const RunFacts& f);

// The limits the plan could not enforce, as limits_not_enforced entries: {limit "--memory 512M",
// reason}. `unenforced` is MacPlan::unenforced ("--memory: macOS has no per-run memory limit").
std::vector<toml::table> unenforced_fields(const policy::Policy& p,
                                           const std::vector<std::string>& unenforced);

policy::Enforcement enforcement();  // seatbelt, nothing degraded
toml::table spawn_fields(const policy::Policy& p, const MacPlan& plan, const std::string& hash,
                         const std::string& kernel, const std::string& arch);
toml::table exit_fields(const RunFacts& f);
toml::table result_table(const RunFacts& f);

}  // namespace cage::macos::report
