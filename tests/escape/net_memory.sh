#!/usr/bin/env bash
# The --net proxy's memory is bounded per sandbox. Found: with --memory 64M, 4,000 held connections
# grew the host-side cage process (the supervisor, outside the sandbox's cgroup) from 4 MB to 232 MB:
# each held an unfinished request head of up to 64 KiB (128 KiB of string capacity). Now a sandbox has
# at most connection_limit(--memory) = --memory / 320 KiB connections (src/proxy/budget.h; here
# 32M -> 102), each bounded to 320 KiB of the supervisor's memory; past that a connection gets 503.
# The workload opens 1000 connections, each sending 60 KiB of an unfinished head (the heaviest state a
# connection can hold with no upstream), while the test reads the supervisor's VmRSS and fd count.
# Expected: the supervisor grows by at most 102 x 320 KiB and holds at most 102 (+64 being refused)
# client sockets; at least 1000-102 connections were refused, some with a readable 503.
# Twin: once the held ones end (head timeout), a connection is served (a CONNECT gets 200).
# Both mechanisms (lib.bash's mech): the Landlock-only one serves the same proxy on the host's
# loopback, whose address and secret the workload takes from http_proxy.
. "$(dirname "$0")/lib.bash"
require_sandbox  # skips where the mechanism is refused (the Landlock-only one below Landlock ABI 6)
for t in python3 mkfifo; do command -v $t >/dev/null || { echo "skip: $t missing"; exit 77; }; done
ulimit -n 4096 2>/dev/null || { echo "skip: cannot raise the open file limit to 4096"; exit 77; }
# A sanitized cage (the ASan+UBSan stage) re-executes its shim with ASan's shadow memory, which
# 32M under a cgroup cannot hold: there the budget is 128M (cap 409), the same arithmetic.
mem_mib=32
ldd "$CAGE" 2>/dev/null | grep -q libasan && mem_mib=128
n=1000 cap=$(((mem_mib << 20) / (320 << 10))) cost_kib=320 refusing=64
d=$work
pids=()
at_exit 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done'
# An upstream that accepts and holds (the twin's CONNECT target).
python3 -c "
import socket, sys, os
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(64)
open('$d/port.tmp', 'w').write(str(s.getsockname()[1])); os.replace('$d/port.tmp', '$d/port')
held = []
s.settimeout(120)
while True: held.append(s.accept()[0])" &
pids+=($!)
for _ in $(seq 100); do [ -s "$d/port" ] && break; sleep 0.1; done
P=$(cat "$d/port" 2>/dev/null)
[ -n "$P" ] || { echo "FAIL: upstream did not start" >&2; exit 1; }
cat >"$d/hold.py" <<'PY'
import base64, os, select, socket, sys, time, urllib.parse
n, port = int(sys.argv[1]), int(sys.argv[2])
u = urllib.parse.urlsplit(os.environ["http_proxy"])  # http://127.0.0.1:3128, or with cage:SECRET@
proxy = (u.hostname, u.port)
auth = b"Proxy-Authorization: Basic %s\r\n" % base64.b64encode(b"%s:%s" % (u.username.encode(), u.password.encode())) if u.username else b""
head = b"GET http://127.0.0.1:%d/ HTTP/1.1\r\n" % port + (b"X-Pad: " + b"a" * 6000 + b"\r\n") * 10
print("ready", flush=True); sys.stdin.readline()
socks = []
for i in range(n):
    s = socket.create_connection(proxy)
    try:
        s.sendall(head)  # about 60 KiB, never finished
    except OSError:
        pass              # refused and closed at once
    socks.append(s)
refused, got503, deadline = set(), 0, time.time() + 8
while len(refused) < n - int(sys.argv[3]) and time.time() < deadline:
    r, _, _ = select.select([s for s in socks if s not in refused], [], [], 0.5)
    for s in r:
        try:
            got503 += s.recv(100).startswith(b"HTTP/1.1 503")
        except OSError:
            pass
        refused.add(s)
print("refused %d 503 %d" % (len(refused), got503), flush=True)
sys.stdin.readline()
# The held ones end by the proxy's 10 s head timeout: their EOF shows the slots are free again.
held, deadline = [s for s in socks if s not in refused], time.time() + 30
while held and time.time() < deadline:
    r, _, _ = select.select(held, [], [], 1)
    held = [s for s in held if s not in r]
t = socket.create_connection(proxy)
t.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n%s\r\n" % (port, auth))
print("twin", t.recv(100).split(b"\r\n")[0].decode(), flush=True)
PY
mkfifo "$d/in" "$d/out"
(cd / && exec "$CAGE" ${mech[@]+"${mech[@]}"} --memory "${mem_mib}M" --net "127.0.0.1:$P" --ro "$d" -- sh -c "ulimit -n 4096; exec python3 $d/hold.py $n $P $cap") \
  <"$d/in" >"$d/out" 2>"$d/err" &
cage_pid=$!
pids+=($cage_pid)
exec 3>"$d/in" 4<"$d/out"
sample() { echo "$(awk '/^VmRSS/ {print $2}' /proc/$cage_pid/status) $(ls /proc/$cage_pid/fd | wc -l)"; }
read -r -t 60 line <&4 && [ "$line" = ready ] || { cat "$d/err" >&2; echo "FAIL: the workload did not start" >&2; exit 1; }
read -r rss0 fd0 <<<"$(sample)"
echo go >&3
read -r -t 60 line <&4 || { cat "$d/err" >&2; echo "FAIL: the workload did not report" >&2; exit 1; }
read -r rss1 fd1 <<<"$(sample)"
echo go >&3
set -- $line
refused=$2 got503=$4
grew=$((rss1 - rss0)) bound=$((cap * cost_kib))
echo "supervisor: VmRSS ${rss0} -> ${rss1} kB (+$grew, bound $bound), fds $fd0 -> $fd1; $line"
[ "$grew" -le "$bound" ] && echo "ok: the supervisor grew by $grew kB <= $cap x $cost_kib KiB" ||
  fail "the supervisor grew by $grew kB for $n connections, more than $cap x $cost_kib KiB"
# + 8: past the 64 lingering refusals, the one reported each second also lingers.
[ $((fd1 - fd0)) -le $((cap + refusing + 8)) ] && echo "ok: it holds $((fd1 - fd0)) more fds <= $cap + $refusing + 8" ||
  fail "the supervisor holds $((fd1 - fd0)) more fds for $n connections (limit $cap)"
[ "$refused" -ge $((n - cap)) ] && [ "$got503" -ge 1 ] && echo "ok: $refused refused, $got503 with a 503" ||
  fail "only $refused of $n connections refused ($got503 with 503); the limit is $cap"
grep -q "this sandbox's limit" "$d/err" && echo "ok: reported: $(grep -m1 "sandbox's limit" "$d/err")" ||
  fail "no line on stderr about the limit: $(head -c 500 "$d/err")"
[ "$(grep -c "sandbox's limit" "$d/err")" -le 10 ] || fail "the refusals were not rate-limited on stderr"
read -r -t 60 line <&4
[ "$line" = "twin HTTP/1.1 200 Connection established" ] && echo "ok: twin: below the limit a CONNECT is served" ||
  fail "twin: $line; $(tail -c 300 "$d/err")"
exec 3>&- 4<&-
wait $cage_pid
finish
