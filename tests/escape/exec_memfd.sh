#!/usr/bin/env bash
# Attack: run a program the --exec allowlist does not list, from an allowed interpreter, without a
# path Landlock can check: fill a memfd with /usr/bin/id's bytes and execve /proc/self/fd/N; and copy
# id into the private /tmp and run it through the dynamic loader (ld.so FILE maps it, no execve).
# Policy: --exec python3 (the command), nothing else. Found: the memfd ran (Landlock's execute right
# is checked on paths, a memfd has none); now cage sets vm.memfd_noexec=2 in the sandbox's pid
# namespace (EACCES; the host's value unchanged) and mounts /tmp noexec ("failed to map segment").
# Only the global root may raise that value: a user's --exec is refused (125) unless the host has 2
# or the user accepts that one gap (--allow-degraded=exec-written; noexec mounts still hold).
# Twin: without --exec both run. Landlock-only: refused (125) unless --allow-degraded=exec-written,
# which --dry-run then lists (with the memfd part unless the host's vm.memfd_noexec is 2).
. "$(dirname "$0")/lib.bash"
py_real=$(readlink -f "$py")
[ -r /proc/sys/vm/memfd_noexec ] || { echo "skip: no vm.memfd_noexec (Linux < 6.3): cage refuses --exec here"; exit 77; }
host_before=$(cat /proc/sys/vm/memfd_noexec)
cat >"$work/memfd.py" <<'PY'
import os, shutil, subprocess, sys
fd = os.memfd_create("x", 0)
os.write(fd, open("/usr/bin/id", "rb").read())
pid = os.fork()
if pid == 0:
    try:
        os.execv("/proc/self/fd/%d" % fd, ["id", "-u"])
    except OSError as e:
        print("memfd:", e.strerror); sys.stdout.flush(); os._exit(0)
os.waitpid(pid, 0)
shutil.copy("/usr/bin/id", "/tmp/myid")
loader = os.path.realpath("/lib64/ld-linux-x86-64.so.2")
r = subprocess.run([loader, "/tmp/myid", "-u"], capture_output=True, text=True)
print("loader:", r.stdout.strip() or r.stderr.strip())
PY
chmod 644 "$work/memfd.py"
uid=$(id -u)
if fallback; then
  cage_run --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
  expect_rc 125 "Landlock-only: --exec is refused without the loss accepted"
  grep -q "allow-degraded=exec-written" <<<"$err" || fail "the refusal names exec-written: $err"
  cage_run --allow-degraded exec-written --dry-run --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
  grep -q '^degraded: exec-written:' <<<"$out" || fail "--dry-run lists the accepted loss: $out $err"
  [ "$host_before" = 2 ] || grep -q 'memfd it fills can be executed' <<<"$out" || fail "the memfd part is said: $out"
  pass "Landlock-only: the loss is refused, or listed once accepted"
  finish
fi
if ! is_root && [ "$host_before" != 2 ]; then  # only root may raise it in the sandbox's pid namespace
  cage_run --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
  expect_rc 125 "unprivileged, host vm.memfd_noexec not 2: --exec is refused, never run without the memfd seal"
  grep -q 'vm.memfd_noexec' <<<"$err" || fail "the refusal names the sysctl: $err"
  # Accepted as the one named loss: the memfd runs (and --dry-run says so), the written file does not.
  cage_run --allow-degraded exec-written --dry-run --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
  grep -q '^degraded: exec-written: a memfd' <<<"$out" && pass "accepted: --dry-run lists the memfd loss" ||
    fail "--dry-run with the loss accepted: $out $err"
  cage_run --allow-degraded exec-written --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
  [ "$rc" -eq 0 ] && grep -q '^loader: .*failed to map segment' <<<"$out" &&
    pass "accepted: ld.so still cannot map a file written to /tmp (noexec)" || fail "accepted: exit $rc, '$out' $err"
  finish
fi
cage_run --ro "$work" --exec "$py_real" -- "$py" "$work/memfd.py"
[ "$rc" -eq 0 ] && grep -qx 'memfd: Permission denied' <<<"$out" && pass "a filled memfd cannot be executed" ||
  fail "memfd: exit $rc, '$out' $err"
grep -q '^loader: .*failed to map segment' <<<"$out" && pass "ld.so cannot map a file written to /tmp (noexec)" ||
  fail "loader: '$out' $err"
[ "$(cat /proc/sys/vm/memfd_noexec)" = "$host_before" ] && pass "the host's vm.memfd_noexec is unchanged" ||
  fail "host vm.memfd_noexec changed: $host_before -> $(cat /proc/sys/vm/memfd_noexec)"
cage_run --ro "$work" -- "$py" "$work/memfd.py"
[ "$rc" -eq 0 ] && [ "$out" = "$uid"$'\n'"loader: $uid" ] && pass "twin: without --exec both run" ||
  fail "twin: exit $rc, '$out' $err"
finish
