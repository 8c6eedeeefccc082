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
void send_tmpfs_usage(const Plan& plan, const int* fds, int out_fd);
// Child side: the record that ends init's report when no other process of the sandbox is left.
void send_sandbox_empty(int out_fd);
// Supervisor side: the records init sent, one per sized tmpfs it could open, up to the end of the
// pipe or the record of send_sandbox_empty (then *empty is set).
std::vector<TmpfsUsage> read_tmpfs_usage(const Plan& plan, int in_fd, bool* empty = nullptr);

}  // namespace cage::lx
