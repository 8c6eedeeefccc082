#!/usr/bin/env bash
# Attack: lock (or unlock) encrypted files outside the grants through fscrypt's keyring. Its keys are
# the filesystem's (fs/crypto/keyring.c), not the process's: FS_IOC_REMOVE_ENCRYPTION_KEY on any fd
# of that filesystem drops the caller's claim and locks every file the key unlocked, the host's
# included (..._ALL_USERS every user's, with CAP_SYS_ADMIN), and FS_IOC_ADD_ENCRYPTION_KEY leaves a
# key behind after the run. Found: all three reached the kernel under every profile (the attack
# review); nothing mediated them.
# Policy: default grants, --seccomp default, relaxed and none. Expected: EPERM under every profile
# (seccomp/floor.txt). Probed on fd -1 (EBADF when a call is let through), so nothing on this machine
# changes whatever the outcome. Twin: FS_IOC_GET_ENCRYPTION_KEY_STATUS (a query) still reaches the
# kernel (EBADF); the same command with bits 32..63 set is refused too (the kernel drops them).
. "$(dirname "$0")/lib.bash"
require_sandbox
for prof in default relaxed none; do
  for cmd in FS_IOC_ADD_ENCRYPTION_KEY FS_IOC_REMOVE_ENCRYPTION_KEY FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS; do
    for hi in "" hi; do
      cage_run --seccomp "$prof" --ro "$probe_dir" -- "$CAGE_PROBE" syscall ioctl "$cmd" $hi
      [[ "$out$err" == *"errno=1 EPERM"* ]] && pass "--seccomp $prof: $cmd ${hi:+(high bits set) }refused (EPERM)" ||
        fail "--seccomp $prof: $cmd $hi reached the kernel: exit $rc, $out $err"
    done
  done
  cage_run --seccomp "$prof" --ro "$probe_dir" -- "$CAGE_PROBE" syscall ioctl FS_IOC_GET_ENCRYPTION_KEY_STATUS
  [[ "$out$err" == *"errno=9 EBADF"* ]] && pass "twin --seccomp $prof: the key status query reaches the kernel (EBADF)" ||
    fail "twin --seccomp $prof: FS_IOC_GET_ENCRYPTION_KEY_STATUS: exit $rc, $out $err"
done
finish
