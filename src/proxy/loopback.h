// The proxy for sandboxes that cannot hold a listener of cage's own (Linux's Landlock-only
// mechanism, macOS, Windows): the same proxy::Server as on Linux, listening on the host's 127.0.0.1 at an
// ephemeral port (Server::add_listener), on its own thread. Any local process can reach that port,
// so every request must carry the run's secret (ServerOptions::secret; the *_PROXY URLs from
// proxy_environment_with_secret carry it). Test: tests/unit/proxy_loopback_test.cc.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "common/error.h"
#include "proxy/allowlist.h"
#include "proxy/event.h"
#include "proxy/server.h"

namespace cage::proxy {

class LoopbackProxy {
 public:
  // Binds 127.0.0.1:port (0: an ephemeral one) with a fresh random secret and starts serving; errors
  // name --net and carry the socket error. Windows' --net slots name their port (net_slots.h); there
  // the socket is bound with SO_EXCLUSIVEADDRUSE, so no other socket can bind that port while it lives.
  static Result<std::unique_ptr<LoopbackProxy>> start(Allowlist allow, EventSink sink, ServerOptions opt = {},
                                                      uint16_t port = 0);
  ~LoopbackProxy();  // stops
  LoopbackProxy(const LoopbackProxy&) = delete;
  LoopbackProxy& operator=(const LoopbackProxy&) = delete;

  uint16_t port() const { return port_; }
  const std::string& secret() const { return secret_; }  // 32 hex digits
  // Stops serving; open tunnels are closed. Idempotent; joins the thread.
  void stop();

 private:
  LoopbackProxy(Allowlist allow, ServerOptions opt, EventSink sink) : server_(std::move(allow), opt, std::move(sink)) {}
  Server server_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::string secret_;
  bool stopped_ = false;
};

// The default event sink for an interactive run: quiet except denials, which a user must see to fix
// the allowlist ("cage: net: denied (connect) evil.com:443 is not in the --net allowlist ..."), and
// failures ("cage: net: failed (connect) connecting to a.com:443 failed: Connection refused"),
// rate-limited (report_limit.h).
void print_denials(const NetEvent& e);
// At the end of a run: one line saying how many lines print_denials held back since its last line
// ("cage: net: 19990 more lines held back ..."), when it held any.
void print_denials_held();

}  // namespace cage::proxy
