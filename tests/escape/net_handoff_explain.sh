#!/usr/bin/env bash
# Attack on egress hand-off's performer (src/linux/performer.h) under --explain: --explain rewrites the
# seccomp profile into a filter that allows each call the profile refuses, and the workload's listener
# filter (connect_notify) refuses it again. The performer has no listener filter: were it given the
# rewritten profile, it would run with none of the profile's refusals (ptrace, unshare, bpf, keyctl,
# io_uring...), not "the workload's seccomp profile" its confinement promises.
# Policy: --net 127.0.0.1:9 (transparent: hand-off mode, so a performer runs), with and without --explain.
# Expected (host root reads each process's filters with PTRACE_SECCOMP_GET_FILTER): the performer's
# filter under --explain is the very program it has without --explain. Twin: the workload's filters do
# differ (--explain's rewrite is in force there). Root only (the read needs CAP_SYS_ADMIN).
. "$(dirname "$0")/lib.bash"
landlock_only && { echo "skip: egress hand-off is the namespace mechanism's (transparent --net)"; exit 77; }
is_root || { echo "skip: reading another process's seccomp filter needs root"; exit 77; }
require_sandbox
cat >"$work/filters.py" <<'PY'
import ctypes, hashlib, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = int(sys.argv[1])
if libc.ptrace(16, pid, None, None) != 0:  # PTRACE_ATTACH: the read wants a stopped tracee
    sys.exit("attach %d: %s" % (pid, os.strerror(ctypes.get_errno())))
os.waitpid(pid, 0x40000000)  # __WALL
try:
    for i in range(16):  # PTRACE_SECCOMP_GET_FILTER, newest first
        n = libc.ptrace(0x420c, pid, i, None)
        if n < 0:
            break
        buf = ctypes.create_string_buffer(n * 8)
        libc.ptrace(0x420c, pid, i, buf)
        print(hashlib.sha256(buf.raw).hexdigest())
finally:
    libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
PY
# filters_of ARGS...: runs cage ARGS --net 127.0.0.1:9 -- sleep 30; sets $perf and $wl to the
# performer's and the workload's filters (one hash a line, newest first), then ends the run.
filters_of() {
  perf= wl=
  "$CAGE" "$@" --net 127.0.0.1:9 -- sleep 30 </dev/null >/dev/null 2>&1 &
  local cage=$! init= p kids
  for _ in $(seq 100); do
    init=$(cat /proc/$cage/task/*/children 2>/dev/null | awk '{print $1}')
    kids=$([ -n "$init" ] && cat /proc/$init/task/*/children 2>/dev/null)
    [ -n "$kids" ] && grep -qx sleep < <(for p in $kids; do cat /proc/$p/comm; done) && break
    sleep 0.1
  done
  for p in $kids; do
    if [ "$(cat /proc/$p/comm)" = sleep ]; then wl=$("$py" "$work/filters.py" $p)
    elif grep -q '^Seccomp_filters:[[:space:]]*[1-9]' /proc/$p/status; then
      perf=$("$py" "$work/filters.py" $p 2>"$work/attach.err")
    fi
  done
  kill $cage; wait $cage 2>/dev/null
}
filters_of
perf_plain=$perf wl_plain=$wl
# The performer is not dumpable: attaching to it takes CAP_SYS_PTRACE, which a container's root may
# lack (Docker's default capabilities).
if [ -z "$perf_plain" ] && grep -q '^attach' "$work/attach.err" 2>/dev/null; then
  echo "skip: cannot read the performer's filters here: $(cat "$work/attach.err") (needs CAP_SYS_PTRACE)"
  exit 77
fi
filters_of --explain
[ -n "$perf_plain" ] && [ -n "$perf" ] && [ -n "$wl" ] || { fail "no performer or workload found: '$perf_plain' '$perf' '$wl'"; finish; }
if [ "$wl" != "$wl_plain" ]; then pass "twin: the workload's filters under --explain are the rewritten pair"
else fail "the workload's filters are the same with --explain: the test cannot tell"; fi
if [ "$perf" = "$perf_plain" ]; then pass "the performer's filter under --explain is the profile as written"
else fail "the performer's filter under --explain is not the profile (--explain's rewrite, refusing nothing)"; fi
finish
