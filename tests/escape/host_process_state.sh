#!/usr/bin/env bash
# Attack: change what host processes of the caller's uid run with, without signalling them: their
# resource limits (prlimit --pid; RLIMIT_CPU makes the kernel kill them), nice value (renice),
# I/O priority (ionice), CPU affinity (taskset) and scheduling policy (chrt), and attach to or remove a host System V shared memory segment (ipcmk outside,
# shmat/shmctl(IPC_RMID) inside by its id).
# Policy: default view. Expected: with namespaces the host process and segment are not in view; with
# the Landlock-only mechanism (host pids and the host IPC namespace visible) every call is refused
# (found there: prlimit, renice and shmat/IPC_RMID all reached the host). The host process's limits,
# nice value and the segment are unchanged. Twin: the workload lowers its own limit and
# runs a command with nice (pid 0, the calling thread, stays allowed).
. "$(dirname "$0")/lib.bash"
require_sandbox
sleep 300 &
victim=$!
at_exit "kill $victim"
nice0=$(ps -o ni= -p "$victim" | tr -d ' ')
lim0=$(grep 'Max open files' "/proc/$victim/limits")
shm=$(ipcmk -M 4096 2>/dev/null | grep -o '[0-9]*$')
[ -n "$shm" ] && at_exit "ipcrm -m $shm"
cage_run -- sh -c "prlimit --pid $victim --nofile=3:3 --cpu=1:1; renice -n 19 -p $victim;
  ionice -c 3 -p $victim; taskset -p 1 $victim; chrt -i -p 0 $victim; echo done"
[ "$(grep 'Max open files' "/proc/$victim/limits")" = "$lim0" ] && grep -q 'unlimited.*seconds' <<<"$(grep 'Max cpu time' "/proc/$victim/limits")" &&
  pass "host process's limits unchanged" || fail "host process's limits changed from inside: $(cat "/proc/$victim/limits")"
[ "$(ps -o ni= -p "$victim" | tr -d ' ')" = "$nice0" ] && pass "host process's nice value unchanged ($nice0)" ||
  fail "host process reniced from inside: $(ps -o ni= -p "$victim")"
if [ -n "$shm" ]; then
  cage_run -- "$py" -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
p = libc.shmat($shm, None, 0)
if p is not None and p != 2**64 - 1:
    ctypes.memmove(p, b'PWNED', 5)
    print('attached')
print('rmid', libc.shmctl($shm, 0, None))"
  grep -q attached <<<"$out" && fail "host shm segment $shm attached from inside"
  ipcs -m -i "$shm" >/dev/null 2>&1 && pass "host shm segment $shm not attached, still there" || fail "host shm segment $shm removed from inside: $out"
else
  echo "note: ipcmk not available, System V part skipped"
fi
cage_run -- sh -c "ulimit -n 64 && nice -n 3 $py -c 'import os, resource; print(\"twin\", os.nice(0) - $nice0, resource.getrlimit(resource.RLIMIT_NOFILE)[0])'"
expect_rc 0 "twin: the workload lowers its own limit and nice value"
[ "$out" = "twin 3 64" ] || fail "twin output: $out $err"
finish
