// --net on Linux: the socketpair between the supervisor and the in-namespace shim (prepare, parent,
// before clone), the supervisor's proxy thread (start, parent, after clone) and the shim's launch
// (spawn_shim, cage's init inside the new namespaces, before the workload). The listening socket is
// bound here, before the fork, so the workload can never race the shim to the port or find it
// closed. Proven by tests/integration/net_*.sh.
#include "common/exit_status.h"
#include "linux/net.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "proxy/loopback.h"
#include "proxy/server.h"
#include "proxy/socket_compat.h"
#include "shim/shim.h"

namespace cage::lx::net {
namespace {

class ProxySupervisor final : public Supervisor {
 public:
  ProxySupervisor(const NetPlan& plan, proxy::ServerOptions opt, proxy::EventSink sink)
      : server_(proxy::Allowlist(plan.allow), std::move(opt), std::move(sink)) {
    if (plan.transparent.enabled) {
      // The exact names keep the addresses compile gave them (shown by --dry-run): same order.
      proxy::SyntheticMap names(plan.transparent.synthetic_base, plan.transparent.synthetic_prefix);
      for (const auto& n : plan.transparent.names) names.assign(n.first);
      server_.enable_transparent(std::move(names));
    }
  }
  std::function<void(uint64_t, std::string, uint16_t)> dialer() override {
    return [this](uint64_t ticket, std::string host, uint16_t port) { server_.hand_off(ticket, std::move(host), port); };
  }
  proxy::Server* direct() override { return &server_; }
  void set_handoff(proxy::Server::HandoffDone done, proxy::Server::HandoffWaiting waiting) {
    server_.set_handoff(std::move(done), std::move(waiting));
  }
  ~ProxySupervisor() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  int begin(UniqueFd fd, bool listener) {
    int e = listener ? server_.add_listener(std::move(fd)) : server_.add_channel(std::move(fd));
    if (e != 0) return e < 0 ? e : -e;
    thread_ = std::thread([this] { server_.run(); });
    return 0;
  }

 private:
  proxy::Server server_;
  std::thread thread_;
};

}  // namespace

Result<Channel> prepare(const NetPlan& plan) {
  Channel ch;
  if (plan.mode != NetPlan::Mode::proxy && plan.offline_resolver == 0) return ch;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return Error{ErrorClass::internal_error, "cannot create the proxy channel", {}, "--net", errno};
  ch.supervisor_end.reset(sv[0]);
  ch.sandbox_end.reset(sv[1]);
  return ch;
}

Result<std::unique_ptr<Supervisor>> start(const NetPlan& plan, UniqueFd supervisor_end) {
  return start(plan, std::move(supervisor_end), proxy::print_denials);
}

Result<std::unique_ptr<Supervisor>> start(const NetPlan& plan, UniqueFd supervisor_end, proxy::EventSink sink,
                                          std::function<int(uint64_t, int, int)> handoff_done,
                                          std::function<bool(uint64_t)> handoff_waiting) {
  if (plan.mode != NetPlan::Mode::proxy) return std::unique_ptr<Supervisor>();
  proxy::raise_fd_limit();  // each tunnel holds two sockets and two pipes
  proxy::ServerOptions opt;
  opt.max_connections = plan.max_connections;
  auto sup = std::make_unique<ProxySupervisor>(plan, std::move(opt), std::move(sink));
  if (handoff_done) sup->set_handoff(std::move(handoff_done), std::move(handoff_waiting));
  if (int e = sup->begin(std::move(supervisor_end), false); e != 0)
    return Error{ErrorClass::internal_error, "cannot start the --net proxy", {}, "--net", -e};
  return std::unique_ptr<Supervisor>(std::move(sup));
}

int spawn_shim(const NetPlan& plan, int sandbox_end, const std::vector<char*>& secrets, int* ready_fd) {
  *ready_fd = -1;
  if (plan.mode != NetPlan::Mode::proxy || plan.shim_port == 0) return 0;  // 0: --net-mode transparent
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (ls < 0) return errno;
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(plan.shim_port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(ls, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(ls, 4096) != 0) {
    int e = errno;
    close(ls);
    return e;
  }
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    int e = errno;
    close(ls);
    return e;
  }
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(ls);
    close(ready[0]);
    close(ready[1]);
    return e;
  }
  if (pid == 0) {
    // No exec (a second start of cage's static image cost most of --net's start-up): the shim runs
    // in this copy of init, so it first drops what init holds for the workload. The --secret values
    // are wiped (init wipes its own once the workload has them), and every descriptor but the
    // listener (3), the channel (4) and the ready pipe (5) is closed: the error and status pipes,
    // the caller's stdio, whatever init holds. Moved clear of 0..9 first (an fd of cage's own may
    // sit at 0..2 when the caller closed its stdio).
    for (char* s : secrets) explicit_bzero(s, strlen(s));
    int l = fcntl(ls, F_DUPFD_CLOEXEC, 10), c = fcntl(sandbox_end, F_DUPFD_CLOEXEC, 10),
        r = fcntl(ready[1], F_DUPFD_CLOEXEC, 10);
    if (l < 0 || c < 0 || r < 0 || syscall(SYS_close_range, 0U, 9U, 0U) != 0 || dup3(l, 3, O_CLOEXEC) < 0 ||
        dup3(c, 4, O_CLOEXEC) < 0 || dup3(r, 5, O_CLOEXEC) < 0 || syscall(SYS_close_range, 6U, ~0U, 0U) != 0)
      _exit(exit_status::kCageError);
    _exit(shim::serve(3, 4, 5));
  }
  close(ls);
  close(ready[1]);
  *ready_fd = ready[0];
  return 0;
}

int await_shim(int ready_fd) {
  if (ready_fd < 0) return 0;
  char b = 0;
  ssize_t n;
  do n = read(ready_fd, &b, 1);
  while (n < 0 && errno == EINTR);
  close(ready_fd);
  return n == 1 && b == 'r' ? 0 : ECHILD;
}

}  // namespace cage::lx::net
