// run.cc: one Windows run from a validated Policy (parent side): the proxy first (its port is part
// of the plan), then this host's facts, compile, execute. The proxy runs on a thread of cage's own
// process, outside the AppContainer.
#include <iostream>
#include <memory>
#include <string>

#include "proxy/loopback.h"
#include "windows/execute.h"

namespace cage::win {

namespace {

// The same LoopbackProxy as on macOS and Linux's Landlock-only mechanism: 127.0.0.1 at an ephemeral
// port, with the run's secret in the *_PROXY URLs; the run reaches it only from the loopback-exempt
// cage.net container (docs/windows.md).
Result<std::unique_ptr<proxy::LoopbackProxy>> start_proxy(const policy::Policy& pol) {
  proxy::ServerOptions opt;
  opt.max_connections = proxy::connection_limit(pol.limits.memory_bytes);
  return proxy::LoopbackProxy::start(proxy::Allowlist(pol.net), proxy::print_denials, opt);
}

}  // namespace

Result<int> run(const policy::Policy& pol, const Environ& env) {
  std::unique_ptr<proxy::LoopbackProxy> proxy;
  if (!pol.net.empty() && !pol.share_net) {
    auto p = start_proxy(pol);
    if (!p) return p.error();
    proxy = std::move(*p);
  }
  auto plan = compile(
      pol, real_host_facts(pol, env, proxy ? proxy->port() : 0, proxy ? proxy->secret() : std::string()),
      env);
  if (!plan) return plan.error();
  // What this run cannot enforce is said at every run, not only by --dry-run: never a silently
  // weaker sandbox (as Linux warns of a limit no cgroup enforces).
  for (const auto& g : plan->gaps) std::cerr << "cage: warning: not enforced on Windows: " << g << "\n";
  return execute(*plan);
}

Result<std::string> dry_run(const policy::Policy& pol, const Environ& env, bool json, bool verbose) {
  auto plan = compile(pol, real_host_facts(pol, env, 0), env);
  if (!plan) return plan.error();
  return json ? render_json(*plan) : verbose ? render_text(*plan) : render_summary(*plan, pol);
}

}  // namespace cage::win
