#!/usr/bin/env bash
# Found by the attack9 review (fixed in the same change that brought this test here).
# Attack: make cage read, on the host and as the caller, a file that is not the command. To find a
# script's #! line cage opens the command (HostView::read_head) after it stat()ed it: only a regular
# file is opened (a fifo or a device is not), but the open is by path again and follows links, so a
# name swapped between the stat and the open is opened whatever it is then: a fifo (its writer's data
# is taken, and the first word after a #! is printed in cage's error), a device (its open has effects
# of its own), or a file the workload could never read. Whoever can rename in the command's directory
# can do it: a concurrent run with that directory in --rw, another user's writable directory.
# Policy: --ro the directory. Expected: in 15 s of runs while the names swap, cage never reads the fifo.
# Twin: the fifo named as the command (execute bits set) is not read.
. "$(dirname "$0")/lib.bash"
command -v cc >/dev/null || { echo "skip: no C compiler for the helper"; exit 77; }
require_sandbox
mkdir "$work/race" "$work/bin"
cc -O2 -o "$work/bin/helper" "$escape_dir/read_head_swap.c" || { fail "cannot build read_head_swap.c"; finish; }
cp "$work/bin/helper" "$work/race/real"
mkfifo -m 755 "$work/race/fifo"
ln -s "$work/race/real" "$work/race/cmd"
ln -s "$work/race/fifo" "$work/race/alt"
marker="cage-read-head-$$-$RANDOM"
"$work/bin/helper" feed "$work/race/fifo" "#!/$marker
" 40 &
feeder=$!
disown $feeder  # its kill at the end is not reported as a job
at_exit "kill -KILL $feeder"
sleep 0.2
cage_run --dry-run --ro "$work/race" -- "$work/race/fifo"
grep -q "$marker" <<<"$out$err" && fail "twin: cage read the fifo named as the command: $err" ||
  pass "twin: a fifo named as the command is not read (exit $rc)"
"$work/bin/helper" swap "$work/race/cmd" "$work/race/alt" 20 &
swapper=$!
disown $swapper
at_exit "kill -KILL $swapper"
runs=0 read_at=0
end=$((SECONDS + 15))
while [ $SECONDS -lt $end ]; do
  runs=$((runs + 1))
  cage_run --dry-run --ro "$work/race" -- "$work/race/cmd"
  if grep -q "$marker" <<<"$err"; then read_at=$runs; break; fi
done
kill -KILL $swapper 2>/dev/null
if [ "$read_at" -gt 0 ]; then
  fail "cage opened and read the fifo swapped in for the command after its stat (run $read_at): $err"
else
  pass "in $runs runs while the command's name swapped, cage never read the fifo"
fi
finish
