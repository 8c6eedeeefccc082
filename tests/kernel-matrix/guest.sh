#!/bin/bash
# Runs inside the guest, in the host's userland (read-only 9p root, or systemd's writable overlay):
# applies the entry's host variants, runs its test set as root (ctest runs each script again as the
# test user), and leaves on the results share: results.txt ("STATUS NAME SECONDS" per test),
# facts.txt (what this host is), ctest.log, guest.log. Then powers the guest off.
set -u
R=/run/cage-matrix
set -a
. "$R/job.env"
set +a
# Tests that give a run a head start before a deadline (outlive's --timeout) scale it by this.
export CAGE_TEST_TIME_SCALE=$TIMEOUT_SCALE
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
exec >>"$R/guest.log" 2>&1
here=$(dirname "$GUEST")
: >>"$R/results.txt"
# PID 1 must not exit (the kernel would panic): sysrq powers off, after the results are synced, and
# the power-off is awaited.
trap 'sync; echo o >/proc/sysrq-trigger; sleep infinity' EXIT
hostname cage-matrix
ip link set lo up
for v in ${VARIANTS//,/ }; do
  # A host that blocks user namespaces (hardened kernels, some containers): cage must fall back.
  [ "$v" = nouserns ] && sysctl -w user.max_user_namespaces=0
done
{
  echo "kernel: $(uname -r), booted to guest.sh in $(cut -d' ' -f1 /proc/uptime) s, accel $ACCEL"
  echo "lsm: $(cat /sys/kernel/security/lsm 2>/dev/null)"
  echo "cgroup: $(stat -fc %T /sys/fs/cgroup) controllers: $(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)"
  echo "user.max_user_namespaces: $(sysctl -n user.max_user_namespaces)"
  echo "== cage --check"; "$BUILD/cage" --check 2>&1; echo "(exit $?)"
} >"$R/facts.txt"
if [ "$INIT" = systemd ]; then
  bash "$here/user-session.sh" start
  t0=$(date +%s)
  # What the cgroup work needs from this guest: the user's manager hands out a delegated scope.
  if bash "$here/user-session.sh" run systemd-run --user --scope true; then s=PASS; else s=FAIL; fi
  echo "$s systemd.user.scope $(($(date +%s) - t0))" >>"$R/results.txt"
fi
. "$here/sets.bash"
run_set "$SET"
if [ -n "$RUN" ]; then
  t0=$(date +%s)
  if bash "$RUN" >"$R/run.log" 2>&1; then s=PASS; else s=FAIL; fi
  echo "$s run:$(basename "$RUN") $(($(date +%s) - t0))" >>"$R/results.txt"
fi
echo done >"$R/finished"
