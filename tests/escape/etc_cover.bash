# Shared by etc_bind.sh and pending/etc_bind_live.sh (sourced, not run): re-executes the calling
# script in a private mount namespace (a user namespace too where the caller cannot mount), loads
# lib.bash, picks the first curated /etc directory present as $dir, and defines cover, which mounts
# a fresh tmpfs over $dir and checks it is that tmpfs (the host's own directory is never written).
have_mounts() { [ "$(id -u)" -eq 0 ] && (( (0x$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21) & 1 )); }
if [ "${CAGE_ETC_NS:-0}" != 1 ]; then
  if have_mounts && unshare -m --propagation private true 2>/dev/null; then
    CAGE_ETC_NS=1 exec unshare -m --propagation private "$0" "$@"
  elif unshare -U -m -c --keep-caps true 2>/dev/null; then
    CAGE_ETC_NS=1 CAGE_ETC_USERNS=1 exec unshare -U -m -c --keep-caps "$0" "$@"
  fi
  echo "skip: no private mount namespace to cover /etc in (unshare -m / -U -m failed)" >&2
  exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
if landlock_only; then echo "skip: the Landlock-only mechanism shows the host's /etc (documented)"; exit 77; fi
if [ "${CAGE_ETC_USERNS:-0}" = 1 ]; then  # as in mount_propagation.sh: cage runs without capabilities
  printf '#!/bin/sh\nexec setpriv --inh-caps=-all --ambient-caps=-all -- "%s" "$@"\n' "$CAGE" >"$work/cage"
  chmod 755 "$work/cage"
  CAGE=$work/cage
fi
require_sandbox
dir=
for d in fonts xdg vim perl python3 profile.d default ld.so.conf.d; do
  [ -d "/etc/$d" ] && [ ! -L "/etc/$d" ] && { dir=/etc/$d; break; }
done
[ -n "$dir" ] || { echo "skip: no curated directory in /etc to cover"; exit 77; }
cover() {  # a fresh tmpfs over $dir (mount(8) refuses a uid other than 0: the syscall, as mount_propagation.sh)
  "$py" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(b"cage-escape", sys.argv[1].encode(), b"tmpfs", ctypes.c_ulong(0), b"mode=755") != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))' "$dir" || { fail "cannot mount a tmpfs over $dir"; finish; }
  # Never write into the host's own directory.
  [ "$(stat -f -c %T "$dir")" = tmpfs ] || { fail "$dir is not the tmpfs just mounted"; finish; }
}
