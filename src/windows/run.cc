// run.cc: one Windows run from a validated Policy (parent side): the proxy first (its port is part
// of the plan), then this host's facts, compile, execute. The proxy runs on a thread of cage's own
// process, which the WFP filters do not restrict.
#include <memory>

#include "windows/execute.h"

namespace cage::win {

namespace {

struct ProxyHandle {
  uint16_t port = 0;
};

Result<std::unique_ptr<ProxyHandle>> start_proxy(const policy::Policy& pol) {
  (void)pol;
  return unavailable("--net", "this Windows build has no proxy yet",
                     "drop --net (no network), or use --share-net for the host network unfiltered");
}

}  // namespace

Result<int> run(const policy::Policy& pol, const Environ& env) {
  std::unique_ptr<ProxyHandle> proxy;
  if (!pol.net.empty() && !pol.share_net) {
    auto p = start_proxy(pol);
    if (!p) return p.error();
    proxy = std::move(*p);
  }
  auto plan = compile(pol, real_host_facts(pol, env, proxy ? proxy->port : 0), env);
  if (!plan) return plan.error();
  return execute(*plan);
}

Result<std::string> dry_run(const policy::Policy& pol, const Environ& env, bool json) {
  auto plan = compile(pol, real_host_facts(pol, env, 0), env);
  if (!plan) return plan.error();
  return json ? render_json(*plan) : render_text(*plan);
}

}  // namespace cage::win
