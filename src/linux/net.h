// Network mediation on Linux (--net): the supervisor-side proxy and the in-namespace shim that hands
// it the workload's connections. Parent side: prepare() before clone, start() after it. Child side
// (cage's init, inside the new network namespace): spawn_shim() before the workload starts.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"
#include "linux/plan.h"
#include "proxy/event.h"

namespace cage::proxy {
class Server;
}

namespace cage::lx::net {

struct Channel {
  UniqueFd supervisor_end;  // stays in the supervisor
  UniqueFd sandbox_end;     // inherited by the shim inside the namespace
};

// Parent, before clone. For NetPlan::Mode::proxy creates the channel; otherwise returns empty fds.
Result<Channel> prepare(const NetPlan& plan);

// Parent, after clone: serves the proxy until the returned object is destroyed.
class Supervisor {
 public:
  virtual ~Supervisor() = default;
  // Egress hand-off (handoff.h): queues a destination for the proxy to check and dial.
  virtual std::function<void(uint64_t ticket, std::string host, uint16_t port)> dialer() = 0;
  // The proxy itself, for the hand-off's direct path (proxy::Server::dial_direct; thread-safe).
  virtual proxy::Server* direct() = 0;
};
// Returns a null Supervisor when plan.mode is not proxy. The default sink prints denials to stderr
// ("cage: net: denied ..."); the audit log passes its own.
Result<std::unique_ptr<Supervisor>> start(const NetPlan& plan, UniqueFd supervisor_end);
// With hand-off, `handoff_done` and `handoff_waiting` are proxy::Server::set_handoff's.
Result<std::unique_ptr<Supervisor>> start(const NetPlan& plan, UniqueFd supervisor_end, proxy::EventSink sink,
                                          std::function<int(uint64_t, int, int)> handoff_done = {},
                                          std::function<bool(uint64_t)> handoff_waiting = {});

// Child, inside the namespace, after the root is built and `lo` is up. Binds 127.0.0.1:shim_port
// (so the port is ready before the workload starts) and forks the shim (shim::serve), which wipes
// `secrets` (the --secret values in its copy of init's memory) and keeps no other descriptor.
// *ready_fd gets the pipe the shim writes once it has confined itself (-1 without a shim): the
// workload's process passes await_shim just before its exec, so the shim confines itself while the
// workload's process is set up (its privileges, Landlock ruleset and seccomp filters). The caller still owns (and closes)
// sandbox_end. Returns 0 or an errno. Does not allocate.
int spawn_shim(const NetPlan& plan, int sandbox_end, const std::vector<char*>& secrets, int* ready_fd);
// Waits until the shim holds no capability any more (until then it is root in the user namespace,
// in the workload's pid namespace) and closes ready_fd; 0, or ECHILD if the shim died first.
int await_shim(int ready_fd);

}  // namespace cage::lx::net
