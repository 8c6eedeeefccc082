#!/usr/bin/env bash
# Attack: read the caller's keys. The session keyring (Kerberos KEYRING: caches, fscrypt and ecryptfs
# keys, tokens) is inherited across fork and exec, and the user keyring is shared by every process of
# the uid where there is no user namespace. The caller here joins a fresh session keyring, puts a key
# in it and one in its user keyring, then runs cage with --seccomp relaxed and none (the default
# profile refuses keyctl outright; checked too).
# Found: under relaxed and none, keyctl(KEYCTL_SEARCH) + KEYCTL_READ inside read the session key, with
# both mechanisms. Expected: the workload starts in a new, empty session keyring (both mechanisms);
# without namespaces the keyring calls are refused whatever the profile (the user keyring is the
# host's); with namespaces the user keyring is the user namespace's own. Twin: inside, a key the
# workload adds to its own session keyring reads back (namespaces, relaxed).
. "$(dirname "$0")/lib.bash"
require_sandbox
keys=$work/keys.py
cat >"$keys" <<'PY'
import ctypes, os, platform, sys
nr = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(platform.machine())
if nr is None:
    print("unknown-arch"); sys.exit(0)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD, KEYCTL = nr
SESSION, USER = -3, -4
def add(ring, name, value):
    return libc.syscall(ADD, b"user", name, value, ctypes.c_size_t(len(value)), ctypes.c_int(ring))
def read(ring, name):
    k = libc.syscall(KEYCTL, 10, ctypes.c_int(ring), b"user", name, 0)  # KEYCTL_SEARCH
    if k < 0:
        return "none(%d)" % ctypes.get_errno()
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(KEYCTL, 11, ctypes.c_long(k), buf, 63)  # KEYCTL_READ
    return buf.raw[:n].decode() if n > 0 else "unreadable(%d)" % ctypes.get_errno()
if sys.argv[1] == "plant":
    if libc.syscall(KEYCTL, 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING, anonymous
        print("no-keyrings"); sys.exit(0)
    ok = add(SESSION, b"cage-session-secret", b"SESSION-SECRET") > 0
    add(USER, b"cage-user-secret", b"USER-SECRET")
    if not ok:
        print("no-keyrings"); sys.exit(0)
    sys.stdout.flush()
    os.execvp(sys.argv[2], sys.argv[2:])
elif sys.argv[1] == "steal":
    print(read(SESSION, b"cage-session-secret"), read(USER, b"cage-user-secret"))
else:
    print("twin", add(SESSION, b"mine", b"MINE") > 0 and read(SESSION, b"mine"))
PY
steal() { cage_run "$@" --ro "$work" -- "$py" "$keys" steal; }
for profile in default relaxed none; do
  rc=0
  "$py" "$keys" plant "$CAGE" ${mech[@]+"${mech[@]}"} --seccomp $profile --ro "$work" -- "$py" "$keys" steal \
    </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out"); err=$(cat "$work/.err")
  case "$out" in
    no-keyrings*|unknown-arch*) echo "skip: keyrings not usable here ($out)"; exit 77 ;;
  esac
  [ "$rc" -eq 0 ] || fail "--seccomp $profile: exit $rc: $out $err"
  grep -q SESSION-SECRET <<<"$out" && fail "--seccomp $profile: the caller's session key was read inside: $out"
  grep -q USER-SECRET <<<"$out" && fail "--seccomp $profile: the caller's user keyring was read inside: $out"
  grep -q SECRET <<<"$out" || pass "--seccomp $profile: no caller key reachable ($out)"
done
# Under an outer seccomp filter that refuses keyctl (Docker's default profile; here an outer cage's),
# the join fails but no keyring is reachable either: the inner run must still work.
# (The outer run needs namespaces: the inner one makes its private directory in the outer's /tmp;
# the inner one needs the Landlock-only mechanism, which cage refuses below Landlock ABI 6.)
if ! landlock_only && landlock_mechanism; then
  # A sanitized inner cage runs without LeakSanitizer, whose tracer cannot work under the outer filter.
  cage_run --ro "$probe_dir" --setenv ASAN_OPTIONS=detect_leaks=0 -- "$CAGE" --mechanism landlock --allow-degraded pid -- /bin/echo inner
  [ "$rc" -eq 0 ] && [ "$out" = inner ] && pass "cage under a filter refusing keyctl still runs" ||
    fail "cage inside cage (outer filter refuses keyctl): exit $rc: $out $err"
fi
if ! landlock_only; then
  cage_run --seccomp relaxed --ro "$work" -- "$py" "$keys" twin
  [ "$out" = "twin MINE" ] && pass "twin: the workload's own session keyring works" || fail "twin: $out $err"
fi
finish
