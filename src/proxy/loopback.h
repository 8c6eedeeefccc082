// The proxy for hosts whose sandbox cannot hold a listener of cage's own (macOS, Windows): it
// listens on the host's 127.0.0.1 at an ephemeral port, and the sandbox profile allows TCP to that
// port only. An acceptor thread takes connections and hands them to the same proxy::Server the
// Linux backend uses, over the same SCM_RIGHTS channel the Linux shim feeds (POSIX hosts), so there
// is one protocol implementation everywhere. Test: tests/unit/proxy_loopback_test.cc.
#pragma once
#include <cstdint>
#include <memory>

#include "common/error.h"
#include "proxy/allowlist.h"
#include "proxy/event.h"
#include "proxy/server.h"

namespace cage::proxy {

class LoopbackProxy {
 public:
  // Binds 127.0.0.1:0, starts the server and acceptor threads; errors name --net.
  static Result<std::unique_ptr<LoopbackProxy>> start(Allowlist allow, EventSink sink, ServerOptions opt = {});
  ~LoopbackProxy();  // stops
  LoopbackProxy(const LoopbackProxy&) = delete;
  LoopbackProxy& operator=(const LoopbackProxy&) = delete;

  uint16_t port() const { return port_; }
  // Stops accepting and serving; open tunnels are closed. Idempotent; joins both threads.
  void stop();

  struct Impl;

 private:
  explicit LoopbackProxy(std::unique_ptr<Impl> impl, uint16_t port);
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
};

// The default event sink for an interactive run: quiet except denials, which a user must see to fix
// the allowlist ("cage: net: denied (connect) evil.com:443 is not in the --net allowlist ...").
void print_denials(const NetEvent& e);

}  // namespace cage::proxy
