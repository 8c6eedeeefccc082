#!/usr/bin/env bash
# Attack (pending: a design trade-off for the lead, not fixed on branch attack5): a directory of the
# curated /etc that is bound read-only instead of copied (etc_view.cc, copy_is_bind) is the host's
# directory, live: a file the host adds during the run appears inside, whatever its mode, where the
# snapshot copy showed only what was world-readable at start. As root the workload is uid 0, the
# owner of a root file: a 0600 file (a key, a token) that an administrator or a package writes into
# /etc/fonts, /etc/xdg, ... while a long sandbox runs is readable inside. As the user, a file only the
# user may read (0400; likewise its group's 0640) is shown, which the curated view never shows.
# (The directories bound before this change, /etc/alternatives, /etc/ssl/certs, /etc/java-*, and any
# directory of more than 64 entries, were live already.)
# Policy: default view; the curated directory is a tmpfs over the first of /etc/fonts, /etc/xdg, ...
# in a private mount namespace (as etc_bind.sh), with eight world-readable files so that it is bound.
# The workload waits on a fifo in --rw, the host writes `secret` (0600 root / 0400 user), the workload
# reads it. Expected: not there (the copy's snapshot). Twin: the eight files read.
# Found on main (root and user): the workload printed the secret; 49a34b6 (copy): no such file.
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
. "$(dirname "$0")/../lib.bash"
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
cover
for i in 1 2 3 4 5 6 7 8; do echo "font $i" >"$dir/f$i"; chmod 644 "$dir/f$i"; done
mkdir "$work/rw" && mkfifo "$work/rw/ready" "$work/rw/go" && chmod -R 777 "$work/rw"
exec 3<>"$work/rw/ready"  # read-write: opening never blocks
"$CAGE" ${mech[@]+"${mech[@]}"} --rw "$work/rw" -- sh -c \
  "cat $dir/f1 $dir/f8; echo ready >$work/rw/ready; read x <$work/rw/go; cat $dir/secret 2>&1" \
  </dev/null >"$work/.out" 2>"$work/.err" &
cage_pid=$!
if ! read -r -t 60 -u 3 line; then
  fail "the workload never said ready: $(cat "$work/.err")"
  kill "$cage_pid"; wait "$cage_pid"; finish
fi
(umask 077; echo HOST-SECRET >"$dir/secret"; is_root && [ "${CAGE_ETC_USERNS:-0}" != 1 ] || chmod 0400 "$dir/secret")
echo go >"$work/rw/go"
wait "$cage_pid"
out=$(cat "$work/.out")
[ "$(sed -n 1,2p <<<"$out" | tr '\n' ' ')" = "font 1 font 8 " ] && pass "twin: the files of $dir read inside" ||
  fail "twin: $out $(cat "$work/.err")"
grep -q HOST-SECRET <<<"$out" && fail "a file the host wrote into $dir during the run was read inside" ||
  pass "a file the host wrote into $dir during the run is not in the view: $(sed -n 3p <<<"$out")"
finish
