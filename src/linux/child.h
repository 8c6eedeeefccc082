// What the child side of a run needs, prepared by the supervisor before clone so that the child
// never allocates: C strings, opened source fds, the seccomp program. Also the fixed-size failure
// record the child sends back over the error pipe.
#pragma once
#include <sys/resource.h>

#include <csignal>

#include <cstdint>
#include <vector>

#include "linux/plan.h"
#include "linux/seccomp.h"

namespace cage::lx {

enum class ChildStep : int32_t {
  none, sync, mount_propagation, root_tmpfs, mount_step, mount_attr, pivot_root, hostname,
  loopback, shim, fork_workload, landlock_create, landlock_rule, landlock_restrict, no_new_privs,
  securebits, caps, rlimit, chdir, seccomp, exec, signals, keyring, nested_userns, performer, net_namespace,
};

struct ChildFailure {
  ChildStep step = ChildStep::none;
  int32_t err = 0;
  int32_t index = -1;  // mount step or Landlock rule index, or -1
};

// The byte that releases init: go, or go with the scope's fallback rlimits. A second byte, once the
// supervisor's services (proxy, mediator, offline resolver) are up, lets init go on past its view:
// the view is built while they start.
inline constexpr char kRelease = 1, kReleaseFallback = 2, kServicesUp = 3;
// The sync pipe's last byte: the supervisor ends the run (--timeout's kill, a failed audit). Written
// before kEndRunSignal, which only wakes init: a signal alone could be forged or merged with one
// from inside the sandbox (a queued SIGPWR under an RLIMIT_SIGPENDING of 0 reads as SI_USER, pid 0;
// found by review attack9 on kernels without Landlock's signal scoping).
inline constexpr char kEndRun = 4;

// Who creates a mount step's entry when the supervisor fills a tmpfs of the view (plan_fill): the
// child in its order, the supervisor (its links, files and directories), or the child once the
// supervisor is done (the other steps beneath that tmpfs, in their order).
enum class FillRole : uint8_t { child, supervisor, deferred };
// The supervisor's answer to the child once it has filled the tmpfs: 0 or an errno, and the step.
struct FillResult {
  int32_t err = 0;
  int32_t index = -1;
};

struct ChildContext {
  const Plan* plan = nullptr;
  // Per mount step: O_PATH fd of the bind source, or -1. Opened by the child once it is in its own
  // mount namespace (a bind from an fd of another namespace is refused), before anything is
  // mounted; the parent only sizes the vector.
  mutable std::vector<int> source_fds;
  mutable std::vector<int> tmpfs_fds;  // one per mount: init's O_PATH of each sized tmpfs (tmpfs_usage.h)
  std::vector<char*> argv, envp;       // null-terminated
  std::vector<char*> secret_envp;      // the --secret entries of envp: init wipes its copies after the fork
  // plan->limits.rlimits, then plan->cgroup.scope.fallback_rlimits: those apply only when the
  // supervisor's release byte is kReleaseFallback (the user manager refused the scope).
  std::vector<struct rlimit> rlimits;
  std::vector<int> rlimit_resources;
  size_t plan_rlimits = 0;
  mutable bool scope_refused = false;
  seccomp::Program seccomp;
  seccomp::Program seccomp_extra;      // landlock_only: the socket/IPC supplement
  seccomp::Program seccomp_exec;       // --exec: memfd_create refused (SeccompPlan::no_memfd)
  std::vector<sock_filter> notify;     // connect/chmod/utimes (landlock_only), --explain's calls; or empty
  std::vector<sock_filter> refusals;   // --explain: the profile's own filter, to answer its errno refusals
  int sync_read = -1;    // the supervisor writes one byte once the id maps are written
  int error_write = -1;  // ChildFailure records; close-on-exec
  int status_write = -1; // init sends the workload's wait status here
  int net_fd = -1;       // the shim's end of the proxy channel
  int notify_fd = -1;    // where the workload sends the notification listener (connect_notify::install)
  bool notify_netns = false;  // and a socket of the sandbox's namespace (egress hand-off)
  // The network namespace is not made by the clone but by a process init starts at once, while init
  // builds the view (netns.h: late_netns); init joins it before anything touches the network.
  bool late_netns = false;
  // Egress hand-off: the performer's Landlock rules (performer.h), the workload's without the
  // abstract-socket scope, which would keep it from the workload's own abstract sockets.
  LandlockPlan performer_landlock;
  // and its seccomp profile as written: --explain rewrites `seccomp` into an ALLOW for each refusal,
  // which the workload's listener filter (`notify`, not the performer's) turns back into a refusal.
  seccomp::Program performer_seccomp;
  // The tmpfs the supervisor fills (plan_fill), or -1; each step's FillRole; the child's end of the
  // channel that carries the tmpfs's descriptor out and the FillResult back.
  int fill_index = -1;
  std::vector<FillRole> fill_roles;
  int fill_fd = -1;
  mutable int shim_ready = -1;  // readable once the --net shim has confined itself (net::await_shim)
  mutable int performer_ready = -1;  // readable once the performer has confined itself (performer::await_ready)
  mutable int dev_null = -1;  // O_PATH /dev/null, used to mask files; opened by the child too
  const char* private_dir = nullptr;  // landlock_only: removed by init should the supervisor die
  int supervisor_pidfd = -1;  // readable once the supervisor has exited
  int output_fds[3] = {-1, -1, -1};  // --max-output: the pipes init puts on fds 1 and 2 (output_cap.h)
};

[[noreturn]] void child_fail(const ChildContext& c, ChildStep step, int err, int index = -1);

// mount.cc (child): builds the whole root from plan->mounts and pivots into it; on failure *step names
// the phase (propagation, a mount step with its index, the staging tmpfs, read-only attributes, pivot).
int build_root(const ChildContext& c, ChildStep* step, int* failed_index);
// mount.cc (supervisor, before clone): the read-only tmpfs whose entries the supervisor creates while
// the child mounts the rest, with every step's FillRole; -1 when none is worth it. Pure.
int plan_fill(const Plan& plan, std::vector<FillRole>& roles);
// mount.cc (supervisor): creates the FillRole::supervisor entries beneath mount_fd, the root of the
// plan's step `fill` (a detached or attached tmpfs of the child's), with the child's walk (no link
// followed, nothing outside); 0 or an errno and *failed_index the step.
int fill_tmpfs(const Plan& plan, const std::vector<FillRole>& roles, size_t fill, int mount_fd, int* failed_index);
// landlock.cc (child, in the workload): restricts the calling process to plan->landlock.
int landlock_restrict(const LandlockPlan& plan, ChildStep* step, int* failed_index);
// caps.cc (child, in the workload): no_new_privs, locked securebits, every capability dropped.
int drop_privileges(ChildStep* step);
// caps.cc (init, once the workload runs; and drop_privileges): ambient, bounding (given CAP_SETPCAP),
// effective, permitted and inheritable sets emptied with raw system calls; 0 or an errno.
int clear_capabilities();
// init.cc (child): pid 1 of the sandbox; forks the workload and never returns.
[[noreturn]] void run_init(const ChildContext& c);
// userns.cc (parent): id maps for the child.
int write_id_maps(const IdMaps& ids, int pid);
// landlock_only.cc (either side): removes the run's private directory and everything in it without
// allocating and without following a link.
void remove_private_dir(const char* path);
// Wakes init to read the sync pipe, where the supervisor has written kEndRun to end the run
// (--timeout's last step, a failed audit), with or without a pid namespace: the byte is the request,
// the signal only the wake-up. Without a pid namespace (Mechanism::landlock_only) it is also init's
// parent-death signal. init then ends every process of the run (end_pid_namespace as pid 1,
// descendants.cc otherwise) before it exits. Never forwarded to the workload.
constexpr int kEndRunSignal = SIGPWR;
// descendants.cc (child, init without a pid namespace): stops and kills every descendant of the
// calling process and reaps them, until it has no child left. Allocates nothing from the heap (its
// list of stopped processes is mmap'd).
void end_descendants();
// userns.cc (child): brings up `lo` in the new network namespace.
int bring_up_loopback();

}  // namespace cage::lx
