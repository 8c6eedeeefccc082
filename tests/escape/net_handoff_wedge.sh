#!/usr/bin/env bash
# Attack on egress hand-off's performer (src/linux/performer.h): a unix stream connect to a listener
# whose backlog stays full, on a socket a second thread keeps flipping between blocking and
# O_NONBLOCK. The supervisor judged "non-blocking" (no thread needed), the kernel read "blocking"
# when the performer ran it in its own loop: found, the performer waited there for good and answered
# nothing again (within 3 attempts), so every later connect, bind and listen of the sandbox hung.
# Policy: --net 127.0.0.1:9 (transparent: hand-off mode, a performer runs the sandbox's own calls),
# --rw for the listener's path.
# Expected: after 200 attempts a bind (run by the performer) is still answered within 3 s. Twin: the
# same bind is answered before the attack (handoff_wedge.c fails otherwise).
. "$(dirname "$0")/lib.bash"
landlock_only && { echo "skip: egress hand-off is the namespace mechanism's (transparent --net)"; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler for the helper"; exit 77; }
require_sandbox
cc -O2 -pthread -o "$work/wedge" "$escape_dir/handoff_wedge.c" || { fail "cannot build handoff_wedge.c"; finish; }
chmod 755 "$work/wedge"
mkdir "$work/rw" && chmod 777 "$work/rw"
cage_run --ro "$work" --rw "$work/rw" --net 127.0.0.1:9 -- "$work/wedge" "$work/rw"
[ "$rc" -eq 0 ] || { fail "the helper exited $rc: $out $err"; finish; }
attempts=$(awk '/^attempts/ { print $2 }' <<<"$out")
if grep -qx 'answered 1' <<<"$out"; then pass "after $attempts flipped connects the performer still answers"
else fail "the performer answers nothing after $attempts flipped connects: $out"; fi
finish
