// The in-namespace shim (`cage --spawn-shim`): accepts the workload's TCP connections on the
// namespace's 127.0.0.1:PORT and hands each accepted socket to the supervisor's proxy over a
// SOCK_SEQPACKET socketpair (SCM_RIGHTS). It never reads or writes a payload byte: the supervisor
// relays directly between the workload's socket and the upstream one. Started by cage's init
// before the workload (lx::net::spawn_shim), non-dumpable, empty environment.
// Proven by tests/integration/net_*.sh.
#include "shim/shim.h"

#include "common/send_fd.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cage::shim {
namespace {

int fd_arg(const char* s) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  return (end && *end == '\0' && v >= 0 && v < 1 << 20) ? static_cast<int>(v) : -1;
}

// One message per connection: a byte of payload (SEQPACKET needs one) and the fd.
bool pass_fd(int channel, int fd) { return send_fd(channel, fd, 'c') == 0; }

}  // namespace

int main(int argc, char** argv) {
  // Non-dumpable: the workload (same uid, same pid namespace) cannot ptrace us or read our memory.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Die with cage's init, i.e. with the sandbox.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  int listen_fd = -1, channel = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--listen-fd") == 0) listen_fd = fd_arg(argv[++i]);
    else if (std::strcmp(argv[i], "--channel-fd") == 0) channel = fd_arg(argv[++i]);
  }
  if (listen_fd < 0 || channel < 0) {
    static const char kUsage[] = "cage --spawn-shim: internal use only (--listen-fd N --channel-fd N)\n";
    if (write(2, kUsage, sizeof kUsage - 1) < 0) return 125;
    return 125;
  }
  signal(SIGPIPE, SIG_IGN);
  while (true) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM)
        continue;
      return 125;
    }
    bool ok = pass_fd(channel, fd);
    close(fd);
    if (!ok) return 0;  // the supervisor is gone: the run is over
  }
}

}  // namespace cage::shim
