// The sandbox's network namespace, made beside init instead of by init's clone. Making a network
// namespace is most of what that clone costs (~0.8 ms on a 2-core machine: every per-namespace
// subsystem, the loopback device, its sysctls); a short-lived process that shares init's memory
// makes it on the other core while init builds the view, and keeps it until init has joined it
// (setns through the process's pidfd, Linux 5.8). Init joins before the loopback, the resolver, the
// shim, the performer or the workload exist, and before anything of the run reads the namespace.
// Where the kernel cannot (no CLONE_PIDFD, no setns by pidfd, an architecture without the raw
// syscalls below), init makes the namespace itself with unshare at the same point: the result is
// the same namespace, only later. Proved by every --net and network test (the workload's
// namespace is a new one: escape tests network, net_*), on 6.1, 6.12 and this host.
#pragma once
#include <sys/types.h>

#include <atomic>

namespace cage::lx::late_netns {

struct Maker {
  std::atomic<int> state{0};  // kStarting, kMade, kFailed, kJoined (late_netns.cc)
  int err = 0;
  pid_t pid = -1;
  int pidfd = -1;
  void* map = nullptr;  // the maker's stack, with its guard
};

// In init, once it holds its user namespace's capabilities (the id maps are written). 0, or the
// errno of a maker that could not start (then join makes the namespace itself). No allocation.
void start(Maker& m);
// Joins the maker's namespace (or makes one), lets the maker go and reaps it. 0 or an errno.
int join(Maker& m);

}  // namespace cage::lx::late_netns
