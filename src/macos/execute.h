// macos::execute: carries out a macOS run (the only code that acts on the Mac). See execute.cc.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "policy/policy.h"
#include "proxy/event.h"

namespace cage::macos {

inline constexpr const char* kSandboxExec = "/usr/bin/sandbox-exec";

struct MacPlan;

// How the run ended: the wait status of sandbox-exec's process (the command's, once it exec'd).
struct MacOutcome {
  int wait_status = 0;
  bool timed_out = false;  // --timeout stopped it
  bool aborted = false;    // abort_fd fired: cage killed it (the audit log failed under --audit-required)
  int exit_status = 0;     // cage's exit status for it: the command's, 128+N for signal N, 124 on --timeout
};

// What the report session learns while a run happens (macos/session.cc). Each member may be empty.
struct RunHooks {
  proxy::EventSink net;  // each --net decision of the proxy; empty: proxy::print_denials
  // After the profile is made, before sandbox-exec starts: records the spawn; an Error refuses the run.
  std::function<Status(const MacPlan&)> spawning;
  std::function<void(const char* reason, int sig)> killed;  // cage signalled the command ("timeout")
  int abort_fd = -1;  // readable: kill the command now
};

// Runs the policy's command under sandbox-exec and returns how it ended, or an Error if the sandbox
// could not be set up or sandbox-exec failed before starting the command (sandbox_exec_failure).
// `sandbox_exec` is replaced only by tests: on Linux a stand-in that runs the command unconfined checks
// everything but the sandbox (tests/unit/macos_execute_test.cc).
Result<MacOutcome> run(const policy::Policy& policy,
                       const std::vector<std::pair<std::string, std::string>>& caller_env,
                       const RunHooks& hooks, const std::string& sandbox_exec = kSandboxExec);
// run() without a report: the exit status alone.
Result<int> execute(const policy::Policy& policy,
                    const std::vector<std::pair<std::string, std::string>>& caller_env,
                    const std::string& sandbox_exec = kSandboxExec);

// sandbox-exec's own failures, told apart from the command's exit with the same number. sandbox-exec
// exits 64 (usage), 65 (the profile did not compile) or 71 (sandbox_init or its execvp of the command
// failed) without ever running the command; a command may exit 65 or 71 itself. The process's name
// when it ended (`name_at_exit`: p_comm, read from the unreaped zombie) says which: still
// "sandbox-exec" means the command was never exec'd. An Error for sandbox-exec's failure (71:
// exec_failed, exit 126; any other: spawn_sandbox_unavailable, 125); nullopt for the command's own
// status, and when the name is unknown ("") or the command is itself named sandbox-exec.
std::optional<Error> sandbox_exec_failure(int wait_status, const std::string& name_at_exit,
                                          const std::string& command);

// --check on macOS: sandbox-exec run for real on /usr/bin/true, not only looked for. Each probe says
// what must happen: a trivial (allow default) profile runs it (sandbox-exec and sandbox_init work), a
// bare (deny default) one must not (its execvp(3) gets EPERM: the sandbox denies), and cage's own
// profile for the given flags runs it (the generated SBPL parses and lets a program start).
struct Probe {
  std::string name, profile;
  bool must_run;    // exit 0 expected; else a failure that is not "could not start sandbox-exec"
  int status = -1;  // exit status (128+N for signal N); -1: sandbox-exec could not be started
};
inline constexpr const char* kProbeCommand = "/usr/bin/true";
std::vector<Probe> check_probes(const std::string& cage_profile);  // cage_profile "": that probe is left out
bool probe_passed(const Probe& p);
// Runs one probe: sandbox-exec -p PROFILE -- /usr/bin/true, its output to /dev/null.
int run_probe(const std::string& sandbox_exec, const std::string& profile);

}  // namespace cage::macos
