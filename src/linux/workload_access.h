// Reading a notifying workload thread's memory and descriptors, for the seccomp user-notification
// mediators of the Landlock-only mechanism (metadata_notify, connect_notify). process_vm_readv and
// pidfd_getfd come first; where an outer seccomp filter refuses them (Docker's default profile allows
// both only with CAP_SYS_PTRACE: chmod +x failed in every container), the same access goes through
// /proc/TID/mem and /proc/TID/fd/N, which the kernel guards with the same ptrace access check.
// tests/docker/run.sh runs the metadata and workload tests under Docker's default profile.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace cage::lx {

// Reads up to size bytes at addr in the thread's memory; the count read, or -1 with errno.
ssize_t read_workload_memory(pid_t tid, uint64_t addr, void* out, size_t size);

// A descriptor of ours for the workload's descriptor fd: the very open file (pidfd_getfd), or where
// that is refused an O_PATH descriptor of the same file (enough to name it, not to use it for I/O).
// -1 with errno on failure.
int workload_fd(int pidfd, pid_t tid, int fd);

}  // namespace cage::lx
