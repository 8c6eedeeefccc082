// Seccomp: the workload's syscall filter, the last thing applied before execve. The parent copies
// the BPF that was generated at build time from seccomp/*.txt (no libseccomp work at start-up); the
// child hands it to the kernel with one syscall and no allocation. Proved by
// tests/integration/seccomp_*.sh (every denial, the kills, relaxed and none) and tests/unit/seccomp_test.cc.
#include "linux/seccomp.h"

#include <linux/seccomp.h>  // the kernel's: src/ is on the quote path only (-iquote)
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "linux/seccomp_profiles.h"

namespace cage::lx::seccomp {
namespace {

// The filters kill with SECCOMP_RET_KILL_PROCESS and answer with SECCOMP_RET_ERRNO; a kernel that
// cannot do both (Linux < 4.14, or built without CONFIG_SECCOMP_FILTER) cannot run them as written.
int kernel_support_errno() {
  const unsigned actions[] = {SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO};
  for (unsigned a : actions)
    if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &a) != 0) return errno;
  return 0;
}

}  // namespace

Result<Program> build_program(const SeccompPlan& plan) {
  auto filter = embedded_filter(plan.profile);
  // Every profile has one: --seccomp none is seccomp/floor.txt alone (terminal, set-id bits, sockets
  // outside the network namespace, leases), so the escape hatch keeps what no profile lets through.
  if (filter.empty()) return Program{};
  if (int err = kernel_support_errno())
    return unavailable("--seccomp", "the kernel cannot load seccomp filters that kill a process",
                       "use Linux 4.14 or later with CONFIG_SECCOMP_FILTER, or run with --seccomp none", err);
  return Program{std::vector<sock_filter>(filter.begin(), filter.end())};
}

// The variant for this run was generated with the profiles; only the choice is made here.
Result<Program> build_landlock_only_supplement(bool host_network, bool allow_metadata) {
  auto filter = embedded_landlock_only(host_network, allow_metadata);
  return Program{std::vector<sock_filter>(filter.begin(), filter.end())};
}

int load_program(const Program& prog) {
  if (prog.filter.empty()) return 0;
  sock_fprog fprog{static_cast<unsigned short>(prog.filter.size()), const_cast<sock_filter*>(prog.filter.data())};
  // Needs no_new_privs (set earlier by the executor) or CAP_SYS_ADMIN; no TSYNC: the child is single-threaded.
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0) return 0;
  if (errno != ENOSYS) return errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) == 0) return 0;
  return errno;
}

}  // namespace cage::lx::seccomp
