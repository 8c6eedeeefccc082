#!/usr/bin/env bash
# Found by the attack9 review (both fixed: the supervisor's request is a byte on the sync pipe, SIGPWR
# only wakes init).
# Attack: keep the supervisor's end of the run from reaching pid 1. At --timeout's kill (and on a
# failed audit) the supervisor sends SIGPWR (kEndRunSignal) to the sandbox's pid 1, which then stops
# every process before it kills any (init.cc, end_pid_namespace); SIGKILL of pid 1 follows 1 s later
# only in case init is not reading signals yet. SIGPWR is a legacy signal: while one is pending a
# second is dropped (the kernel's legacy_queue). A workload that sends SIGPWR to pid 1 in a loop
# keeps one pending nearly always, so the supervisor's (si_pid 0) is merged into one of the
# workload's (si_pid != 0), which init ignores: the end then comes 1 s late, by the SIGKILL of pid 1,
# the one-by-one kill the stop-first end was made to avoid (deep_chain.sh). Landlock ABI 6 scopes
# signals and stops the flood (kill(1) is EPERM); the namespaces mechanism runs without it (5.12+, or
# no Landlock at all), simulated here by a seccomp filter that hides Landlock from cage.
# The same workload can forge the supervisor's signal outright: with pid 1's RLIMIT_SIGPENDING set to
# 0 (prlimit, same uid), a SIGPWR it queues (rt_sigqueueinfo) reaches pid 1 without its info, which
# sigwaitinfo reads as si_code SI_USER, si_pid 0: pid 1 ends the run and cage exits 125 (its own
# error status) in a few ms, with no message, instead of the workload's status.
# Policy: --ro prog, --timeout 1s. Expected: exit 124 and nothing left, with and without the flood;
# the forged signal ignored (the workload's exit 7).
# Twin: the same processes without the signals.
. "$(dirname "$0")/lib.bash"
if landlock_only; then echo "skip: the Landlock-only mechanism needs ABI 6, which scopes the signals" >&2; exit 77; fi
command -v cc >/dev/null || { echo "skip: no C compiler for the helper"; exit 77; }
require_sandbox
mkdir "$work/prog"
cc -O2 -o "$work/prog/helper" "$escape_dir/end_signal_flood.c" || { fail "cannot build end_signal_flood.c"; finish; }
marker="$work/prog/helper"
survivors() { pgrep -f "^$marker (flood|idle)"; }
at_exit 'for p in $(survivors); do kill -KILL "$p"; done'
# $1: flood|idle. Sets $took (ms from cage's start to its return).
end_run() {
  local start
  start=$(date +%s%N)
  rc=0
  "$work/prog/helper" hide-landlock "$CAGE" --ro "$work/prog" --timeout 1s -- "$work/prog/helper" "$1" 2 \
    </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
  took=$((($(date +%s%N) - start) / 1000000))
  out=$(cat "$work/.out") err=$(cat "$work/.err")
  if grep -q spawn_sandbox_unavailable <<<"$err"; then echo "skip: $err" >&2; exit 77; fi
  expect_rc 124 "--timeout 1s ends a workload that ignores SIGTERM ($1, ${took} ms)"
  local n
  n=$(survivors | wc -l)
  [ "$n" -eq 0 ] && pass "nothing of the run is left when cage returns ($1)" || fail "$n process(es) outlive cage ($1)"
}
end_run idle
# Three runs under the flood, each ended by --timeout (124) with nothing left. Whether the stop-first
# end ran, not the fallback SIGKILL 1 s later, is not judged by the clock here (a flood slows pid 1
# on a loaded host either way): the request is a byte on the sync pipe that no flood can merge away.
for try in 1 2 3; do end_run flood; done
rc=0
"$work/prog/helper" hide-landlock "$CAGE" --ro "$work/prog" -- "$work/prog/helper" forge </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
out=$(cat "$work/.out") err=$(cat "$work/.err")
expect_rc 7 "a SIGPWR the workload queues to pid 1 with RLIMIT_SIGPENDING 0 does not end the run"
finish
