#!/usr/bin/env bash
# The host's processes, environment and IPC namespace under the Landlock-only mechanism (no private
# ones without namespaces): a host process cannot be signalled, the environment is scrubbed, and no
# System V or POSIX IPC object of the host can be made or reached.
. "$(dirname "$0")/landlock_only.bash"
sleep 60 & sleeper=$!; bg+=("$sleeper")
# Signals: a host process of the same user cannot be signalled (Landlock scope).
if "${A[@]}" -- kill -0 "$sleeper" 2>/dev/null; then fail "signalled a host process"; fi
kill -0 "$sleeper" || fail "host process died"
# The environment is still scrubbed.
[ "$(SECRET_TOKEN=s3 "${A[@]}" -- sh -c 'echo "${SECRET_TOKEN:-none}"')" = none ] || fail "secret env leaked"
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
nothing_left
echo "landlock_only_host_objects: ok"
