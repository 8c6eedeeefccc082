// File metadata changes for Mechanism::landlock_only (supervisor side). Landlock has no right for a
// file's mode, timestamps, owner or extended attributes (ACLs among them), so without read-only
// mounts they would reach every file the user owns. The workload's chmod, utimes, chown and
// setxattr/removexattr families, and the ioctls that change inode flags and attributes (chattr),
// become seccomp user notifications (the listener is connect_notify's); the supervisor opens the
// target once, as the workload names it (or takes the very file its fd holds), and changes that file
// only when it lies beneath a path Landlock lets the workload write (--rw grants, the private directory).
// Proved by tests/escape/metadata.sh (Landlock-only runs) and tests/integration/workloads.sh.
#pragma once
#include <linux/seccomp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cage::lx::metadata_notify {

// The mediated system calls of this architecture (native numbers), for the notification filter.
const std::vector<int>& calls();
// The ioctl commands mediated (or refused) the same way; the filter notifies ioctl for these only.
const std::vector<uint32_t>& ioctls();
bool mediates(int nr);

// Answers one notification of a call in calls(): 0 once the change is made, else the errno the
// workload gets. pidfd names the notifying thread's process; still_waiting re-checks the request id
// (the thread is still in the call, so the tid read from the notification names it).
int decide(const seccomp_notif& req, int pidfd, const std::vector<std::string>& writable, bool (*still_waiting)(void*),
           void* ctx);

// The mediating thread drops its effective capabilities once, so that the kernel judges ownership
// and permission for these changes as it would for the workload (a root caller's workload has none).
int drop_effective_capabilities();

}  // namespace cage::lx::metadata_notify
