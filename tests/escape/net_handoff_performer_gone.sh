#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h, performer.h): the workload kills the performer, the
# process of the sandbox that runs its connect, bind and listen (it runs as the workload's user), then
# binds and connects. A mediator that fell back to letting the kernel run the calls (CONTINUE) would
# reopen the races the hand-off closes.
# Policy: --net 127.0.0.1:PORT; twin: the same calls with the performer alive.
# Expected: with the performer alive the calls work; once it is gone (killed by the workload, if
# Landlock's signal scoping lets it, or from outside) they fail with EACCES, never run by the kernel.
. "$(dirname "$0")/lib.bash"
require_handoff
cat > "$work/gone.py" <<'PY'
import errno, os, signal, socket, sys, time
def calls():
    out = []
    for what, f in (("bind", lambda s: s.bind(("127.0.0.1", 8080))),
                    ("unix", lambda s: s.bind("/tmp/g.sock"))):
        s = socket.socket(socket.AF_UNIX if what == "unix" else socket.AF_INET)
        try:
            f(s); out.append(what + "=ok")
        except OSError as e:
            out.append(what + "=" + errno.errorcode.get(e.errno, str(e.errno)))
        s.close()
        if what == "unix" and os.path.exists("/tmp/g.sock"): os.unlink("/tmp/g.sock")
    return " ".join(out)
print("alive", calls())
# cage's own processes of the sandbox but init (pid 1): the performer, and the shim if any.
killed = 0
for p in os.listdir("/proc"):
    if not p.isdigit() or p == "1" or int(p) == os.getpid(): continue
    try:
        if open(f"/proc/{p}/comm").read().strip() == "cage":
            os.kill(int(p), signal.SIGKILL); killed += 1
    except PermissionError:
        print("scoped")
    except OSError:
        pass
time.sleep(0.3)
print("killed", killed)
print("gone", calls())
PY
cage_run --ro "$work" --net 127.0.0.1:1 -- "$py" "$work/gone.py"
[ "$rc" -eq 0 ] || { fail "the helper exited $rc: $out $err"; finish; }
grep -qx "alive bind=ok unix=ok" <<<"$out" && pass "with the performer alive, bind and unix bind work" ||
  fail "with the performer alive: $out"
if grep -qx "killed 0" <<<"$out"; then
  grep -q scoped <<<"$out" && pass "the workload cannot signal the performer (Landlock scoping)" ||
    fail "found no performer to kill: $out"
elif grep -qx "gone bind=EACCES unix=EACCES" <<<"$out"; then
  pass "with the performer killed, bind and unix bind fail with EACCES"
else
  fail "with the performer killed: $out"
fi
# The same fault from outside: cage's processes of the sandbox but init and the command, killed by the
# caller while the command waits for a file to appear.
mkdir "$work/rw" && chmod 777 "$work/rw"
cat > "$work/wait.py" <<PY
import os, time
while not os.path.exists("$work/rw/go"): time.sleep(0.05)
exec(open("$work/gone.py").read().split("print(\"alive\"")[0])
print("gone", calls())
PY
"$CAGE" --ro "$work" --rw "$work/rw" --net 127.0.0.1:1 -- "$py" "$work/wait.py" </dev/null >"$work/bg.out" 2>&1 &
sup=$!
init=""
for _ in $(seq 100); do init=$(pgrep -P "$sup" | head -1); [ -n "$init" ] && break; sleep 0.05; done
sleep 0.5
killed=0
for p in $(pgrep -P "$init" -x cage); do kill -9 "$p" && killed=$((killed + 1)); done
touch "$work/rw/go"
wait "$sup"
if [ "$killed" -eq 0 ]; then
  fail "found no performer to kill from outside (init ${init:-?}): $(cat "$work/bg.out")"
elif grep -qx "gone bind=EACCES unix=EACCES" "$work/bg.out"; then
  pass "with the performer killed from outside, bind and unix bind fail with EACCES"
else
  fail "with the performer killed from outside: $(cat "$work/bg.out")"
fi
finish
