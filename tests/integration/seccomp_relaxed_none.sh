#!/usr/bin/env bash
# --seccomp relaxed blocks only reboot, kexec, modules and swap; --seccomp none loads no filter at all.
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
if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ]; then
  expect 14 relaxed syscall io_uring_setup   # EFAULT: NULL params
fi
expect 9 relaxed syscall ioctl TIOCSTI       # EBADF: fd -1
expect 0 relaxed syscall personality READ_IMPLIES_EXEC
expect 0 relaxed syscall socket AF_NETLINK SOCK_RAW NETLINK_KOBJECT_UEVENT
expect_not 1 relaxed syscall socket AF_ALG SOCK_SEQPACKET
expect_not 159 relaxed syscall settimeofday  # not killed (NULL, NULL changes nothing)
expect_not 159 relaxed syscall int80         # 32-bit entry points are filtered, not killed
expect_not 159 relaxed syscall x32

# none: no filter is loaded (the count of filters is the caller's own), nothing is killed
outer=$(awk '/^Seccomp_filters:/ {print $2}' /proc/self/status)
run_probe none read /proc/self/status
inner=$(awk '/^Seccomp_filters:/ {print $2}' "$work/out")
[ "$rc" -eq 0 ] && [ "${inner:-x}" = "${outer:-x}" ] || fail "--seccomp none: Seccomp_filters $inner inside, $outer outside"
run_probe default read /proc/self/status
inner=$(awk '/^Seccomp_filters:/ {print $2}' "$work/out")
[ "$rc" -eq 0 ] && [ "${inner:-0}" -gt "${outer:-0}" ] || fail "--seccomp default: no filter loaded ($inner inside, $outer outside)"
expect_not 159 none syscall iopl
expect 22 none syscall clone3
expect 3 none syscall ptrace
finish
