# --explain's checks, shared by explain.sh (namespaces) and explain_landlock_only.sh (Landlock
# only): each refusal's exact line, then the run with the suggested flag added, which must succeed
# (the denial next to its allowed twin). Needs C (the cage command with the mechanism's flags), NOT
# (the verdict of a path beneath no grant: hidden under namespaces, refused under Landlock) and
# GIT_OP, GIT_PATH (what git is refused above its directory: under Landlock, which does not mediate
# stat, a read).
. "$(dirname "${BASH_SOURCE[0]}")/net_lib.bash"
net_test_begin curl git
chmod 755 "$d"
mkdir -p "$d/home" "$d/out" "$d/bin" "$d/repo/sub"
echo s3cret > "$d/home/secret"
printf '#!/bin/sh\necho never\n' > "$d/bin/ls"; chmod 755 "$d/bin/ls"
chmod -R a+rX "$d"
# `line REGEX`: stderr of the last run has exactly one line matching it, whole.
line() { [ "$(grep -cE "^$1\$" "$d/err")" = 1 ] || fail "want one line '$1'; stderr: $(cat "$d/err")"; }

# A read of an ungranted file: named with its first reader, then allowed by the flag it names.
"${C[@]}" --explain -- cat "$d/home/secret" >/dev/null 2>"$d/err" && fail "read an ungranted file"
line "cage: explain: read $d/home/secret: $NOT \(1x, first cat\[[0-9]+\]\); allow with --ro $d/home/secret"
[ "$("${C[@]}" --explain --ro "$d/home/secret" -- cat "$d/home/secret" 2>"$d/err")" = s3cret ] ||
  fail "the suggested --ro did not allow the read: $(cat "$d/err")"
grep -q "explain: read $d/home/secret" "$d/err" && fail "an allowed read was listed: $(cat "$d/err")"

# A write beneath a read-only grant (make's recipe, run by sh): --rw of its directory.
printf 'all:\n\techo built > %s/out/f\n' "$d" > "$d/home/Makefile"
"${C[@]}" --explain --ro "$d/home" --ro "$d/out" -- make -s -C "$d/home" >/dev/null 2>"$d/err" &&
  fail "wrote beneath --ro"
line "cage: explain: create $d/out/f: read_only \(1x, first sh\[[0-9]+\]\); allow with --rw $d/out"
"${C[@]}" --explain --ro "$d/home" --rw "$d/out" -- make -s -C "$d/home" >/dev/null 2>"$d/err" ||
  fail "the suggested --rw did not allow the write: $(cat "$d/err")"
[ "$(cat "$d/out/f")" = built ] || fail "the allowed write did not reach the host"

# A search along PATH that found the name elsewhere is a probe, never a remedy.
"${C[@]}" --explain \
  -- env PATH="$d/bin:/usr/bin:/bin" ls /usr >/dev/null 2>"$d/err" || fail "ls failed: $(cat "$d/err")"
grep -q -- "--ro $d/bin" "$d/err" && fail "a PATH probe was suggested: $(cat "$d/err")"
line "cage: explain: [0-9]+ probed paths absent on the host too, or found elsewhere on PATH \(not listed; see --result\)"

# An exec outside --exec's allowlist (the command itself is allowed): --exec of the file. The shell
# may try it under a second name (/bin -> /usr/bin), hence any count.
ls=$(readlink -f "$(command -v ls)")
"${C[@]}" --explain --exec "$(readlink -f "$(command -v env)")" \
  -- sh -c "ls /usr" >/dev/null 2>"$d/err" && fail "ran ls outside --exec"
line "cage: explain: exec $ls: not_executable \([0-9]+x, first sh\[[0-9]+\]\); allow with --exec $ls"
"${C[@]}" --explain --exec "$ls" \
  -- sh -c "ls /usr" >/dev/null 2>"$d/err" || fail "the suggested --exec did not allow ls: $(cat "$d/err")"

# git status from a subdirectory of an ungranted repository: the .git it looks for is named.
git -C "$d/repo" init -q && git -C "$d/repo" -c user.email=t@t -c user.name=t commit -q --allow-empty -m i ||
  fail "git init failed"
chmod -R a+rX "$d/repo"
(cd "$d/repo/sub" && "${C[@]}" --explain \
  -- git status >/dev/null 2>"$d/err") && fail "git found the hidden repository"
line "cage: explain: $GIT_OP $d/repo/$GIT_PATH: $NOT \(1x, first git\[[0-9]+\]\); allow with --ro $d/repo/$GIT_PATH"
(cd "$d/repo/sub" && "${C[@]}" --explain --ro "$d/repo" \
  -- git -c safe.directory='*' status >/dev/null 2>"$d/err") ||
  fail "git status with the repository granted failed: $(cat "$d/err")"
# The same with the working directory granted (cage's default, namespaces): git stops at that mount
# without looking above it, and the repository is named all the same.
if [ "$NOT" = hidden ]; then
  (cd "$d/repo/sub" && "$CAGE" --explain -- git status >/dev/null 2>"$d/err") && fail "git found the hidden repository"
  line "cage: explain: stat $d/repo/.git: hidden \(1x, first git\[[0-9]+\]\); allow with --ro $d/repo"
fi

# A call the seccomp profile kills (date -s: clock_settime): under --explain the supervisor kills the
# caller's process (SIGKILL: exit 137, never the call) and names the call, its process and the
# profile that allows it, also for a child of the command. Without --explain the kernel kills (159).
# Under that profile the call is no longer killed (the twin is cage-probe's clock_settime with a null
# time, which can set nothing; the kernel itself still refuses to set the host's clock).
"${C[@]}" --explain -- date -s @0 >/dev/null 2>"$d/err"; rc=$?
[ $rc -eq 137 ] || fail "date -s was not killed under --explain ($rc): $(cat "$d/err")"
line "cage: explain: syscall clock_settime: killed \(1x, first date\[[0-9]+\]\); allow with --seccomp relaxed"
[ "$("${C[@]}" --explain -- sh -c 'date -s @0; echo "rc=$?"' 2>"$d/err")" = rc=137 ] ||
  fail "a child's date -s was not killed (signal 9) under --explain: $(cat "$d/err")"
line "cage: explain: syscall clock_settime: killed \(1x, first date\[[0-9]+\]\); allow with --seccomp relaxed"
[ "$("${C[@]}" -- sh -c 'date -s @0; echo "rc=$?"' 2>"$d/err")" = rc=159 ] ||
  fail "a child's date -s was not killed by the filter without --explain: $(cat "$d/err")"
probe=(--ro "$(dirname "$CAGE_PROBE")" -- "$CAGE_PROBE" syscall clock_settime)
"${C[@]}" --explain "${probe[@]}" >"$d/o.txt" 2>"$d/err"; rc=$?
[ $rc -eq 137 ] || fail "the probe's clock_settime was not killed ($rc): $(cat "$d/err")"
# The probe reports every return of its call: it died in the call, never back in the program.
[ ! -s "$d/o.txt" ] && ! grep -qv '^cage: ' "$d/err" || fail "the killed call returned: $(cat "$d/o.txt" "$d/err")"
line "cage: explain: syscall clock_settime: killed \(1x, first cage-probe\[[0-9]+\]\); allow with --seccomp relaxed"
"${C[@]}" --explain --seccomp relaxed "${probe[@]}" >/dev/null 2>"$d/err"; rc=$?
[ $rc -ne 137 ] && [ $rc -ne 159 ] && [ $rc -ne 125 ] ||
  fail "clock_settime under --seccomp relaxed: $rc: $(cat "$d/err")"
grep -q "explain: syscall" "$d/err" && fail "a kill was reported under --seccomp relaxed: $(cat "$d/err")"

# A call the profile refuses with an errno (ptrace): named with its caller and the profile that allows
# it; under that profile the call reaches the kernel (ESRCH: no such process) and nothing is listed.
pr=(--ro "$(dirname "$CAGE_PROBE")" -- "$CAGE_PROBE")
"${C[@]}" --explain "${pr[@]}" syscall ptrace >"$d/o.txt" 2>"$d/err"
grep -q "EPERM" "$d/err" || fail "ptrace was not refused with EPERM under --explain: $(cat "$d/o.txt" "$d/err")"
line "cage: explain: syscall ptrace: refused \(1x, first cage-probe\[[0-9]+\]\); allow with --seccomp relaxed"
"${C[@]}" --explain --seccomp relaxed "${pr[@]}" syscall ptrace >"$d/o.txt" 2>"$d/err"
grep -q "ESRCH" "$d/err" || fail "ptrace under --seccomp relaxed: $(cat "$d/o.txt" "$d/err")"
grep -q "explain: syscall" "$d/err" && fail "a refusal was reported under --seccomp relaxed: $(cat "$d/err")"
# A call answered ENOSYS is a handled absence (libc's threads fall back from clone3 to clone): not listed.
"${C[@]}" --explain -- /usr/bin/python3 -c 'import threading; t = threading.Thread(target=print); t.start(); t.join()' \
  >/dev/null 2>"$d/err" || fail "a threaded program failed under --explain: $(cat "$d/err")"
grep -q "clone3" "$d/err" && fail "clone3's ENOSYS was listed: $(cat "$d/err")"
# Observing never lets a refused call through: the floor's refusals of a set-id file and of TIOCSTI
# hold under --explain, with their own errno; and no profile allows them, so no remedy is offered.
"${C[@]}" --explain --rw "$d/out" -- python3 -c "
import os, sys
try: os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o4755)
except PermissionError: sys.exit(3)
" "$d/out/suid" 2>"$d/err"; rc=$?
[ $rc -eq 3 ] && [ ! -e "$d/out/suid" ] || fail "created a set-id file under --explain ($rc): $(cat "$d/err")"
"${C[@]}" --explain "${pr[@]}" tiocsti >"$d/o.txt" 2>"$d/err"
grep -q "EPERM" "$d/err" || fail "TIOCSTI under --explain: $(cat "$d/o.txt" "$d/err")"
# Listed under namespaces; under Landlock only, ioctl is a call cage mediates itself (metadata), and
# the kernel's own refusal of it is not observed (cage(1) EXPLAIN).
[ "$NOT" = hidden ] && line "cage: explain: syscall ioctl: refused \(1x, first cage-probe\[[0-9]+\]\)"
# cage's own steps before the workload's exec are not the workload's: the keyring join still works
# (a fresh, empty session keyring), and is not listed.
"${C[@]}" --explain -- true 2>"$d/err" || fail "true failed under --explain: $(cat "$d/err")"
grep -q "keyctl" "$d/err" && fail "cage's own keyring join was listed: $(cat "$d/err")"

# The --net proxy's refusal: the rule to add, then the allowed twin.
mkdir "$d/www"; echo hello > "$d/www/f"; chmod -R a+rX "$d/www"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
other=$(other_port "$port")
"${C[@]}" --explain --net "127.0.0.1:$other" -- curl -sf "http://127.0.0.1:$port/f" >/dev/null 2>"$d/err" &&
  fail "reached an unlisted host"
line "cage: explain: connect 127.0.0.1:$port: refused \(1x\); allow with --net 127.0.0.1:$port"
[ "$("${C[@]}" --explain --net "127.0.0.1:$port" \
  -- curl -sf "http://127.0.0.1:$port/f" 2>"$d/err")" = hello ] ||
  fail "the suggested --net did not allow the connection: $(cat "$d/err")"
# Landlock only: a connect that bypasses the proxy (the same destination, allowed through it just
# above) is refused by cage, and no --net would let it through: the line names what would.
if [ "$NOT" = refused ]; then
  "${C[@]}" --explain --net "127.0.0.1:$port" -- curl -sf --noproxy '*' "http://127.0.0.1:$port/f" \
    >/dev/null 2>"$d/err" && fail "a direct connect got through"
  line "cage: explain: connect 127.0.0.1:$port: direct \(1x, first curl\[[0-9]+\]\); connect through cage's proxy \(HTTPS_PROXY, HTTP_PROXY as cage sets them\), or use --mechanism namespaces for transparent egress"
  grep -q -- "allow with --net" "$d/err" && fail "a direct connect was given a --net remedy: $(cat "$d/err")"
fi

# The run's own HOME and TMPDIR (private: a tmpfs under namespaces, a directory of the run's under
# Landlock only) are the workload's: making and writing there is not listed, next to a refused
# write that is.
"${C[@]}" --explain -- sh -c 'mkdir -p "$HOME/.npm/x" && echo a >"$HOME/.npm/x/f" && echo b >"${TMPDIR:-/tmp}/t" &&
  ! echo c >"'"$d"'/out/f"' >/dev/null 2>"$d/err" || fail "private HOME/TMPDIR writes: $(cat "$d/err")"
grep -qE 'explain: (create|write) [^ ]*/(\.npm|t)[/:]' "$d/err" && fail "the private HOME or TMPDIR was listed: $(cat "$d/err")"
line "cage: explain: create $d/out/f: $NOT \(1x, first sh\[[0-9]+\]\); allow with --rw $d/out"

# The result and the audit log carry the same finding.
"${C[@]}" --explain --result "$d/r.json" --audit "$d/a.jsonl" -- cat "$d/home/secret" >/dev/null 2>&1
python3 - "$d" "$NOT" <<'PY' || fail "result or audit lacks the finding"
import json, sys
d, verdict = sys.argv[1], sys.argv[2]
want = {"op": "read", "path": d + "/home/secret", "verdict": verdict, "remedy": "--ro " + d + "/home/secret"}
def has(f): return all(f.get(k) == v for k, v in want.items()) and f.get("comm") == "cat"
r = json.load(open(d + "/r.json"))
assert any(has(f) for f in r["explain"]["findings"]), r.get("explain")
events = [json.loads(l) for l in open(d + "/a.jsonl")]
assert any(e["type"] == "explain" and has(e) for e in events)
PY
schema() {
  python3 "$CAGE_SOURCE_DIR/tests/integration/limits_schema.py" "$CAGE_SOURCE_DIR/docs/schema/$1" "${@:2}"
}
schema result.schema.json "$d/r.json" || fail "the result does not match its schema"
schema audit-event.schema.json "$d/a.jsonl" --lines || fail "the audit log does not match its schema"
# Without --explain nothing is observed or said.
"${C[@]}" -- cat "$d/home/secret" >/dev/null 2>"$d/err"
grep -q "explain" "$d/err" && fail "explained without --explain"
echo ok
