#!/usr/bin/env bash
# --seccomp relaxed blocks only reboot, kexec, modules and swap on top of the floor (seccomp/floor.txt);
# --seccomp none loads the floor alone.
# Each case picks a syscall whose errno without the filter differs from the filter's answer.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/seccomp_lib.bash"
require_sandbox relaxed

for name in reboot kexec_load kexec_file_load init_module finit_module delete_module swapon swapoff; do
  expect 1 relaxed syscall "$name"
done
# What default denies reaches the kernel under relaxed: its own errno, not the filter's.
expect 3 relaxed syscall ptrace              # ESRCH: no such pid
expect 22 relaxed syscall clone3             # EINVAL: size 0, not ENOSYS
expect 1 relaxed syscall io_uring_setup      # the floor: io_uring's requests would pass no filter
expect 1 relaxed syscall ioctl TIOCSTI       # the floor: EPERM under every profile
expect 0 relaxed syscall personality READ_IMPLIES_EXEC
expect 0 relaxed syscall socket AF_NETLINK SOCK_RAW NETLINK_KOBJECT_UEVENT
expect_not 1 relaxed syscall socket AF_ALG SOCK_SEQPACKET
expect_not 159 relaxed syscall settimeofday  # not killed (NULL, NULL changes nothing)
expect_not 159 relaxed syscall int80         # 32-bit entry points are filtered, not killed
expect_not 159 relaxed syscall x32

# none: one filter, the floor (the count of filters is the caller's own plus one), nothing is killed
outer=$(awk '/^Seccomp_filters:/ {print $2}' /proc/self/status)
run_probe none read /proc/self/status
inner=$(awk '/^Seccomp_filters:/ {print $2}' "$work/out")
[ "$rc" -eq 0 ] && [ "${inner:-x}" = "$((${outer:-0} + 1))" ] || fail "--seccomp none: Seccomp_filters $inner inside, $outer outside"
expect 1 none syscall ioctl TIOCSTI          # the floor holds under none
run_probe default read /proc/self/status
inner=$(awk '/^Seccomp_filters:/ {print $2}' "$work/out")
[ "$rc" -eq 0 ] && [ "${inner:-0}" -gt "${outer:-0}" ] || fail "--seccomp default: no filter loaded ($inner inside, $outer outside)"
expect_not 159 none syscall iopl
expect 22 none syscall clone3
expect 3 none syscall ptrace
finish
