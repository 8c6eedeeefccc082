#!/usr/bin/env bash
# Found by the attack9 review (fixed in the same change that brought this test here).
# Attack: hang cage before the run from the content of the command it is asked to confine. To name
# the interpreter in its error, cage reads a script's #! line and stat()s and realpath()s the path
# there on the host (compile.cc, interpreter_problem), as the caller: under namespaces once the exec
# has failed, under Landlock alone (where the workload's own exec would walk the host's mounts) before
# any sandbox exists and before --timeout counts. The script is what cage confines, not what it trusts: its #! line can name
# a path on a hung mount (NFS, FUSE, autofs), and cage then waits there for good, --dry-run too. Inside
# the sandbox that path is not granted, so the kernel's own look-up of the interpreter never touches
# the host's mount. Root only (a FUSE mount whose server never answers stands for the hung mount).
# Policy: --ro prog, --timeout 2s. Expected: cage answers (127: the interpreter is not visible inside)
# in well under 10 s, as for the twin.
# Twin: a #! line naming a missing path: the same refusal at once.
. "$(dirname "$0")/lib.bash"
is_root || { echo "skip: needs root for the FUSE mount that stands for a hung one" >&2; exit 77; }
[ -c /dev/fuse ] || { echo "skip: no /dev/fuse" >&2; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler for the helper"; exit 77; }
require_sandbox
mkdir "$work/prog" "$work/hung"
cc -O2 -o "$work/hung-fuse" "$escape_dir/interp_hung_mount.c" || { fail "cannot build interp_hung_mount.c"; finish; }
"$work/hung-fuse" "$work/hung" >"$work/fuse.out" 2>&1 &
server=$!
# Before the work directory is removed (its walk would wait on the mount): the server's death aborts
# the connection, then the mount goes.
at_exit "kill -KILL $server; wait $server; umount -l '$work/hung'"
for _ in $(seq 50); do grep -q mounted "$work/fuse.out" && break; sleep 0.1; done
grep -q mounted "$work/fuse.out" || { echo "skip: cannot mount FUSE here: $(cat "$work/fuse.out")" >&2; exit 77; }
# $1: what the #! line names, $2: what the run is.
interp_run() {
  printf '#!%s\necho ran\n' "$1" >"$work/prog/s.sh"
  chmod 755 "$work/prog/s.sh"
  local start
  start=$(date +%s%N)
  rc=0
  timeout -s KILL 10 "$CAGE" ${mech[@]+"${mech[@]}"} --ro "$work/prog" --timeout 2s -- "$work/prog/s.sh" \
    </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
  local took=$((($(date +%s%N) - start) / 1000000))
  out=$(cat "$work/.out") err=$(cat "$work/.err")
  if [ "$rc" -eq 137 ]; then
    fail "$2: cage still waited after 10 s (killed), before the run and past --timeout 2s"
  else
    expect_rc 127 "$2 (${took} ms)"
  fi
}
interp_run "$work/none/sh" "twin: a #! interpreter that does not exist"
interp_run "$work/hung/sh" "a #! interpreter on a hung mount"
finish
