// Privileges (child side, in the workload before exec): no_new_privs, securebits locked so that uid
// 0 gains nothing at exec, and every capability dropped (effective, permitted, inheritable, bounding,
// ambient). Raw prctl/capget/capset, not libcap-ng: this runs in the workload's process while it
// still shares init's memory (CLONE_VM, init.cc), and libcap-ng keeps its state, the pid included,
// in globals; init's own drop through libcap-ng would then act on the workload's pid and fail (found
// by tests/escape/init_caps.sh). Proved by tests/integration/proc_privileges.sh and init_caps.sh.
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "linux/child.h"

namespace cage::lx {

namespace {

bool has_effective(int cap) {
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2]{};
  if (::syscall(SYS_capget, &h, d) != 0) return false;
  return (d[cap / 32].effective >> (cap % 32)) & 1;
}

}  // namespace

int clear_capabilities() {
  const bool setpcap = has_effective(CAP_SETPCAP);
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return errno;
  // The bounding set, up to the kernel's last capability: PR_CAPBSET_DROP says EINVAL past it (one
  // call a capability, not a read and a drop: ~40 calls fewer in init and in the workload).
  if (setpcap)
    for (int cap = 0;; ++cap) {
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
      if (errno == EINVAL) break;
      return errno;
    }
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};  // pid 0: this process
  __user_cap_data_struct none[2]{};
  return ::syscall(SYS_capset, &h, none) == 0 ? 0 : errno;
}

int drop_privileges(ChildStep* step) {
  *step = ChildStep::no_new_privs;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  // Without CAP_SETPCAP (an unprivileged caller where namespaces are blocked) there is nothing to
  // lock: a non-root exec gains no capability, no_new_privs ignores file capabilities, and the
  // bounding set cannot be changed; the effective, permitted and inheritable sets are still cleared.
  const bool setpcap = has_effective(CAP_SETPCAP);
  if (setpcap) {
    // NOROOT: exec as uid 0 grants no capabilities; NO_SETUID_FIXUP and NO_CAP_AMBIENT_RAISE close
    // the other ways back; each bit locked.
    *step = ChildStep::securebits;
    const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                               SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                               SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return errno;
  }
  *step = ChildStep::caps;
  return clear_capabilities();
}

}  // namespace cage::lx
