#!/usr/bin/env bash
# Attack: gain privilege through a setuid program: a setuid copy planted in a --rw directory (made by
# root on the host, owned by another user, so exec would change the euid), the host's setuid-root
# programs in /usr, cage asked to run a setuid program as the COMMAND, and chmod u+s/g+s of a program
# made inside (a root caller's sandbox would leave a setuid-root program on the host).
# Policy: --rw $work/rw. Expected: exec inside never changes the effective uid (every mount is
# nosuid, no_new_privs is set); a setuid COMMAND is refused: exit 125, capability_denied; the
# setuid and setgid bits cannot be set (seccomp EPERM).
# Twin: the same program without the setuid bit runs.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/rw"
me=$(id -u)
cp /usr/bin/id "$work/rw/id"
cage_run --rw "$work/rw" -- "$work/rw/id" -u
expect_rc 0 "twin: a plain copy of id runs"
if is_root; then
  cp /usr/bin/id "$work/rw/id-suid" && chown 65534:65534 "$work/rw/id-suid" && chmod 6755 "$work/rw/id-suid"
  cage_run --rw "$work/rw" -- sh -c "'$work/rw/id-suid' -u; '$work/rw/id-suid' -g"
  [ "$rc" -eq 0 ] && [ "$(echo $out)" = "$(id -u) $(id -g)" ] && pass "setuid-nobody copy in --rw: euid unchanged ($(echo $out))" ||
    fail "setuid copy changed ids: exit $rc, '$out' $err"
  cage_run --rw "$work/rw" -- "$work/rw/id-suid" -u
  expect_rc 125 "setuid COMMAND refused"
  grep -q capability_denied <<<"$err" || fail "setuid COMMAND: no capability_denied in '$err'"
fi
# Plant a setuid/setgid program for later: a copy of id made in --rw, then chmod u+s / g+s (chmod,
# fchmod, fchmodat). Run by a root caller it would be a setuid-root program on the host for any user.
cage_run --rw "$work/rw" -- sh -c "cp /usr/bin/id '$work/rw/planted' && chmod 755 '$work/rw/planted' &&
  { chmod u+s '$work/rw/planted' || chmod g+s '$work/rw/planted' ||
    $py -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fchmod(fd, 0o6755)' '$work/rw/planted' ||
    $py -c 'import os, sys; os.chmod(\"planted\", 0o4755, dir_fd=os.open(sys.argv[1], os.O_RDONLY))' '$work/rw'; }"
[ -x "$work/rw/planted" ] && pass "twin: chmod 755 of a program made in --rw" || fail "twin: chmod 755 failed: $err"
[ -u "$work/rw/planted" ] || [ -g "$work/rw/planted" ] && fail "a setuid/setgid program was planted on the host: $(ls -l "$work/rw/planted")" ||
  pass "no setuid/setgid bit can be set from inside ($(stat -c %A "$work/rw/planted" 2>/dev/null))"
suid=""
for f in /usr/bin/su /usr/bin/passwd /usr/bin/mount /usr/bin/newgrp; do
  [ -u "$f" ] && suid=$f && break
done
if [ -n "$suid" ]; then
  cage_run -- "$suid" --help
  expect_rc 125 "setuid-root $suid as COMMAND refused"
  grep -q capability_denied <<<"$err" || fail "$suid: no capability_denied in '$err'"
  # Exec'd from inside: still our uid (su/mount run, but as the caller, with no capability).
  cage_run -- sh -c "exec $suid --version >/dev/null 2>&1 & wait; grep -E '^(Uid|CapEff|NoNewPrivs)' /proc/self/status"
  grep -q "^NoNewPrivs:.*1" <<<"$out" && grep -q "^CapEff:.*0000000000000000" <<<"$out" &&
    pass "inside: no_new_privs set, no capabilities" || fail "privilege state inside: $out"
else
  echo "note: no setuid-root program in /usr/bin to try"
fi
cage_run --rw "$work/rw" -- sh -c "awk '{print \$6}' /proc/self/mounts | grep -v nosuid | head -3; grep -c . /proc/self/mounts"
bad=$(grep -v '^[0-9]*$' <<<"$out")
[ -z "$bad" ] && pass "every mount inside is nosuid" || fail "mounts without nosuid: $bad"
finish
