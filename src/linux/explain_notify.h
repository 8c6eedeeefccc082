// --explain's observer (supervisor side): the path calls of the workload (opens, stats, execs,
// creates, removes, renames) become notifications of connect_notify's one listener (the kernel
// allows one per filter chain), and the supervisor records the path and answers
// SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel then runs the call exactly as it would have, with
// every mount, Landlock rule and filter still in force. The path is read once; a racing thread can
// only make the record wrong. Proved by tests/integration/explain.sh.
#pragma once
#include <linux/seccomp.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "linux/explain.h"

namespace cage::lx::explain_notify {

// The observed system calls of this architecture (native numbers), for the notification filter.
const std::vector<int>& calls();
bool observes(int nr);

// A call the seccomp profile refused with an errno or killed for (seccomp_observe.h), by name.
struct Refusal {
  explain::Seen seen;
  int error = 0;       // what the workload got (0 when killed)
  std::string remedy;  // "--seccomp relaxed", or "" when no profile allows it
  bool killed = false;  // the profile kills for it: cage killed the caller's process (SIGKILL)
};

// What one run's observer saw: each distinct access once, with a count.
struct Log {
  explain::Accesses seen;
  std::map<std::string, Refusal> refused;  // the profile's errno answers, by call name
  explain::Accesses direct;  // Landlock only: connects that bypassed the proxy, by HOST:PORT
  uint64_t dropped = 0;  // distinct accesses past the cap, not recorded
  // The threads that made a notified call (--learn's task figure when no cgroup counts them), at
  // most kMaxDistinct; a thread that made none is not seen.
  std::set<int> tasks;
};

// Records the access one notification names into log. still_waiting re-checks the request id after
// the reads, so a pid reused by another process is never read for this one.
void observe(const seccomp_notif& req, bool (*still_waiting)(void*), void* ctx, Log& log);

// Records a connect the Landlock-only mediator refused because it did not go to cage's proxy.
void direct(const seccomp_notif& req, std::string host_port, Log& log);

// Records a call the profile refused with `error` (the caller answers it with that errno), or, when
// killed, one whose process the caller is about to kill.
void refused(const seccomp_notif& req, std::string name, int error, std::string remedy, Log& log,
             bool killed = false);

}  // namespace cage::lx::explain_notify
