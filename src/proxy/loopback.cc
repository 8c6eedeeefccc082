// LoopbackProxy (see loopback.h): a listening socket on 127.0.0.1:0 handed to
// Server::add_listener, a secret from the system's random source, and one serving thread.
#include "proxy/loopback.h"

#if !defined(_WIN32)
#include <pthread.h>
#include <signal.h>
#endif

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <random>

#include "common/json.h"
#include "proxy/report_limit.h"
#include "proxy/socket_compat.h"

namespace cage::proxy {

namespace {

// 128 bits from std::random_device: getrandom/urandom on Linux, arc4random on macOS, rand_s
// (RtlGenRandom) on Windows.
Result<std::string> make_secret() {
  try {
    std::random_device rd;
    static const char kHex[] = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < 4; ++i) {
      uint32_t v = rd();
      for (int k = 0; k < 8; ++k, v >>= 4) s += kHex[v & 15];
    }
    return s;
  } catch (const std::exception&) {
    return unavailable("--net", "no randomness for the proxy's secret", "check the system's random source");
  }
}

}  // namespace

Result<std::unique_ptr<LoopbackProxy>> LoopbackProxy::start(Allowlist allow, EventSink sink,
                                                            ServerOptions opt, uint16_t port) {
  auto secret = make_secret();
  if (!secret) return secret.error();
  opt.secret = *secret;
  raise_fd_limit();
  UniqueSocket l(open_stream_socket(AF_INET));
  if (!l.valid())
    return unavailable("--net", "cannot create the proxy's socket", "check the fd limit", last_socket_error());
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  socklen_t len = sizeof a;
#if defined(_WIN32)
  // Without it, a socket of another program with SO_REUSEADDR could bind the same port and take
  // connections meant for the proxy (Microsoft, "Using SO_REUSEADDR and SO_EXCLUSIVEADDRUSE").
  if (port != 0 && set_socket_option(l.get(), SOL_SOCKET, SO_EXCLUSIVEADDRUSE, 1) != 0)
    return unavailable("--net", "cannot reserve 127.0.0.1:" + std::to_string(port) + " for the proxy",
                       "report this with `cage --check`", last_socket_error());
#endif
  if (bind(os_socket(l.get()), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      listen(os_socket(l.get()), 128) != 0 || getsockname(os_socket(l.get()), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return unavailable(
        "--net",
        "cannot listen on 127.0.0.1" + (port ? ":" + std::to_string(port) : std::string()) + " for the proxy",
        port ? "another program holds the port" : "check the loopback interface", last_socket_error());
  std::unique_ptr<LoopbackProxy> p(new LoopbackProxy(std::move(allow), opt, std::move(sink)));
  if (int e = p->server_.add_listener(std::move(l)); e != 0)
    return unavailable("--net", "cannot watch the proxy's socket", "check the fd limit", -e);
  p->port_ = ntohs(a.sin_port);
  p->secret_ = *secret;
  LoopbackProxy* raw = p.get();
#if defined(_WIN32)
  p->thread_ = std::thread([raw] { raw->server_.run(); });
#else
  // The serving thread takes no signal: the caller's signalfd/sigwait (SIGCHLD above all) must see
  // every one, and a thread with a signal unblocked would swallow it. It inherits this mask.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  p->thread_ = std::thread([raw] { raw->server_.run(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
#endif
  return p;
}

LoopbackProxy::~LoopbackProxy() { stop(); }

void LoopbackProxy::stop() {
  if (stopped_) return;
  stopped_ = true;
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

namespace {
std::mutex g_print_mu;
ReportLimit g_print_limit;  // under g_print_mu
constexpr const char* kHeldWhere = "each is counted in --result, and in --audit";
}  // namespace

void print_denials(const NetEvent& e) {
  if (e.decision == Decision::allowed) return;
  if (e.status == 407) return;  // a client's first try before it answers the Basic challenge
  // One line per destination and outcome per ReportLimit::kRepeat, a few a second in all
  // (report_limit.h): a client retrying a refused host in a loop must not flood the terminal.
  size_t held = 0;
  {
    std::lock_guard lock(g_print_mu);
    std::string key = std::string(to_string(e.decision)) + " " + host_port_text(e.host, e.port) + " " +
                      std::to_string(e.status);
    if (!g_print_limit.admit(key, ReportLimit::Clock::now(), held)) return;
  }
  std::string msg = e.reason.rfind("cage: ", 0) == 0 ? e.reason.substr(6) : e.reason;
  std::string more = held ? " [" + std::to_string(held) + " more lines held back; " + kHeldWhere + "]" : "";
  // The host name is the workload's (or a DNS query's) bytes: shown escaped, never sent raw to the
  // caller's terminal (an ESC sequence could retitle it or, on some terminals, answer back input).
  std::fprintf(stderr, "cage: net: %s (%s) %s%s\n", std::string(to_string(e.decision)).c_str(),
               e.protocol.c_str(), printable(msg).c_str(), more.c_str());
}

void print_denials_held() {
  size_t held = 0;
  {
    std::lock_guard lock(g_print_mu);
    held = g_print_limit.take_held();
  }
  if (held) std::fprintf(stderr, "cage: net: %zu more lines held back; %s\n", held, kHeldWhere);
}

}  // namespace cage::proxy
