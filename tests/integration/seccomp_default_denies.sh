#!/usr/bin/env bash
# The default seccomp profile: every listed syscall fails with EPERM (1), clone3 with ENOSYS (38),
# port I/O and clock setting kill the workload (cage exits 128+SIGSYS = 159), and each argument rule
# has its allowed twin (the same syscall with harmless arguments still works).
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/seccomp_lib.bash"
require_sandbox default

eperm=(ptrace process_vm_readv process_vm_writev process_madvise pidfd_getfd kexec_load kexec_file_load
  init_module finit_module delete_module reboot swapon swapoff acct quotactl quotactl_fd syslog lookup_dcookie
  nfsservctl uselib vhangup fanotify_init modify_ldt bpf perf_event_open userfaultfd io_uring_setup
  io_uring_enter io_uring_register keyctl add_key request_key open_by_handle_at name_to_handle_at
  migrate_pages move_pages mount umount2 pivot_root fsopen fsconfig fsmount fspick move_mount open_tree
  mount_setattr setns)
for name in "${eperm[@]}"; do expect 1 default syscall "$name"; done

# namespaces: denied with any CLONE_NEW* flag, allowed without
for flag in CLONE_NEWUSER CLONE_NEWNS CLONE_NEWPID CLONE_NEWNET CLONE_NEWUTS CLONE_NEWIPC CLONE_NEWCGROUP; do
  expect 1 default syscall unshare "$flag"
  expect 1 default syscall clone "$flag"
done
expect 0 default syscall clone 0
expect 0 default syscall unshare CLONE_FS
expect 38 default syscall clone3

# personality: the harmless execution domains and the query work; the rest is EPERM
for v in QUERY PER_LINUX PER_LINUX32 ADDR_NO_RANDOMIZE 'ADDR_NO_RANDOMIZE|PER_LINUX32'; do
  expect 0 default syscall personality "$v"
done
for v in READ_IMPLIES_EXEC MMAP_PAGE_ZERO UNAME26 'PER_LINUX32|READ_IMPLIES_EXEC' 0x1; do
  expect 1 default syscall personality "$v"
done

# terminal injection, also with bits 32..63 of cmd set (the kernel drops them); FIONREAD reaches the
# kernel and fails on the bad fd
expect 1 default syscall ioctl TIOCSTI
expect 1 default syscall ioctl TIOCSTI hi
expect 1 default syscall ioctl TIOCLINUX
expect 9 default syscall ioctl FIONREAD

# socket families: unix, inet, inet6 and NETLINK_ROUTE only; high bits of the family do not help
expect 0 default syscall socket AF_UNIX SOCK_STREAM
expect 0 default syscall socket AF_INET SOCK_DGRAM
expect 0 default syscall socket AF_NETLINK SOCK_RAW NETLINK_ROUTE
for fam in AF_PACKET AF_KEY AF_ALG AF_VSOCK AF_BLUETOOTH AF_XDP; do expect 1 default syscall socket "$fam" SOCK_RAW; done
expect 1 default syscall socket AF_ALG SOCK_SEQPACKET 0 hi
expect 1 default syscall socket AF_NETLINK SOCK_RAW NETLINK_AUDIT
expect 1 default syscall socket AF_NETLINK SOCK_RAW NETLINK_KOBJECT_UEVENT
expect 1 default syscall socket AF_NETLINK SOCK_RAW NETLINK_SOCK_DIAG

# killed: the process dies of SIGSYS and cage reports 128+31
for name in iopl ioperm clock_settime settimeofday adjtimex clock_adjtime; do expect 159 default syscall "$name"; done
# 32-bit and x32 entry points on x86_64: killed, whatever the syscall. A kernel without 32-bit
# emulation (CONFIG_IA32_EMULATION off, or ia32_emulation=false) has no int 0x80 entry: the
# instruction faults (SIGSEGV, 139) before seccomp sees a call, with or without cage.
host_rc=0
"$CAGE_PROBE" syscall int80 >/dev/null 2>&1 || host_rc=$?
if [ "$host_rc" -eq 139 ]; then
  echo "note: this kernel has no 32-bit entry point (int 0x80 faults outside cage too)" >&2
  expect 139 default syscall int80
else
  expect 159 default syscall int80
fi
expect 159 default syscall x32
finish
