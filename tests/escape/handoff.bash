# Shared by tests/escape/net_handoff_*.sh (sourced; no .sh suffix, so not a test itself): builds
# handoff_race.c, starts two listeners on the host's loopback (ALLOWED, which --net lists, and
# FORBIDDEN, which counts every connection it gets: none may come), and runs one attack mode
# inside cage for $secs seconds. Shown first without cage: the same attack reaches FORBIDDEN there.
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
landlock_only && { echo "skip: egress hand-off is the namespace mechanism's (transparent --net)"; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler for the race helper"; exit 77; }
require_sandbox
secs=${CAGE_HANDOFF_RACE_SECS:-12}
cc -O2 -pthread -o "$work/race" "$escape_dir/handoff_race.c" || { fail "cannot build handoff_race.c"; finish; }
chmod 755 "$work/race"
# ALLOWED and FORBIDDEN: ports of the host's loopback the kernel picks (never one in use).
"$work/race" serve - "$work/allowed.port" & at_exit "kill $!"
"$work/race" serve "$work/forbidden" "$work/forbidden.port" & at_exit "kill $!"
for _ in $(seq 100); do [ -s "$work/allowed.port" ] && [ -s "$work/forbidden.port" ] && break; sleep 0.1; done
allowed=$(cat "$work/allowed.port" 2>/dev/null) forbidden=$(cat "$work/forbidden.port" 2>/dev/null)
[ -n "$allowed" ] && [ -n "$forbidden" ] || { fail "the helper's listeners did not start"; finish; }
# The count once the listener has accepted everything queued (it reads 0.3 s apart until unchanged).
forbidden_count() {
  local a b
  b=$(cat "$work/forbidden" 2>/dev/null || echo 0)
  while :; do
    sleep 0.3
    a=$b b=$(cat "$work/forbidden" 2>/dev/null || echo 0)
    [ "$a" = "$b" ] && break
  done
  echo $((10#${b:-0}))
}
# race MODE: the attack inside cage; fails on any connection at FORBIDDEN or a host socket listening,
# and unless hand-offs happened (else the test proved nothing).
race() {
  local mode=$1 before
  before=$(forbidden_count)
  cage_run --ro "$work" --net 127.0.0.1:$allowed -- "$work/race" "$mode" $allowed $forbidden "$secs"
  [ "$rc" -eq 0 ] || { fail "$mode: the helper exited $rc: $err"; return; }
  local n l
  n=$(awk '/^handoffs/ { s += $2 } END { print s + 0 }' <<<"$out")
  l=$(awk '/^listened/ { s += $2 } END { print s + 0 }' <<<"$out")
  [ "$n" -gt 0 ] || fail "$mode: no socket was handed off (the attack tested nothing): $out $err"
  [ "$l" -eq 0 ] || fail "$mode: a host socket was put in listen $l times"
  if [ "$(forbidden_count)" != "$before" ]; then
    fail "$mode: the forbidden listener got $(($(forbidden_count) - before)) connection(s) from the sandbox"
  else
    pass "$mode: $n hand-offs attacked for ${secs}s, nothing reached 127.0.0.1:$forbidden"
  fi
}
# unguarded MODE: the same attack without cage for a second must reach FORBIDDEN (the trick works).
unguarded() {
  local before
  before=$(forbidden_count)
  "$work/race" "$1" $allowed $forbidden 2 >/dev/null 2>&1
  sleep 0.2
  if [ "$(forbidden_count)" != "$before" ]; then pass "$1 without cage reaches the forbidden listener"
  else fail "$1 without cage did not reach the forbidden listener: the test cannot tell"; fi
}
