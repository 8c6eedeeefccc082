// Seccomp supplement for Mechanism::landlock_only (parent builds, child loads on top of the chosen
// profile): without a network namespace the workload must not reach the host's network or its
// local services, so every socket but TCP over IPv4/IPv6 is refused (UDP, raw, ICMP, unix, netlink;
// socketpair only for unix stream and seqpacket pairs; with --share-net no unix sockets still),
// and Landlock denies TCP connect and bind (but the proxy's port with --net); the two ways around
// Landlock's TCP hooks (Fast Open, listen without bind) are refused here. System V IPC and POSIX
// message queues, shared with the host without an IPC namespace, are refused too, and so are changes to
// other processes' limits and scheduling (the host's processes of the same uid are in reach).
// Proved by tests/integration/fallback_*.sh.
#include <seccomp.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "linux/seccomp.h"

namespace cage::lx::seccomp {

Result<Program> build_landlock_only_supplement(bool host_network, bool allow_metadata) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return unavailable("seccomp", "libseccomp could not start a filter", "report this");
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  int rc = 0;
  if (!host_network) {
    // Families: only AF_INET and AF_INET6 (2 and 10); every other one (unix, netlink, packet, vsock,
    // tipc, alg...) is refused, as ranges so that families added to later kernels are covered too.
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0_32(SCMP_CMP_LT, AF_INET));
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0_32(SCMP_CMP_GT, AF_INET6));
    for (uint32_t family = AF_INET + 1; family < AF_INET6; ++family)
      rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0_32(SCMP_CMP_EQ, family));
    for (int family : {AF_INET, AF_INET6}) {
      // Only SOCK_STREAM (the low four bits of type; the rest are SOCK_NONBLOCK/SOCK_CLOEXEC):
      // datagram, raw, seqpacket, DCCP and every other type are refused.
      for (uint32_t type = 0; type < 16; ++type)
        if (type != SOCK_STREAM)
          rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2, SCMP_A0_32(SCMP_CMP_EQ, static_cast<uint32_t>(family)),
                                 SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, type));
      // Landlock's TCP rules cover TCP only: SCTP, MPTCP and the rest would connect unchecked, so a
      // stream socket must be plain TCP (protocol 0 or IPPROTO_TCP).
      rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2, SCMP_A0_32(SCMP_CMP_EQ, static_cast<uint32_t>(family)),
                             SCMP_A2_32(SCMP_CMP_GT, IPPROTO_TCP));
      for (uint32_t proto = 1; proto < IPPROTO_TCP; ++proto)
        rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2, SCMP_A0_32(SCMP_CMP_EQ, static_cast<uint32_t>(family)),
                               SCMP_A2_32(SCMP_CMP_EQ, proto));
    }
    // TCP Fast Open connects from sendto/sendmsg without passing Landlock's connect hook, and listen()
    // on an unbound socket binds an ephemeral port on every interface without passing its bind hook:
    // both would reach around the TCP rules, so both are refused.
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(sendto), 1, SCMP_A3_32(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN));
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(sendmsg), 1, SCMP_A2_32(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN));
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(sendmmsg), 1, SCMP_A3_32(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN));
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(listen), 0);
  } else {
    // --share-net gives the host network, not the host's unix sockets: with namespaces their files
    // lie in the private /tmp and /run; here they are reachable, and Landlock does not check a
    // connect() to one (the session bus, docker.sock, ssh agents). Internet and netlink sockets only.
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0_32(SCMP_CMP_LT, AF_INET));
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0_32(SCMP_CMP_GT, AF_NETLINK));
    for (uint32_t family = AF_INET + 1; family < AF_NETLINK; ++family)
      if (family != AF_INET6) rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0_32(SCMP_CMP_EQ, family));
  }
  // socketpair needs no socket(): only unix stream and seqpacket pairs. A datagram pair (SOCK_DGRAM,
  // or SOCK_RAW, which unix sockets treat as one) may name any destination in sendto/sendmsg, and
  // Landlock does not check that lookup: it would reach every host socket file the user may write
  // to (/dev/log, journald, other programs' sockets in ungranted directories).
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socketpair), 1, SCMP_A0_32(SCMP_CMP_NE, AF_UNIX));
  for (uint32_t type = 0; type < 16; ++type)
    if (type != SOCK_STREAM && type != SOCK_SEQPACKET)
      rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socketpair), 1, SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, type));
  // io_uring's connect does not pass seccomp's view of connect() (connect_notify.h), nor its socket
  // operation the family rules above, whatever --seccomp profile was chosen: refused here too.
  for (int sys : {SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register)})
    rc |= seccomp_rule_add(ctx, deny, sys, 0);
  // The host's IPC namespace: System V objects, and POSIX message queues, which mq_open(O_CREAT)
  // creates before Landlock refuses the open, so they would outlive the run.
  // The calls that take an existing object's id are refused as well: ids are small and listed in
  // /proc/sysvipc, so shmat/shmctl reached the host's segments of the same user (read, write, remove).
  for (int sys : {SCMP_SYS(shmget), SCMP_SYS(semget), SCMP_SYS(msgget), SCMP_SYS(mq_open), SCMP_SYS(mq_unlink),
                  SCMP_SYS(shmat), SCMP_SYS(shmctl), SCMP_SYS(semop), SCMP_SYS(semtimedop), SCMP_SYS(semctl),
                  SCMP_SYS(msgsnd), SCMP_SYS(msgrcv), SCMP_SYS(msgctl)})
    rc |= seccomp_rule_add(ctx, deny, sys, 0);
  // No user namespace: the user keyring (and the user session keyring) is the one every process of the
  // uid shares; the session keyring was replaced before this filter, so keyrings are refused here
  // whatever the profile (tests/escape/keyring.sh).
  for (int sys : {SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key)}) rc |= seccomp_rule_add(ctx, deny, sys, 0);
  // No pid namespace: the kernel lets a process change the resource limits, nice value, I/O priority,
  // scheduling policy and CPU affinity of any process with its uid, and Landlock has no hook for it
  // (its signal scope covers kill only). A workload could set RLIMIT_CPU on the caller's shell (the
  // kernel then kills it) or renice all of the user's processes (PRIO_USER). Only the calling thread
  // (pid 0) is accepted as a target; reading another's limits (prlimit without new ones) stays.
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(prlimit64), 2, SCMP_A0_32(SCMP_CMP_NE, 0), SCMP_A2(SCMP_CMP_NE, 0));
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(setpriority), 1, SCMP_A0_32(SCMP_CMP_NE, 0));  // PRIO_PGRP, PRIO_USER
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(setpriority), 1, SCMP_A1_32(SCMP_CMP_NE, 0));
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(ioprio_set), 1, SCMP_A0_32(SCMP_CMP_NE, 1));  // IOPRIO_WHO_PROCESS only
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(ioprio_set), 1, SCMP_A1_32(SCMP_CMP_NE, 0));
  for (int sys : {SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_setscheduler), SCMP_SYS(sched_setparam),
                  SCMP_SYS(sched_setattr)})
    rc |= seccomp_rule_add(ctx, deny, sys, 1, SCMP_A0_32(SCMP_CMP_NE, 0));
  // Landlock has no right for a file's mode, timestamps, owner or extended attributes: those calls are
  // mediated instead (metadata_notify.h). setxattrat and removexattrat (463, 466, Linux 6.13; one
  // number on every architecture) take their arguments in a struct the mediator does not read: refused;
  // so is file_setattr (469, Linux 6.17), which sets inode flags (chattr's) by path.
  if (!allow_metadata)
    for (int sys : {463, 466, 469}) rc |= seccomp_rule_add(ctx, deny, sys, 0);
  if (rc != 0) {
    seccomp_release(ctx);
    return unavailable("seccomp", "the socket filter for running without namespaces could not be built",
                       "report this", -rc);
  }
  int fd = ::memfd_create("cage-seccomp", MFD_CLOEXEC);
  Program prog;
  if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0) {
    off_t size = ::lseek(fd, 0, SEEK_END);
    prog.filter.resize(static_cast<size_t>(size) / sizeof(sock_filter));
    if (::pread(fd, prog.filter.data(), static_cast<size_t>(size), 0) != size) prog.filter.clear();
  }
  if (fd >= 0) ::close(fd);
  seccomp_release(ctx);
  if (prog.filter.empty()) return unavailable("seccomp", "exporting the socket filter failed", "report this", errno);
  return prog;
}

}  // namespace cage::lx::seccomp
