// Privileges (child side, in the workload before exec): no_new_privs, securebits locked so that uid
// 0 gains nothing at exec, and every capability dropped (effective, permitted, inheritable, bounding,
// ambient) with libcap-ng. Proved by tests/integration/proc_privileges.sh (CapEff/CapBnd/NoNewPrivs).
#include <cap-ng.h>
#include <linux/securebits.h>
#include <sys/prctl.h>

#include <cerrno>

#include "linux/child.h"

namespace cage::lx {

int drop_privileges(ChildStep* step) {
  *step = ChildStep::no_new_privs;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  // Without CAP_SETPCAP (an unprivileged caller where namespaces are blocked) there is nothing to
  // lock: a non-root exec gains no capability, no_new_privs ignores file capabilities, and the
  // bounding set cannot be changed; the effective, permitted and inheritable sets are still cleared.
  capng_get_caps_process();
  const bool setpcap = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
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
  capng_clear(setpcap ? CAPNG_SELECT_ALL : CAPNG_SELECT_CAPS);
  if (capng_apply(setpcap ? CAPNG_SELECT_ALL : CAPNG_SELECT_CAPS) != 0) return EPERM;
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return errno;
  return 0;
}

}  // namespace cage::lx
