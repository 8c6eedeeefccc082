// The in-namespace shim: accepts the workload's TCP connections on the namespace's 127.0.0.1:PORT
// and hands each accepted socket to the supervisor's proxy over a SOCK_SEQPACKET socketpair
// (SCM_RIGHTS). It never reads or writes a payload byte: the supervisor relays directly between the
// workload's socket and the upstream one. Forked by cage's init before the workload
// (lx::net::spawn_shim), non-dumpable, holding no descriptor but its own; once it holds its two
// descriptors it keeps nothing a takeover could use: no capability (a root caller's shim would
// otherwise hold all of them in the user namespace), no_new_privs, and a Landlock domain with no
// file access, no TCP bind or connect, and signals and abstract sockets scoped to itself.
// Proven by tests/integration/net_*.sh and tests/escape/network.sh.
#include "common/exit_status.h"
#include "shim/shim.h"

#include "common/send_fd.h"
#include "linux/child.h"

#include <cap-ng.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cage::shim {
namespace {

// Best effort: each layer the kernel offers is taken, none is needed for the shim's job (accept on
// a bound listener, sendmsg on a connected socketpair), so none is a reason to fail: no Landlock at
// all, or ABI < 4 (no TCP rules: the shim could then connect inside the namespace, where nothing
// but the workload listens), or ABI < 6 (no scoping: the pid and network namespaces bound it).
void confine_self() {
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  capng_clear(CAPNG_SELECT_BOTH);
  capng_apply(CAPNG_SELECT_BOTH);  // the bounding set first (needs CAP_SETPCAP), then the rest
  capng_clear(CAPNG_SELECT_CAPS);
  capng_apply(CAPNG_SELECT_CAPS);  // effective, permitted, inheritable: also where the above stopped early
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  constexpr unsigned kRulesetVersion = 1;  // LANDLOCK_CREATE_RULESET_VERSION
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kRulesetVersion);
  if (abi <= 0) return;
  lx::LandlockPlan plan;
  plan.abi = static_cast<int>(abi);
  plan.deny_all_tcp = true;  // handled with no port allowed
  lx::ChildStep step;
  int index;
  lx::landlock_restrict(plan, &step, &index);
}

// One message per connection: a byte of payload (SEQPACKET needs one) and the fd.
bool pass_fd(int channel, int fd) { return send_fd(channel, fd, 'c') == 0; }

}  // namespace

int serve(int listen_fd, int channel, int ready) {
  // Non-dumpable (init is already; said again here): the workload (same uid, same pid namespace)
  // cannot ptrace us or read our memory, which is a copy of init's.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Die with cage's init, i.e. with the sandbox.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  confine_self();
  // cage's init starts the workload only after this byte.
  static const char kReady = 'r';
  if (write(ready, &kReady, 1) != 1) return exit_status::kCageError;
  close(ready);
  while (true) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM)
        continue;
      return exit_status::kCageError;
    }
    bool ok = pass_fd(channel, fd);
    close(fd);
    if (!ok) return 0;  // the supervisor is gone: the run is over
  }
}

}  // namespace cage::shim
