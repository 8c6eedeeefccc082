#!/usr/bin/env bash
# Runs inside the test container (tests/docker/run.sh): what a user of cage in a container meets
# first (--check, a plain run, the mechanism auto picks), then the escape suite and the real workloads
# as root and as the unprivileged user, under the mechanism this setting allows, then a leftover check.
# Usage: inside.sh SETTING BUILD_DIR SOURCE_DIR
set -uo pipefail
setting=$1 build=$2 src=$3
export CAGE="$build/cage" CAGE_PROBE="$build/cage-probe" CAGE_SOURCE_DIR="$src" CAGE_BUILD_DIR="$build"
passed=0 failed=0 skipped=0 failures=()
ok() { echo "ok: $setting: $1"; passed=$((passed + 1)); }
bad() { echo "FAIL: $setting: $1" >&2; failed=$((failed + 1)); failures+=("$1"); }

case $setting in
  privileged) mech=namespaces landlock_only=0 ;;
  *) mech=landlock landlock_only=1 ;;
esac

# --check: names what is missing and, where namespaces cannot be had, how cage can still run.
check=$("$CAGE" --check 2>&1); check_rc=$?
if [ "$mech" = namespaces ]; then
  [ $check_rc -eq 0 ] && ok "--check: full confinement available" || bad "--check exited $check_rc: $check"
else
  if [ $check_rc -ne 0 ] && grep -q 'allow-degraded=pid' <<<"$check"; then ok "--check explains the Landlock-only mechanism"
  else bad "--check (exit $check_rc) does not name --allow-degraded=pid: $check"; fi
fi

# A plain run: under namespaces it just works; otherwise auto picks Landlock-only and refuses until
# the documented loss is accepted, then runs.
out=$("$CAGE" -- echo hello 2>&1); rc=$?
if [ "$mech" = namespaces ]; then
  [ $rc -eq 0 ] && [ "$out" = hello ] && ok "cage -- echo runs" || bad "cage -- echo: exit $rc: $out"
else
  [ $rc -eq 125 ] && grep -q 'allow-degraded=pid' <<<"$out" && ok "auto refuses without --allow-degraded=pid, naming it" ||
    bad "auto without --allow-degraded: exit $rc: $out"
  out=$("$CAGE" --allow-degraded=pid -- echo hello 2>&1); rc=$?
  [ $rc -eq 0 ] && [ "$out" = hello ] && ok "auto with --allow-degraded=pid runs" || bad "auto with --allow-degraded=pid: exit $rc: $out"
fi
plan=$("$CAGE" --dry-run --allow-degraded=pid -- true 2>&1)
want='platform: linux (user, mount, pid'; [ "$mech" = landlock ] && want='mechanism.*landlock'
grep -qi "$want" <<<"$plan" && ok "--dry-run names mechanism $mech" || bad "--dry-run does not name $mech: $plan"

# --net: a server on the container's loopback, reached through cage's proxy, not directly.
srv=$(mktemp -d) && echo served >"$srv/index.html"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$srv" >"$srv/log" 2>&1 &
srv_pid=$!
for _ in $(seq 50); do port=$(grep -o 'port [0-9]*' "$srv/log" | grep -o '[0-9]*$'); [ -n "$port" ] && break; sleep 0.1; done
fetch='import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=10).read().decode().strip())'
out=$("$CAGE" --allow-degraded=pid --net "127.0.0.1:$port" -- python3 -c "$fetch" "http://127.0.0.1:$port/" 2>&1)
[ -n "$port" ] && [ "$out" = served ] && ok "--net reaches the listed loopback server through the proxy" || bad "--net fetch: $out"
# A non-blocking connect (asyncio), as most clients make it: cage's answer must not block either.
nb='import asyncio, base64, os, sys, urllib.parse as up
async def main(url):
    p = up.urlsplit(os.environ["http_proxy"])
    r, w = await asyncio.open_connection(p.hostname, p.port)
    auth = ""
    if p.username:
        cred = base64.b64encode(f"{up.unquote(p.username)}:{up.unquote(p.password)}".encode()).decode()
        auth = f"Proxy-Authorization: Basic {cred}\r\n"
    host = up.urlsplit(url).netloc
    w.write(f"GET {url} HTTP/1.0\r\nHost: {host}\r\n{auth}\r\n".encode())
    print((await r.read()).split(b"\r\n\r\n", 1)[1].decode().strip())
asyncio.run(main(sys.argv[1]))'
out=$("$CAGE" --allow-degraded=pid --net "127.0.0.1:$port" -- python3 -c "$nb" "http://127.0.0.1:$port/" 2>&1)
[ -n "$port" ] && [ "$out" = served ] && ok "--net: a non-blocking connect reaches the proxy" || bad "--net non-blocking fetch: $out"
# The denied twin: the same server, unlisted (another port is), neither through the proxy nor directly.
direct='import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)'
if [ -z "$port" ] || "$CAGE" --allow-degraded=pid --net 127.0.0.1:9 -- python3 -c "$fetch" "http://127.0.0.1:$port/" >/dev/null 2>&1 ||
  "$CAGE" --allow-degraded=pid --net 127.0.0.1:9 -- python3 -c "$direct" "$port" >/dev/null 2>&1; then
  bad "--net: an unlisted loopback server was reached"
else ok "--net: an unlisted loopback server is refused, through the proxy and directly"; fi
kill "$srv_pid"; wait "$srv_pid" 2>/dev/null; rm -rf "$srv"

# The escape suite and the workloads, as root and as the unprivileged user (tests/as-user.sh).
for script in "$src"/tests/escape/*.sh "$src"/tests/integration/workloads.sh; do
  name=$(basename "$script" .sh)
  for who in root user; do
    log=$(mktemp)
    CAGE_LANDLOCK_ONLY=$landlock_only timeout 300 "$src/tests/as-$who.sh" bash "$script" >"$log" 2>&1
    rc=$?
    case $rc in
      0) ok "$who.$name" ;;
      77) echo "skip: $setting: $who.$name: $(grep -m1 skip "$log")"; skipped=$((skipped + 1)) ;;
      *) bad "$who.$name (exit $rc)"; tail -20 "$log" >&2 ;;
    esac
    rm -f "$log"
  done
done

# Nothing of cage's may be left: no private directory, no process but this script's.
left=$(ls -d /tmp/cage-private.* 2>/dev/null)
[ -z "$left" ] && ok "no private directory left" || bad "left behind: $left"
procs=$(ps -eo pid=,comm= | awk -v me=$$ '$1 != 1 && $1 != me && $2 != "ps" && $2 != "awk" && $2 != "bash"')
[ -z "$procs" ] && ok "no process left" || bad "processes left: $procs"

echo "docker $setting: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ] || { printf 'failed: %s\n' "${failures[@]}" >&2; exit 1; }
