#!/usr/bin/env bash
# Attack on egress hand-off's two dialling paths: the mediator's own (an IPv4 literal,
# src/linux/connect_notify.cc, proxy/server_direct.cc) and the proxy loop's (a synthetic address, the
# name cage's DNS gave it, proxy/server.cc). Each kept the dial, with the workload's socket, until
# the dial ended (at most the 10 s connect timeout), also when its caller was SIGKILLed while it
# waited: found, a workload that forks, connects to a slow allowed destination (a host listener
# whose accept queue is full) and kills the child, over and over, piled up two descriptors of the
# supervisor per dead caller for 10 s each, until the supervisor ran out of descriptors and every
# mediated call of the sandbox (an allowed connect, a bind run by the performer) failed with EACCES
# (on the direct path first; on the loop's, with the direct path fixed, after 400 dead callers).
# The supervisor's RLIMIT_NOFILE is lowered to 256 (prlimit) so that a few hundred dead callers show
# it; with the default limit a faster churn does the same.
# Policy: --net 127.0.0.1:FULL --net 127.0.0.1:OK, and --net localhost:FULL --net localhost:OK with
# the workload connecting to localhost's synthetic address (transparent: hand-off mode).
# Expected, on each path: after 400 dead callers an allowed connect and a bind are still answered,
# and the audit reports the abandoned dials as failed ("abandoned") well before their 10 s deadline,
# none as handed off. Twin: the same connect and bind without the churn.
. "$(dirname "$0")/lib.bash"
require_handoff
command -v prlimit >/dev/null || { echo "skip: no prlimit"; exit 77; }
"$py" - "$work/full" >/dev/null 2>&1 <<'PY' &
import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
queued = socket.create_connection(s.getsockname())  # the one the queue holds: it is full now
with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(s.getsockname()[1]))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(180)
PY
at_exit "kill $!"
"$py" - "$work/ok" >/dev/null 2>&1 <<'PY' &
import os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(512)
with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(s.getsockname()[1]))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
while True: s.accept()[0].close()
PY
at_exit "kill $!"
for _ in $(seq 200); do [ -s "$work/full" ] && [ -s "$work/ok" ] && break; sleep 0.05; done
full=$(cat "$work/full" 2>/dev/null) ok=$(cat "$work/ok" 2>/dev/null)
[ -n "$full" ] && [ -n "$ok" ] || { fail "the test's listeners did not start"; finish; }
cp "$escape_dir/handoff_dead_callers.py" "$work/dead.py" && chmod 644 "$work/dead.py"
# localhost's synthetic address, as compile gives it (exact names in rule order): the loop's path.
synthetic=$("$CAGE" --dry-run --verbose --net localhost:$full --net localhost:$ok -- true 2>/dev/null |
  sed -n 's/.*localhost -> \(198\.1[89]\.[0-9.]*\).*/\1/p' | head -n 1)
[ -n "$synthetic" ] || { fail "--dry-run shows no synthetic address for localhost"; finish; }
run() {  # PATH CHURN HOST RULE-HOST
  rm -f "$work/audit.jsonl"
  rc=0
  out=$(timeout 90 prlimit --nofile=256:256 "$CAGE" --ro "$work" --audit "$work/audit.jsonl" \
    --unsetenv '*_PROXY' --unsetenv '*_proxy' --net "$4:$full" --net "$4:$ok" -- \
    "$py" "$work/dead.py" "$full" "$ok" "$2" "$3" 2>&1) || rc=$?
}
attack() {  # PATH HOST RULE-HOST
  local path=$1 counts
  run "$path" 0 "$2" "$3"
  if [ "$rc" -eq 0 ] && grep -q '^connect ok' <<<"$out" && grep -q '^bind ok' <<<"$out"; then
    pass "$path: twin: without dead callers the connect and the bind are answered"
  else
    fail "$path: twin: exit $rc: $out"; return
  fi
  run "$path" 400 "$2" "$3"
  [ "$rc" -eq 0 ] || fail "$path: the workload exited $rc: $out"
  if grep -q '^connect ok' <<<"$out" && grep -q '^bind ok' <<<"$out"; then
    pass "$path: after 400 dead callers the connect and the bind are still answered"
  else
    fail "$path: after 400 dead callers: $(grep -E '^(connect|bind) ' <<<"$out" | tr '\n' ' ')(the supervisor holds their dials)"
  fi
  # Abandoned within a tick (250 ms) of the caller's death; 5 s leaves a loaded machine room and
  # still tells them from dials kept to the 10 s deadline.
  counts=$("$py" - "$work/audit.jsonl" "$full" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mine = [e for e in events if e.get("port") == int(sys.argv[2])]
handed = [e for e in mine if "handed off" in e.get("reason", "")]
abandoned = [e for e in mine if "abandoned" in e.get("reason", "") and e.get("decision") == "failed"]
# Identical failures are coalesced (a line with `repeats` stands for that many).
n_abandoned = sum(e.get("repeats", 1) for e in abandoned)
slowest = max([e.get("duration_ms", 0) for e in abandoned] or [0])
print("%d events for the slow port, %d handed off, %d abandoned, the slowest after %d ms" %
      (len(mine), len(handed), n_abandoned, slowest))
sys.exit(1 if handed or n_abandoned < 50 or slowest >= 5000 else 0)
PY
  ) && pass "$path: the abandoned dials are audited as such, none as handed off ($counts)" ||
    fail "$path: audit: $counts"
}
attack direct 127.0.0.1 127.0.0.1
attack loop "$synthetic" localhost
finish
