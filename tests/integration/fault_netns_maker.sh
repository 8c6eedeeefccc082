#!/usr/bin/env bash
# Fault: the short-lived process that makes the sandbox's network namespace beside init
# (late_netns.h) is killed before it says whether it made it: strace -f delivers SIGKILL to it at its
# unshare(CLONE_NEWNET), as the caller's own uid (or root) may do from outside. Expected: cage ends
# the run at once, exit 125 naming the network namespace, nothing left behind. Found: init waited for
# the maker's word with no end, every signal blocked, and the run hung (SIGTERM, SIGINT to cage did
# nothing; only SIGKILL of cage ended it). Twin: the same run without the kill starts, and the
# workload's network namespace is not the host's. Needs strace; the namespaces mechanism only
# (without a pid namespace no maker is started).
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
landlock_only && { echo "skip: no maker without a pid namespace" >&2; exit 77; }
command -v strace >/dev/null || { echo "skip: no strace" >&2; exit 77; }
host_ns=$(readlink /proc/self/ns/net)
marker="cage-netns-maker-$$-$RANDOM"  # this instance's runs only: the user's copy of the test may run beside it
for net in "" "--net 127.0.0.1:9"; do
  # shellcheck disable=SC2086  # $net is split on purpose
  cage_run $net -- readlink /proc/self/ns/net
  expect_rc 0 "twin [${net:-default}]: the run starts"
  [ -n "$out" ] && [ "$out" != "$host_ns" ] && pass "twin [${net:-default}]: own namespace $out (host $host_ns)" ||
    fail "twin [${net:-default}]: namespace '$out', host $host_ns"
  st=0
  # shellcheck disable=SC2086
  timeout -s KILL 20 strace -f -qq -o /dev/null -e trace=unshare -e inject=unshare:signal=KILL \
    "$CAGE" $net -- sh -c "echo RAN; : $marker" </dev/null >"$work/out" 2>"$work/err" || st=$?
  if [ "$st" -eq 137 ]; then
    fail "[${net:-default}] maker killed: the run hung (killed after 20 s)"
  elif [ "$st" -eq 125 ] && grep -q "network namespace" "$work/err" && ! grep -q RAN "$work/out"; then
    pass "[${net:-default}] maker killed: exit 125, nothing ran ($(head -c 120 "$work/err"))"
  else
    fail "[${net:-default}] maker killed: exit $st; stdout: $(cat "$work/out"); stderr: $(cat "$work/err")"
  fi
done
sleep 0.2
pgrep -f "$marker" >/dev/null && fail "a process of the killed run is left" || pass "nothing left"
finish
