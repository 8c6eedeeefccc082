#!/usr/bin/env bash
# A host without Landlock (a kernel whose lsm= leaves it out), made for real by an outer seccomp
# filter on the three Landlock calls (cage-probe no-landlock; cage has no switch of its own that
# could weaken a run). Runs as root and as an unprivileged user. Under the namespaces mechanism
# Landlock is a layer, not a gate: --check passes and names it absent, the headline command runs
# with --ro, --rw and --net still enforced by the namespaces, a loopback server works under --net,
# and --self-test passes; the Landlock-only mechanism is refused there, by name.
set -u
PROBE=${CAGE_PROBE:?}
. "$(dirname "$0")/net_lib.bash"
net_test_begin curl
nol() { timeout 60 "$PROBE" no-landlock "$CAGE" "$@"; }
chmod 755 "$d"; mkdir "$d/src" "$d/out" "$d/www"; echo secret > "$d/secret"; echo hello > "$d/www/f"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"

# --check's own probe shows the stand-in works: Landlock really is missing under it.
nol --check >"$d/check" 2>&1 || fail "--check refused a host without Landlock: $(cat "$d/check")"
grep -q "^  landlock: not available on this kernel (namespaces confine)" "$d/check" || fail "layer not named: $(cat "$d/check")"
grep -q "^absent  landlock: unavailable (Operation not supported)" "$d/check" || fail "probe not reported absent: $(cat "$d/check")"

# The headline command's shape: grants and the allowlist hold without Landlock.
out=$(nol --ro "$d/src" --rw "$d/out" --net "127.0.0.1:$port" --net-mode proxy -- sh -c "
  echo made > '$d/out/made' || exit 11
  echo x > '$d/src/x' 2>/dev/null && exit 12
  cat '$d/secret' 2>/dev/null && exit 13
  curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$port/f 2>/dev/null && exit 14
  curl -sS -x http://127.0.0.1:3128 http://127.0.0.1:$port/f") 2>"$d/err"
rc=$?
case $rc in
  0) ;;
  11) fail "--rw not writable without Landlock" ;;
  12) fail "--ro written without Landlock" ;;
  13) fail "an ungranted file read without Landlock" ;;
  14) fail "a direct connection left the namespace without Landlock" ;;
  *) fail "the headline command failed without Landlock (exit $rc): $(cat "$d/err")" ;;
esac
[ "$out" = hello ] || fail "the listed host through the proxy returned '$out'"
[ -f "$d/out/made" ] && [ ! -e "$d/src/x" ] || fail "the host files do not show the grants held"

# A loopback server of the workload's own under --net.
out=$(nol --net "127.0.0.1:$port" -- sh -c '
  /usr/bin/python3 -c "
import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.sendall(b\"own\"); print(a.recv(3).decode())
"') 2>"$d/err" || fail "own loopback under --net failed without Landlock: $(cat "$d/err")"
[ "$out" = own ] || fail "own loopback returned '$out'"

nol --self-test >"$d/self" 2>&1 || fail "--self-test failed without Landlock: $(cat "$d/self")"
grep -q "10 passed, 0 failed" "$d/self" || fail "--self-test: $(tail -1 "$d/self")"

# The Landlock-only mechanism needs Landlock: refused with class, input and remedy; --check agrees.
nol --mechanism landlock --allow-degraded pid -- true 2>"$d/err"; rc=$?
[ "$rc" = 125 ] || fail "--mechanism landlock ran without Landlock (exit $rc)"
grep -q "spawn_sandbox_unavailable: --mechanism landlock: .*no Landlock.*(remedy: allow user namespaces" "$d/err" ||
  fail "refusal unclear: $(cat "$d/err")"
nol --check --mechanism landlock --allow-degraded pid >"$d/check" 2>&1; rc=$?
[ "$rc" = 125 ] || fail "--check --mechanism landlock passed without Landlock"
# Neither mechanism (user namespaces blocked too): refused for the missing ABI first, since no
# --allow-degraded could make that run possible.
timeout 60 "$PROBE" no-landlock "$PROBE" deny-userns "$CAGE" -- true 2>"$d/err"; rc=$?
[ "$rc" = 125 ] || fail "a run without user namespaces and Landlock exited $rc"
grep -q "needs Landlock ABI 6" "$d/err" && ! grep -q "allow-degraded" "$d/err" || fail "refusal unclear: $(cat "$d/err")"
echo ok
