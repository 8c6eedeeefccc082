#!/usr/bin/env bash
# Attack: stall the host's writers of a file the workload may only read. A read lease (F_SETLEASE
# F_RDLCK) on a --ro file of the caller's makes every host open for writing or truncate of it wait for
# the holder, up to lease-break-time (45 s), root included; seccomp cannot see which file an fd is.
# Policy: --ro ro, --rw rw (a FIFO pair to hold the run while the host tries its write).
# Expected: F_SETLEASE F_RDLCK/F_WRLCK refused with EPERM under every profile, on --ro and --rw files
# alike (leases are optional to the programs that use them); the host opens the file for writing at
# once (O_NONBLOCK: EWOULDBLOCK if a lease were held). Twins: F_GETLEASE answers F_UNLCK (none held)
# and an ordinary F_SETLK read lock works.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/ro" "$work/rw"
echo data >"$work/ro/file"
echo data >"$work/rw/file"
echo data >"$work/rw/file2"
hold='import fcntl, os, struct, sys
def t(fd, arg):
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, arg); return "ok"
    except OSError as e:
        return str(e.errno)
wr = t(os.open(sys.argv[1] + "/rw/file2", os.O_RDWR), fcntl.F_WRLCK)
ro = os.open(sys.argv[1] + "/ro/file", os.O_RDONLY)
rw = os.open(sys.argv[1] + "/rw/file", os.O_RDONLY)
print("ro", t(ro, fcntl.F_RDLCK), "rw", t(rw, fcntl.F_RDLCK), "rwwr", wr)
sys.stdout.flush()
open(sys.argv[1] + "/rw/ready", "w").write("R")
open(sys.argv[1] + "/rw/go").readline()
print("twins get", fcntl.fcntl(ro, fcntl.F_GETLEASE),
      "setlk", fcntl.fcntl(ro, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0)) and "ok", flush=True)'
for prof in default relaxed none; do
  rm -f "$work/rw/ready" "$work/rw/go"
  mkfifo -m 666 "$work/rw/ready" "$work/rw/go"
  "$CAGE" ${mech[@]+"${mech[@]}"} --seccomp "$prof" --ro "$work/ro" --rw "$work/rw" -- "$py" -c "$hold" "$work" \
    </dev/null >"$work/.out" 2>"$work/.err" &
  cpid=$!
  # The workload holds whatever it got, then says so (a guard, not a timing: 60 s only if it died early).
  exec 4<>"$work/rw/ready"; read -r -t 60 -n1 -u 4 _ || fail "--seccomp $prof: the workload never got ready: $(cat "$work/.err")"
  exec 4<&-
  host=$("$py" -c 'import os, sys
try:
    os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)); print("write open ok")
except OSError as e:
    print("write open errno", e.errno)' "$work/ro/file")
  # Read-write open of the FIFO never blocks (the workload may be gone: a lease break's SIGIO ends it),
  # and held until the run ended, so "go" waits in the FIFO for a reader that opens it late.
  exec 3<>"$work/rw/go"; echo go >&3
  wait "$cpid"; rc=$?
  exec 3>&-
  out=$(cat "$work/.out")
  [[ "$out" == *"ro 1 rw 1 rwwr 1"* ]] && pass "--seccomp $prof: F_SETLEASE refused (EPERM) on --ro and --rw files" ||
    fail "--seccomp $prof: lease: exit $rc, $out $(cat "$work/.err")"
  [ "$host" = "write open ok" ] && pass "--seccomp $prof: the host opens the --ro file for writing at once" ||
    fail "--seccomp $prof: host writer stalled by a lease: $host"
  [[ "$out" == *"twins get 2 "* && "$out" == *"setlk ok"* ]] &&
    pass "twin --seccomp $prof: F_GETLEASE (no lease) and an F_SETLK read lock work" ||
    fail "twin --seccomp $prof: $out"
done
finish
