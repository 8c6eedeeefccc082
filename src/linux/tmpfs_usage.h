// How full each sized private tmpfs is when the workload has ended, for the result's `tmpfs` and its
// class disk_quota_exceeded. Child side: init opens each one (O_PATH) once the root is built, before
// the workload exists, and after the workload's exit sends a fixed record per mount down the status
// pipe, behind the wait status; the mounts die with the sandbox's mount namespace, so only init can
// still see them then. Supervisor side: read those records. Proved by tests/integration/tmpfs_size.sh.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "linux/plan.h"

namespace cage::lx {

struct TmpfsUsage {
  std::string path;
  int64_t size_bytes = 0, used_bytes = 0;
  bool full = false;  // less than 1% of its size (at most 1 MiB) free, or no inode left
};

// Child side, no allocation: fds has one slot per MountStep (-1 where none is sized).
void open_sized_tmpfs(const Plan& plan, int* fds);
// Child side, no allocation: init's report once the workload has exited, in one write (each write
// wakes the supervisor): the workload's wait status; with fds (a root of its own) a record per sized
// tmpfs; with `empty` the record that says no other process of the sandbox is left.
void send_exit_report(const Plan& plan, const int* fds, int status, bool empty, int out_fd);
// Supervisor side: the records init sent, one per sized tmpfs it could open, up to the end of the
// pipe or the record of send_sandbox_empty (then *empty is set).
std::vector<TmpfsUsage> read_tmpfs_usage(const Plan& plan, int in_fd, bool* empty = nullptr);

}  // namespace cage::lx
