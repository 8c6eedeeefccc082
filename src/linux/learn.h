// --learn FILE, the pure half: the learning view a trusted command runs in (the host read-only,
// the known secret locations hidden, writes only where the user's grants and the working directory
// allow) and the profile written from what it used. The observer is --explain's (explain_notify.h);
// what it saw is judged against the plan of the user's own flags (the baseline), and each access
// that plan would refuse becomes a grant, a secret a commented-out line. Unit tested in
// tests/unit/linux_learn_test.cc; the whole in tests/integration/learn_*.sh.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "linux/explain.h"
#include "linux/plan.h"
#include "policy/policy.h"

namespace cage::lx::learn {

// The credential stores the learning view hides, relative to $HOME (cage(1) LEARN lists them).
const std::vector<std::string>& secret_locations();

// Whether a path is a credential: beneath one of secret_locations() in home, or a .env file anywhere.
bool is_secret(const std::string& path, const std::string& home);

// The policy the learning run is carried out under: base (the user's flags) plus the host read-only,
// private /tmp, /var/tmp and /run, the working directory writable and each present secret hidden.
// Refuses (invalid_policy / usage_error naming --learn) what would hand more than meant or learn
// nothing: a working directory that is /, $HOME or shared, --share-net, --no-system, --exec, --explain.
Result<policy::Policy> learning_view(const policy::Policy& base,
                                     const std::vector<std::string>& present_secrets);

// The baseline plan with the fresh root it is built on made explicit: explain::classify judges a
// path no mount covers as unknown (it is not the user's to grant there); for learning, a host path
// outside the view (/opt/tool, /srv/data) is exactly what the profile must grant.
Plan with_root(const Plan& baseline);

struct Observed {
  std::vector<std::string> argv;
  std::string date;  // UTC, ISO 8601
  std::string home, cwd;
  std::vector<std::string> writable;                    // where the learning view let writes land
  std::vector<std::string> user_ro, user_rw, env_pass;  // the user's own flags while learning, kept
  std::vector<explain::Finding> findings;               // explain::classify(with_root(baseline), ...)
  std::set<std::string> net_used;                       // "host:port" the proxy let through
  uint64_t dropped = 0;                                 // accesses past the observer's cap
  int exit_status = 0;
  bool offline = false;  // no --net while learning: the run had only its own loopback
  // The limits the run reached, -1 when not measured, each with where the figure comes from.
  int64_t memory_peak = -1;  // bytes: the run's cgroup memory.peak, else ru_maxrss
  std::string memory_source;
  int64_t tasks_peak = -1;  // processes and threads: the cgroup's pids.peak, else those the observer saw
  std::string tasks_source;
};

// The profile, as TOML cage --profile loads: a comment header (command, date, what was observed),
// [fs] ro / rw folded and deduplicated, [net] allow; secrets, writes the learning view refused and
// paths that would grant a home or the root are commented out, each with why. The limits observed
// close it as a commented-out [limits] with a suggested ceiling (memory_suggested, tasks_suggested).
std::string render_profile(const Observed& o);

// The ceiling suggested for an observed figure: headroom so a rerun never fails on variance.
// memory: twice the peak in whole MiB, at least 64 MiB; tasks: four times the figure, at least 64.
int64_t memory_suggested(int64_t peak_bytes);
int64_t tasks_suggested(int64_t tasks);

}  // namespace cage::lx::learn
