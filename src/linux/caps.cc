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
  // NOROOT: exec as uid 0 grants no capabilities; NO_SETUID_FIXUP and NO_CAP_AMBIENT_RAISE close the
  // other ways back; each bit locked.
  *step = ChildStep::securebits;
  const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return errno;
  *step = ChildStep::caps;
  capng_clear(CAPNG_SELECT_ALL);
  if (capng_apply(CAPNG_SELECT_ALL) != 0) return EPERM;
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return errno;
  return 0;
}

}  // namespace cage::lx
