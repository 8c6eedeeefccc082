// run.cc: one Windows run from a validated Policy (parent side): the proxy first (its port is part
// of the plan), then this host's facts, compile, execute. The proxy runs on a thread of cage's own
// process, which the WFP filters do not restrict.
#include <memory>
#include <string>

#include "windows/execute.h"
#if defined(CAGE_HAVE_WINDOWS_PROXY)
#include "proxy/loopback.h"
#endif

namespace cage::win {

namespace {

#if defined(CAGE_HAVE_WINDOWS_PROXY)
// CMakeLists.txt defines CAGE_HAVE_WINDOWS_PROXY once src/proxy/ has a Windows event loop: the same
// LoopbackProxy as on macOS, on 127.0.0.1 at an ephemeral port that the WFP permit filter names.
using ProxyHandle = proxy::LoopbackProxy;

Result<std::unique_ptr<ProxyHandle>> start_proxy(const policy::Policy& pol) {
  return proxy::LoopbackProxy::start(proxy::Allowlist(pol.net), proxy::print_denials);
}
#else
struct ProxyHandle {
  uint16_t port() const { return 0; }
  std::string secret() const { return {}; }
};

Result<std::unique_ptr<ProxyHandle>> start_proxy(const policy::Policy&) {
  return unavailable("--net", "this Windows build has no proxy yet (src/proxy has no Windows event loop)",
                     "drop --net (no network), or use --share-net for the host network unfiltered");
}
#endif

}  // namespace

Result<int> run(const policy::Policy& pol, const Environ& env) {
  std::unique_ptr<ProxyHandle> proxy;
  if (!pol.net.empty() && !pol.share_net) {
    auto p = start_proxy(pol);
    if (!p) return p.error();
    proxy = std::move(*p);
  }
  auto plan = compile(
      pol, real_host_facts(pol, env, proxy ? proxy->port() : 0, proxy ? proxy->secret() : std::string()),
      env);
  if (!plan) return plan.error();
  return execute(*plan);
}

Result<std::string> dry_run(const policy::Policy& pol, const Environ& env, bool json) {
  auto plan = compile(pol, real_host_facts(pol, env, 0), env);
  if (!plan) return plan.error();
  return json ? render_json(*plan) : render_text(*plan);
}

}  // namespace cage::win
