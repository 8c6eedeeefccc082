#!/usr/bin/env bash
# Attack: a filesystem the host mounts beneath a --ro grant while the sandbox runs (an automounter, a
# USB stick, a FUSE or bind mount made by another tool) reaches the sandbox by mount propagation,
# with the host's flags (read-write); beneath /tmp, $HOME, /run, /var/tmp or /dev/shm Landlock's write
# rule for that private root does not stop the write either.
# Policy: --ro $work/ro --rw $work/rw, $work/ro a shared mount on the host side (systemd's default for
# /). The workload says ready through a fifo in --rw, the host mounts a tmpfs at $work/ro/sub and
# answers, the workload writes there. Expected: the write fails (namespaces: the mount never arrives,
# the sandbox's mounts receive nothing; Landlock-only: it arrives read-only, under the --ro grant's
# rule) and the host's tmpfs stays empty. Twins: the write into --rw lands; the host's mount works.
# As the unprivileged user, who cannot mount on the real host, the host side is a user and mount
# namespace of that user: cage runs there without capabilities, as on the host, and nothing touches
# the real mount table. As root the mounts are made on the host and removed on exit; root without
# CAP_SYS_ADMIN (a container's root) takes the unprivileged user's way.
mounts_here() { [ "$(id -u)" -eq 0 ] && (( (0x$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21) & 1 )); }
if ! mounts_here && [ "${CAGE_PROPAGATION_NS:-0}" != 1 ]; then
  if ! unshare -U -m -c --keep-caps true 2>/dev/null; then
    echo "skip: this caller can neither mount here (CAP_SYS_ADMIN) nor create a user and mount namespace to mount in (unshare -U -m failed)" >&2
    exit 77
  fi
  CAGE_PROPAGATION_NS=1 exec unshare -U -m -c --keep-caps "$0" "$@"
fi
. "$(dirname "$0")/lib.bash"
if [ "${CAGE_PROPAGATION_NS:-0}" = 1 ]; then
  # This shell holds capabilities in its namespace (to mount); cage must run without any, as the user.
  printf '#!/bin/sh\nexec setpriv --inh-caps=-all --ambient-caps=-all -- "%s" "$@"\n' "$CAGE" >"$work/cage"
  chmod 755 "$work/cage"
  CAGE=$work/cage
fi
require_sandbox
sys_mount() {  # SOURCE TARGET FSTYPE FLAGS | umount TARGET: the mount syscalls (mount(8) refuses uid != 0)
  "$py" - "$@" <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if sys.argv[1] == "umount":
    rc = libc.umount2(sys.argv[2].encode(), 0)
else:
    src, tgt, fs, flags = sys.argv[1:5]
    rc = libc.mount(src.encode(), tgt.encode(), fs.encode() if fs else None, ctypes.c_ulong(int(flags, 0)), None)
if rc != 0:
    e = ctypes.get_errno()
    sys.exit("mount %s: %s" % (sys.argv[1:], os.strerror(e)))
EOF
}
MS_BIND=0x1000 MS_SHARED=0x100000
mkdir -p "$work/ro/sub" "$work/rw"
echo ro-content >"$work/ro/file"
sys_mount "$work/ro" "$work/ro" "" $MS_BIND || exit 1
# One hook, children first: the tmpfs (if it was mounted), then the shared bind.
at_exit "sys_mount umount '$work/ro/sub'; sys_mount umount '$work/ro'"
sys_mount none "$work/ro" "" $MS_SHARED || exit 1
mkfifo "$work/rw/ready" "$work/rw/go"
exec 3<>"$work/rw/ready"  # read-write: opening never blocks, so a cage that dies early cannot hang us
"$CAGE" ${mech[@]+"${mech[@]}"} --ro "$work/ro" --rw "$work/rw" -- "$py" -c "
import os
open('$work/rw/ready', 'w').write('ready\n')
open('$work/rw/go').read()
open('$work/rw/twin', 'w').write('twin')
try:
    open('$work/ro/sub/planted', 'w').write('pwned')
    print('written')
except OSError as e:
    print('denied', e.errno, e.strerror)
" </dev/null >"$work/.out" 2>"$work/.err" &
cage_pid=$!
if ! read -r -t 60 -u 3 line; then
  fail "the workload never said ready: $(cat "$work/.err")"
  kill "$cage_pid" 2>/dev/null
  wait "$cage_pid"
  finish
fi
exec 3<&-
sys_mount tmpfs "$work/ro/sub" tmpfs 0 || fail "host: cannot mount a tmpfs at $work/ro/sub"
echo go >"$work/rw/go"
rc=0
wait "$cage_pid" || rc=$?
out=$(cat "$work/.out")
[ "$rc" -eq 0 ] || fail "cage exited $rc: $(cat "$work/.err")"
if grep -q '^denied' <<<"$out"; then pass "write into a host mount made under --ro during the run: $out"; else
  fail "write into a host mount made under --ro during the run: $out"; fi
[ -e "$work/ro/sub/planted" ] && fail "the file planted by the workload is on the host's mount"
[ "$(cat "$work/rw/twin" 2>/dev/null)" = twin ] && pass "twin: write into --rw" || fail "twin: write into --rw missing"
echo host >"$work/ro/sub/host" && pass "twin: the host's own mount is writable on the host"
finish
