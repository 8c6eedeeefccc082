#!/usr/bin/env bash
# A workload that dies of signal N makes cage die of N too (after its report), not exit 128+N: a shell
# loop around cage stops on Ctrl-C as it does around the bare command (bash's "wait and cooperative
# exit" takes a child's exit(130) for a handled SIGINT and goes on). cage's own statuses stay.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
[ -x "$py" ] || { echo "skip: no $py"; exit 77; }

# What a parent sees: Python reports a death by signal N as -N, an exit as the status.
returncode() { "$py" -c 'import subprocess, sys; print(subprocess.run(sys.argv[1:]).returncode)' "$@" 2>/dev/null; }
rc=$(returncode "$CAGE" -- sh -c 'kill -TERM $$')
[ "$rc" = -15 ] && pass "workload killed by SIGTERM: cage dies of SIGTERM" || fail "kill -TERM \$\$: returncode $rc, want -15"
rc=$(returncode "$CAGE" -- sh -c 'exit 143')
[ "$rc" = 143 ] && pass "workload's own exit 143 stays an exit" || fail "exit 143: returncode $rc, want 143"
rc=$(returncode "$CAGE" -- sh -c 'kill -SEGV $$')
[ "$rc" = -11 ] && pass "workload killed by SIGSEGV: cage dies of SIGSEGV" || fail "kill -SEGV: returncode $rc, want -11"
rc=$(returncode "$CAGE" --timeout 1s -- sh -c 'kill -STOP $$; sleep 30')
[ "$rc" = 124 ] && pass "--timeout still exits 124" || fail "--timeout: returncode $rc, want 124"
rc=$(returncode "$CAGE" -- /nonexistent-command)
[ "$rc" = 127 ] && pass "a missing command still exits 127" || fail "missing command: returncode $rc, want 127"

# The result still names the workload's signal, and the exit code a shell reports.
"$CAGE" --result "$work/result.json" -- sh -c 'kill -TERM $$' 2>/dev/null
"$py" - "$work/result.json" <<'EOF' && pass "--result: class signaled, signal 15, exit_code 143" || fail "--result: $(cat "$work/result.json")"
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(not (r["class"] == "signaled" and r["signal"] == 15 and r["signal_name"] == "SIGTERM" and r["exit_code"] == 143))
EOF
# No core file of cage's own after a workload's SIGABRT (RLIMIT_CORE 0 before the raise).
mkdir "$work/core" && cd "$work/core" || exit 1
(ulimit -c unlimited 2>/dev/null; "$CAGE" -- sh -c 'kill -ABRT $$' 2>/dev/null); st=$?
[ "$st" -eq 134 ] && [ -z "$(ls -A)" ] && pass "SIGABRT: status 134, no core of cage's" ||
  fail "SIGABRT: status $st, files: $(ls -A)"
cd "$work/cwd" || exit 1

# Ctrl-C on a terminal stops a shell loop around cage after the first pass, as around plain sleep;
# without Ctrl-C the loop runs every pass (the twin).
loop() {  # loop COMMAND KEYS: a bash loop on a fresh pty; prints what it wrote
  "$py" - "$1" "$2" "$work/ready" <<'EOF'
import os, pty, select, sys, time
cmd, keys, ready = sys.argv[1], sys.argv[2], sys.argv[3]
script = 'for i in 1 2 3; do %s; echo "iter $i rc=$?"; done; echo loop-done' % cmd
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-c", script])
out, start, sent = b"", time.time(), False
while time.time() - start < 30:
    if keys and not sent and os.path.exists(ready):
        time.sleep(0.3)
        os.write(fd, b"\x03")
        sent = True
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
_, st = os.waitpid(pid, 0)
print(out.decode(errors="replace").replace("\r", ""))
print("status", st)
EOF
}
for what in cage bare; do
  rm -f "$work/ready"
  if [ $what = cage ]; then cmd="\"$CAGE\" --rw \"$work\" -- sh -c 'touch \"$work/ready\"; exec sleep 5'"
  else cmd="sh -c 'touch \"$work/ready\"; exec sleep 5'"; fi
  t0=$(date +%s)
  res=$(loop "$cmd" ctrl-c)
  t=$(($(date +%s) - t0))
  if ! grep -q 'iter 2' <<<"$res" && ! grep -q loop-done <<<"$res" && [ "$t" -lt 5 ]; then
    pass "Ctrl-C stops the loop around $what after the first pass (${t}s)"
  else
    fail "Ctrl-C did not stop the loop around $what (${t}s): $res"
  fi
done
res=$(loop "\"$CAGE\" -- sh -c 'sleep 0.1'" "")
grep -q 'iter 3 rc=0' <<<"$res" && grep -q loop-done <<<"$res" && pass "without Ctrl-C the loop runs every pass" ||
  fail "the loop without Ctrl-C: $res"
finish
