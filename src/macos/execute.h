// macos::execute: carries out a macOS run (the only code that acts on the Mac). See execute.cc.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "policy/policy.h"

namespace cage::macos {

inline constexpr const char* kSandboxExec = "/usr/bin/sandbox-exec";

// Runs the policy's command under sandbox-exec and returns its exit status (128+N for signal N, 124
// on --timeout), or an Error if the sandbox could not be set up. `sandbox_exec` is replaced only by
// tests: on Linux a stand-in that runs the command unconfined checks everything but the sandbox
// (tests/unit/macos_execute_test.cc).
Result<int> execute(const policy::Policy& policy, const std::vector<std::pair<std::string, std::string>>& caller_env,
                    const std::string& sandbox_exec = kSandboxExec);

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
