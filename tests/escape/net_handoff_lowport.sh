#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h, performer.h): bind() to a port below 1024 in the
# sandbox's network namespace. With transparent --net bind is a seccomp notification; were cage itself
# to run it, it would run with cage's capabilities there (it owns the namespace) and take the port,
# which the workload (no capability) cannot.
# Policy: --net 127.0.0.1:PORT; twins: the same without --net, and port 8080.
# Expected: bind(127.0.0.1:80) fails with EACCES with --net exactly as without it; 8080 works in both.
. "$(dirname "$0")/lib.bash"
require_handoff
helper="$escape_dir/handoff_unix.py"
cage_run --ro "$escape_dir" -- "$py" "$helper" bind 80
[ "$out" = EACCES ] || { echo "skip: bind to port 80 without --net gives '$out $err', not EACCES"; exit 77; }
pass "without --net, bind to port 80: EACCES"
cage_run --ro "$escape_dir" --net 127.0.0.1:1 -- "$py" "$helper" bind 80
[ "$out" = EACCES ] && pass "with --net, bind to port 80: EACCES" ||
  fail "with --net, bind to port 80 gave '$out' (exit $rc): $err"
for net in "" "--net 127.0.0.1:1"; do
  # shellcheck disable=SC2086
  cage_run --ro "$escape_dir" $net -- "$py" "$helper" bind 8080
  [ "$out" = ok ] && pass "${net:-without --net}: bind to port 8080 works" ||
    fail "${net:-without --net}: bind to port 8080 gave '$out' (exit $rc): $err"
done
finish
