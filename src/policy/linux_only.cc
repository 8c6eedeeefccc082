// The policy elements only the Linux backend carries out, in one table: the macOS and Windows plans
// refuse each by the input that asked for it (spawn_sandbox_unavailable), never drop it silently.
#include "policy/policy.h"

namespace cage::policy {

namespace {

struct LinuxOnly {
  // The input that asks for it, or null when the policy does not.
  const std::string* (*asked)(const Policy& p);
  const char* what;    // "... is not implemented on OS yet"
  const char* remedy;
};

const LinuxOnly kLinuxOnly[] = {
    {[](const Policy& p) { return p.run_as ? &p.run_as->origin : nullptr; },
     "--uid (another id inside a user namespace)", "drop --uid: the workload runs as your own user"},
    {[](const Policy& p) { return p.scratch ? &p.scratch->origin : nullptr; }, "--scratch",
     "keep state in a directory granted with --rw"},
    {[](const Policy& p) { return p.env.secrets.empty() ? nullptr : &p.env.secrets.front().origin; }, "--secret",
     "pass the variable with --env NAME from cage's environment"},
    {[](const Policy& p) { return p.limits.max_stdout || p.limits.max_stderr ? &p.limits.output_origin : nullptr; },
     "output caps", "drop --max-output/--max-stdout/--max-stderr and cap the output where it is read"},
    {[](const Policy& p) { return p.exec.empty() ? nullptr : &p.exec.front().origin; },
     "--exec (an allowlist of what may be executed)",
     "drop --exec and [exec] allow; [exec] run (the pinned command line) works everywhere"},
    {[](const Policy& p) {
       static const std::string flag = "--explain";
       return p.explain ? &flag : nullptr;
     },
     "--explain (a report of what the sandbox refused)", "drop --explain"},
    {[](const Policy& p) { return p.learn.empty() ? nullptr : &p.learn_origin; },
     "--learn (a profile written from what the run used)", "drop --learn"},
};

}  // namespace

Status refuse_linux_only(const Policy& p, const std::string& os) {
  for (const auto& l : kLinuxOnly)
    if (const std::string* origin = l.asked(p))
      return unavailable(*origin, std::string(l.what) + " is not implemented on " + os + " yet", l.remedy);
  return Ok{};
}

}  // namespace cage::policy
