#!/usr/bin/env bash
# Attack, from the workload's side: the kernel interfaces that reach outside a sandbox or widen it:
# mount, umount, pivot_root, unshare/clone of new namespaces (a fresh user namespace would give back
# capabilities), setns, keyctl/add_key, bpf, perf_event_open, io_uring, open_by_handle_at and
# name_to_handle_at (file handles bypass the mount view), and re-mounting a --ro grant writable with
# mount(8): `mount -o remount,rw` and `mount --bind -o rw`.
# Policy: default view, --ro of the probe and of $work/ro. Expected: every call fails; the --ro grant
# stays read-only (host file unchanged). Twin: getpid, and a write to --rw, work.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/ro" "$work/rw" && echo original >"$work/ro/file"
pol=(--ro "$probe_dir" --ro "$work/ro" --rw "$work/rw")
for call in mount umount2 pivot_root setns unshare clone keyctl add_key request_key bpf perf_event_open \
            io_uring_setup open_by_handle_at name_to_handle_at fsopen open_tree move_mount mount_setattr \
            userfaultfd; do
  cage_run "${pol[@]}" -- "$CAGE_PROBE" syscall "$call"
  if [ "$rc" -eq 121 ]; then echo "note: $call not on this architecture"; continue; fi
  [ "$rc" -ne 0 ] && pass "$call fails ($(tail -1 <<<"$err"))" || fail "$call succeeded inside cage: $out"
done
cage_run "${pol[@]}" -- "$CAGE_PROBE" syscall unshare "CLONE_NEWUSER|CLONE_NEWNS"
[ "$rc" -ne 0 ] && pass "unshare(NEWUSER|NEWNS) fails" || fail "unshare of a new user+mount namespace worked"
for m in "-o remount,rw $work/ro" "-o remount,rw /" "-o remount,rw /usr" "--bind -o rw $work/ro $work/rw" \
         "-t tmpfs none $work/rw" "-t proc proc $work/rw" "-t sysfs sys $work/rw"; do
  cage_run "${pol[@]}" -- sh -c "mount $m && echo MOUNTED"
  grep -q MOUNTED <<<"$out" && fail "mount $m worked inside cage" || pass "mount $m fails"
done
cage_run "${pol[@]}" -- sh -c "echo pwned >'$work/ro/file'"
[ "$rc" -ne 0 ] && [ "$(cat "$work/ro/file")" = original ] && pass "--ro grant still read-only" || fail "--ro file written"
cage_run "${pol[@]}" -- "$CAGE_PROBE" write "$work/rw/ok"
expect_rc 0 "twin: --rw write works"
finish
