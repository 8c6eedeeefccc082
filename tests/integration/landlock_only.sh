#!/usr/bin/env bash
# Hosts that block user namespaces (issue #10): cage falls back to Landlock + seccomp alone, refuses
# the elements that mechanism cannot enforce unless accepted with --allow-degraded, and still
# enforces what it claims: reads and writes outside grants, TCP/UDP/unix sockets, signals to host
# processes. Forced with --mechanism landlock, and for real in a user namespace whose
# max_user_namespaces is 0 (what hardened hosts set).
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d)
sleeper= web= runner= other=
cleanup() {  # also when a check fails half-way: every background process of this script ends
  for p in $sleeper $web $runner $other; do kill "$p" 2>/dev/null; done
  rm -rf "$d"
}
trap cleanup EXIT
mkdir "$d/ro" "$d/rw" "$d/out"
echo data > "$d/ro/f"
echo secret > "$d/secret"
probe_dir=$(dirname "$CAGE_PROBE")
. "$(dirname "$0")/net_lib.bash"
L=("$CAGE" --mechanism landlock --no-cwd)
# This user's private dirs whose supervisor is gone: other runs (the root and user variants, the
# escape suite) may hold live ones in /tmp at the same time, which are not this test's leftovers.
orphans() {
  local p pid
  for p in /tmp/cage-private.*; do
    [ -O "$p" ] || continue
    pid=${p#/tmp/cage-private.}
    pid=${pid%%.*}
    [ -d "/proc/$pid" ] || echo "$p"
  done | sort
}
before=$(orphans)
# Below Landlock ABI 6 the mechanism is refused as a whole (cage(1), MECHANISMS): that refusal is
# structured (125, spawn_sandbox_unavailable, names the ABI) and the rest of this test has nothing to run.
"${L[@]}" --allow-degraded pid -- true 2>"$d/err"; rc=$?
if grep -q "needs Landlock ABI" "$d/err"; then
  [ $rc -eq 125 ] && grep -q "^cage: spawn_sandbox_unavailable: --mechanism landlock" "$d/err" ||
    fail "refusal below ABI 6 is not structured ($rc): $(cat "$d/err")"
  echo "skip: the Landlock-only mechanism is refused on this kernel: $(cat "$d/err")"
  exit 77
fi

# Pid isolation is lost without namespaces: refused until accepted, naming the element.
if "${L[@]}" --ro "$d/ro" -- true 2>"$d/err"; then fail "ran without accepting the loss of pid isolation"; fi
grep -q "pid" "$d/err" && grep -q "allow-degraded" "$d/err" || fail "refusal does not name the element: $(cat "$d/err")"
"${L[@]}" --allow-degraded pid --ro "$d/ro" -- true 2>/dev/null; rc=$?
[ $rc -eq 0 ] || fail "accepted run failed ($rc)"
# --hide and --tmpfs are refused the same way.
if "${L[@]}" --allow-degraded pid --ro "$d" --hide "$d/secret" -- true 2>"$d/err"; then fail "--hide ran"; fi
grep -q "hide" "$d/err" || fail "hide refusal unclear"
"${L[@]}" --allow-degraded pid --dry-run -- true | grep -q "mechanism landlock " || fail "dry-run does not show the mechanism"

A=("${L[@]}" --allow-degraded pid --ro "$probe_dir" --ro "$d/ro" --rw "$d/rw")
# Reads: granted works, ungranted fails.
[ "$("${A[@]}" -- cat "$d/ro/f")" = data ] || fail "granted read failed"
if "${A[@]}" -- cat "$d/secret" >/dev/null 2>&1; then fail "read an ungranted file"; fi
# Writes: --rw works, --ro and elsewhere fail, host unchanged.
"${A[@]}" -- sh -c "echo ok > $d/rw/x" || fail "allowed write failed"
[ "$(cat "$d/rw/x")" = ok ] || fail "allowed write lost"
if "${A[@]}" -- sh -c "echo x > $d/ro/y" 2>/dev/null; then fail "wrote into a --ro grant"; fi
if "${A[@]}" -- sh -c "echo x > $d/out/y" 2>/dev/null; then fail "wrote outside the grants"; fi
[ ! -e "$d/ro/y" ] && [ ! -e "$d/out/y" ] || fail "denied write reached the host"
# HOME and TMPDIR are private, writable, and gone afterwards.
"${A[@]}" -- sh -c 'echo h > "$HOME/h" && echo t > "$TMPDIR/t" && case "$HOME" in /tmp/cage-private.*) ;; *) exit 9;; esac' \
  || fail "private HOME/TMPDIR unusable"
# Network: no TCP to a host loopback service, no UDP, no unix sockets.
start_loopback_server listen; sleeper=$server_pid
port=$server_port; [ -n "$port" ] || fail "the test's listener did not start"
"$CAGE_PROBE" connect 127.0.0.1 "$port" >/dev/null 2>&1 || fail "twin: host service unreachable without cage"
if "${A[@]}" -- "$CAGE_PROBE" connect 127.0.0.1 "$port" >/dev/null 2>&1; then fail "reached a host TCP service"; fi
if "${A[@]}" -- python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" 2>/dev/null; then fail "UDP socket allowed"; fi
if "${A[@]}" -- python3 -c "import socket; socket.socket(socket.AF_UNIX)" 2>/dev/null; then fail "unix socket allowed"; fi
# Signals: a host process of the same user cannot be signalled (Landlock scope).
if "${A[@]}" -- kill -0 "$sleeper" 2>/dev/null; then fail "signalled a host process"; fi
kill -0 "$sleeper" || fail "host process died"
# The environment is still scrubbed.
[ "$(SECRET_TOKEN=s3 "${A[@]}" -- sh -c 'echo "${SECRET_TOKEN:-none}"')" = none ] || fail "secret env leaked"
# Ways around Landlock's TCP hooks are closed: Fast Open, listen() without bind, non-TCP stream
# protocols, other address families. The plain TCP socket (the twin) is still allowed.
out=$("${A[@]}" -- python3 -c "
import socket
for name, f in [('tfo', lambda: socket.socket().sendto(b'x', socket.MSG_FASTOPEN, ('127.0.0.1', $port))),
                ('listen', lambda: socket.socket().listen(1)),
                ('sctp', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)),
                ('mptcp', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)),
                ('dccp', lambda: socket.socket(socket.AF_INET, 6, 0)),
                ('vsock', lambda: socket.socket(40, socket.SOCK_STREAM)),
                ('tcp', lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM | socket.SOCK_NONBLOCK, 6))]:
    try:
        f(); print(name, 'ALLOWED')
    except OSError as e:
        print(name, 'denied')" 2>&1)
[ "$(echo $out)" = "tfo denied listen denied sctp denied mptcp denied dccp denied vsock denied tcp ALLOWED" ] ||
  fail "TCP side doors: $(echo $out)"
# io_uring (its connect bypasses the connect() check) is refused even with --seccomp none.
# The probe calls io_uring_setup(0, NULL): a kernel that lets the call in fails copying the NULL
# parameters with EFAULT, so EFAULT shows the call reached io_uring, EPERM that something refused it.
out=$("${A[@]}" --seccomp none -- "$CAGE_PROBE" syscall io_uring_setup 2>&1)
grep -q EPERM <<<"$out" || fail "io_uring under --seccomp none: $out"
# With namespaces too: io_uring is in the seccomp floor, under every profile (its requests pass no filter).
out=$("$CAGE" --mechanism namespaces --no-cwd --ro "$probe_dir" --seccomp none -- "$CAGE_PROBE" syscall io_uring_setup 2>&1)
grep -q EPERM <<<"$out" || fail "io_uring with namespaces and --seccomp none: $out"
# chmod is outside Landlock: checked by cage per call (tests/escape/metadata.sh), refused here for a --ro file.
chmod 644 "$d/ro/f"
if "${A[@]}" -- chmod 666 "$d/ro/f" 2>/dev/null; then fail "chmod of a --ro file worked"; fi
[ "$(stat -c %a "$d/ro/f")" = 644 ] || fail "--ro file's mode changed"
"${L[@]}" --allow-degraded pid,metadata --rw "$d/rw" -- chmod 600 "$d/rw/x" || fail "twin: chmod with metadata accepted failed"
[ "$(stat -c %a "$d/rw/x")" = 600 ] || fail "twin: chmod did not land"
# IPC objects of the host's IPC namespace (no private one without namespaces): System V segments,
# semaphores, queues, and POSIX message queues, which mq_open(O_CREAT) would leave there after the run.
mq="/cage-test-mq-$$"
mq_py='import ctypes, os, sys
rt = ctypes.CDLL("librt.so.1", use_errno=True); libc = ctypes.CDLL(None, use_errno=True)
out = []
for name, call in (("mq_open", lambda: rt.mq_open(sys.argv[1].encode(), os.O_CREAT | os.O_RDWR, 0o600, None)),
                   ("shmget", lambda: libc.shmget(0, 4096, 0o1600)), ("semget", lambda: libc.semget(0, 1, 0o1600)),
                   ("msgget", lambda: libc.msgget(0, 0o1600))):
    out.append(name + ("=ok" if call() >= 0 else "=" + os.strerror(ctypes.get_errno())))
print(" ".join(out))'
out=$("${A[@]}" -- python3 -c "$mq_py" "$mq" 2>&1)
[ "$out" = "mq_open=Operation not permitted shmget=Operation not permitted semget=Operation not permitted msgget=Operation not permitted" ] ||
  fail "host IPC objects: $out"
python3 -c 'import ctypes, sys; rt = ctypes.CDLL("librt.so.1", use_errno=True)
sys.exit(0 if rt.mq_open(sys.argv[1].encode(), 0, 0, None) < 0 else 1)' "$mq" ||
  { fail "a POSIX message queue $mq was left in the host's IPC namespace";
    python3 -c 'import ctypes, sys; ctypes.CDLL("librt.so.1").mq_unlink(sys.argv[1].encode())' "$mq"; }
# Elements Landlock cannot enforce are refused, each by name: a --ro beneath a --rw, --hostname.
mkdir -p "$d/rw/sub"
if "${L[@]}" --allow-degraded pid --rw "$d/rw" --ro "$d/rw/sub" -- true 2>"$d/err"; then fail "nested --ro ran"; fi
grep -q "nested-ro" "$d/err" || fail "nested --ro refusal unclear: $(cat "$d/err")"
if "${L[@]}" --allow-degraded pid --hostname box -- true 2>"$d/err"; then fail "--hostname ran"; fi
grep -q "hostname" "$d/err" || fail "--hostname refusal unclear: $(cat "$d/err")"
# --share-net is the host network on purpose: UDP works there.
"${L[@]}" --allow-degraded pid --share-net -- python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" ||
  fail "--share-net: UDP refused"

# --net: the proxy on the host's loopback, reachable only at its own address and only with the run's secret.
N=("${A[@]}")
mkdir "$d/www" && head -c 3000000 /dev/urandom >"$d/www/blob"
start_loopback_server http "$d/www"; web=$server_pid
www=$server_port; [ -n "$www" ] || fail "the test's web server did not start"
curl -s -o /dev/null "http://127.0.0.1:$www/" || fail "twin: the test's web server is unreachable from the host"
out=$("${N[@]}" --net "127.0.0.1:$www" -- sh -c "
  curl -sS http://127.0.0.1:$www/blob | sha256sum | cut -c1-16
  curl -sS --socks5-hostname "\${ALL_PROXY#socks5h://}" http://127.0.0.1:$www/blob | sha256sum | cut -c1-16
  curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/
  curl -sS --noproxy \"*\" -o /dev/null http://127.0.0.1:$www/ 2>/dev/null && echo direct-reached || echo direct-refused
  case \"\$HTTPS_PROXY\" in http://cage:*@127.0.0.1:*) echo url-ok ;; esac" 2>/dev/null)
want=$(sha256sum <"$d/www/blob" | cut -c1-16)
[ "$(echo $out)" = "$want $want 403 direct-refused url-ok" ] || fail "--net via the loopback proxy: $(echo $out) (want $want)"
# Another local process cannot use the run's proxy: without the secret it gets 407 / SOCKS refusal.
# The run (and so its proxy) lasts until the outsider's tries are over: a timed run ended first
# under emulation (Debian's 6.12, TCG), and a proxy that is gone refuses everything.
rm -f "$d/rw/port" "$d/rw/done"
"${N[@]}" --net "127.0.0.1:$www" -- sh -c 'echo "${HTTP_PROXY##*:}" > '"$d/rw/port"'
  while [ ! -e '"$d/rw/done"' ]; do sleep 0.1; done' &
runner=$!
while [ ! -s "$d/rw/port" ] && kill -0 "$runner" 2>/dev/null; do sleep 0.1; done
pp=$(cat "$d/rw/port")
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$pp" "http://127.0.0.1:$www/")
[ "$code" = 407 ] || fail "an outsider used the run's proxy without the secret (HTTP $code)"
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://cage:wrong@127.0.0.1:$pp" "http://127.0.0.1:$www/")
[ "$code" = 407 ] || fail "a wrong secret was accepted (HTTP $code)"
if curl -s -o /dev/null --socks5-hostname "127.0.0.1:$pp" "http://127.0.0.1:$www/"; then fail "SOCKS5 without the secret worked"; fi
kill -0 "$runner" 2>/dev/null || fail "the run ended before the outsider's tries: they proved nothing"
touch "$d/rw/done"
wait "$runner"
# Landlock alone would let the workload reach ANY host on the proxy's port number; cage checks each
# connect(): a service on 127.0.0.2 at that very port stays unreachable, the proxy stays reachable.
rm -f "$d/rw/port" "$d/rw/go"
"${N[@]}" --net "127.0.0.1:$www" -- sh -c "echo \"\${HTTP_PROXY##*:}\" > $d/rw/port
  while [ ! -e $d/rw/go ]; do sleep 0.1; done
  '$CAGE_PROBE' connect 127.0.0.2 \"\${HTTP_PROXY##*:}\" >/dev/null 2>&1 && echo other-reached || echo other-refused
  curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$www/" >"$d/same-port" 2>/dev/null &
runner=$!
for _ in $(seq 50); do [ -s "$d/rw/port" ] && break; sleep 0.1; done
pp=$(cat "$d/rw/port")
python3 -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.2', $pp)); s.listen(); time.sleep(10)" &
other=$!
for _ in $(seq 50); do "$CAGE_PROBE" connect 127.0.0.2 "$pp" >/dev/null 2>&1 && break; sleep 0.1; done
"$CAGE_PROBE" connect 127.0.0.2 "$pp" >/dev/null 2>&1 || fail "twin: the same-port service is unreachable from the host"
touch "$d/rw/go"
wait "$runner"
kill "$other" 2>/dev/null
[ "$(echo $(cat "$d/same-port"))" = "other-refused 200" ] || fail "same port, other host: $(cat "$d/same-port")"
kill "$web" 2>/dev/null
left=$(comm -13 <(echo "$before") <(orphans))
[ -z "$left" ] || fail "private directories left behind in /tmp: $left"
# A supervisor killed with SIGKILL leaves its private directory; the next run removes it.
"${A[@]}" -- sleep 30 &
victim=$!
for _ in $(seq 50); do [ -d "$(ls -d /tmp/cage-private."$victim".* 2>/dev/null | head -1)" ] && break; sleep 0.1; done
left=$(ls -d /tmp/cage-private."$victim".* 2>/dev/null | head -1)
[ -n "$left" ] || fail "no private directory named after the supervisor's pid"
kill -9 "$victim"; wait "$victim" 2>/dev/null
sleep_pid=$(pgrep -u "$(id -u)" -x -f "sleep 30" | head -1)  # the workload outlives cage here (the pid loss)
[ -n "$sleep_pid" ] && kill "$sleep_pid"
"${A[@]}" -- true || fail "run after a killed supervisor failed"
[ ! -e "$left" ] || fail "stale private directory $left not removed by the next run"

# For real: a user namespace where no further user namespace can be made, as on hardened hosts.
if unshare -Ur true 2>/dev/null; then
  out=$(unshare -Ur sh -c "echo 0 > /proc/sys/user/max_user_namespaces && \
        '$CAGE' --allow-degraded pid --ro '$d/ro' -- cat '$d/ro/f' && \
        '$CAGE' --allow-degraded pid --dry-run -- true | head -1" 2>&1) || fail "automatic choice of the Landlock-only mechanism failed: $out"
  echo "$out" | grep -q "^data$" || fail "automatic choice of the Landlock-only mechanism did not run: $out"
  echo "$out" | grep -q "mechanism landlock" || fail "automatic choice of the Landlock-only mechanism not reported: $out"
  if unshare -Ur sh -c "echo 0 > /proc/sys/user/max_user_namespaces && '$CAGE' --mechanism namespaces -- true" 2>/dev/null; then
    fail "--mechanism namespaces ran where user namespaces are blocked"
  fi
fi
# For real, the container way: an outer seccomp filter refusing unshare/clone(CLONE_NEWUSER), as
# Docker's and Kubernetes' default profiles do. cage notices, falls back, and still enforces.
out=$("$CAGE_PROBE" deny-userns "$CAGE" --no-cwd --allow-degraded pid --ro "$d/ro" --ro "$probe_dir" -- sh -c \
      "cat '$d/ro/f'; cat '$d/secret' 2>/dev/null || echo secret-denied; '$CAGE_PROBE' write '$d/out/z' >/dev/null 2>&1 || echo write-denied" 2>&1)
[ "$(echo $out)" = "data secret-denied write-denied" ] || fail "under a container-like seccomp filter: $out"
"$CAGE_PROBE" deny-userns "$CAGE" --allow-degraded pid --dry-run -- true | grep -q landlock_only ||
  fail "the container-like filter was not detected"
if "$CAGE_PROBE" deny-userns "$CAGE" --mechanism namespaces -- true 2>"$d/err"; then fail "namespaces ran under the filter"; fi
grep -q spawn_sandbox_unavailable "$d/err" || fail "refusal under the filter: $(cat "$d/err")"
echo "landlock_only: ok"
