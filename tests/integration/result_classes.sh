#!/usr/bin/env bash
# --result: each of cage's error classes has its own result class (issue 22, point 4), and a run
# whose connections --net denied is network_denied when it fails, completed (with the counts) when it
# copes. Every result validates against docs/schema/result.schema.json. Network: loopback only.
set -u
. "$(dirname "$0")/limits_lib.bash"
run() { timeout 60 "$CAGE" "$@"; }
check() {  # check NAME CLASS EXPECTED_EXIT -- cage args...
  local name=$1 cls=$2 want=$3; shift 4
  run --result "$work/$name.json" "$@" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  [ -s "$work/$name.json" ] || fail "$name: no result written (exit $rc): $(cat "$work/$name.err")"
  valid_result "$work/$name.json"
  [ "$(json "$work/$name.json" 'd["class"]')" = "$cls" ] || fail "$name: expected $cls: $(cat "$work/$name.json")"
  [ "$rc" -eq "$want" ] || fail "$name: exit $rc, expected $want: $(cat "$work/$name.err")"
  echo "ok: $name -> $cls ($rc)"
}

check usage_error usage_error 125 -- --
[ "$(json "$work/usage_error.json" 'd["error"]["class"]')" = usage_error ] || fail "usage_error: error.class"
check invalid_policy invalid_policy 125 -- --rw "$work/missing" -- true
[ "$(json "$work/invalid_policy.json" 'd["error"]["input"]')" = "--rw $work/missing" ] || fail "invalid_policy: input"
check bad_size invalid_policy 125 -- --tmpfs "$work/x:size=lots" -- true
check not_found not_found 127 -- -- no-such-command-anywhere
printf 'not a program\n' >"$work/notexec"; chmod 644 "$work/notexec"
check exec_failed exec_failed 126 -- --ro "$work" -- "$work/notexec"
setuid=$(find /usr/bin /bin -maxdepth 1 -perm -4000 -type f 2>/dev/null | head -1)
if [ -n "$setuid" ]; then
  check capability_denied capability_denied 125 -- -- "$setuid"
  grep -q "setuid" "$work/capability_denied.err" || fail "capability_denied: message $(cat "$work/capability_denied.err")"
else
  echo "note: no setuid program on this host: capability_denied not reached"
fi
check completed completed 0 -- -- true

# network_denied: a loopback server on the host, reached through cage's proxy; its port is allowed,
# the next one is not.
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }
. "$(dirname "$0")/net_lib.bash"
mkdir "$work/www"; echo hello >"$work/www/f"
start_loopback_server http "$work/www" || fail "the test's web server did not start"
srv=$server_pid; port=$server_port
trap 'kill $srv 2>/dev/null; rm -rf "$work"' EXIT
proxy=http://127.0.0.1:3128
denied="curl -sf -o /dev/null -x $proxy http://127.0.0.1:$(other_port "$port")/"
allowed="curl -sf -x $proxy http://127.0.0.1:$port/f"
# The denial makes the command fail: network_denied, the command's own exit code (curl -f: 22).
check net_denied network_denied 22 -- --net "127.0.0.1:$port" -- sh -c "$allowed >/dev/null; $denied"
[ "$(json "$work/net_denied.json" 'd["network"]["denied"]')" = 1 ] &&
  [ "$(json "$work/net_denied.json" 'd["network"]["allowed"]')" = 1 ] || fail "net_denied counts: $(cat "$work/net_denied.json")"
grep -q "exited non-zero after --net denied 1 connection" "$work/net_denied.err" || fail "net_denied note: $(cat "$work/net_denied.err")"
# Its twins: the same denial in a command that copes stays completed with the counts; the allowed
# request alone is completed with nothing denied.
check net_coped completed 0 -- --net "127.0.0.1:$port" -- sh -c "$denied; $allowed"
[ "$(json "$work/net_coped.json" 'd["network"]["denied"]')" = 1 ] || fail "net_coped counts: $(cat "$work/net_coped.json")"
[ "$(cat "$work/net_coped.out")" = hello ] || fail "net_coped: allowed request failed"
check net_allowed completed 0 -- --net "127.0.0.1:$port" -- sh -c "$allowed"
[ "$(json "$work/net_allowed.json" 'd["network"]["denied"]')" = 0 ] || fail "net_allowed: a denial counted"
# A failure with nothing denied is the command's own: completed.
check net_failed_alone completed 3 -- --net "127.0.0.1:$port" -- sh -c "$allowed >/dev/null; exit 3"
echo PASS
