// Seccomp supplement for Mechanism::landlock_only (parent builds, child loads on top of the chosen
// profile): without a network namespace the workload must not reach the host's network or its
// local services, so every socket but TCP over IPv4/IPv6 is refused (UDP, raw, ICMP, unix, netlink),
// and Landlock denies TCP connect and bind. System V IPC, shared with the host without an IPC
// namespace, is refused too. Proved by tests/integration/fallback_*.sh.
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "linux/seccomp.h"

namespace cage::lx::seccomp {

Result<Program> build_landlock_only_supplement() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return unavailable("seccomp", "libseccomp could not start a filter", "report this");
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  int rc = 0;
  for (int family : {AF_UNIX, AF_NETLINK, AF_PACKET})
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0_32(SCMP_CMP_EQ, static_cast<uint32_t>(family)));
  for (int family : {AF_INET, AF_INET6})
    for (int type : {SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET})
      rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2, SCMP_A0_32(SCMP_CMP_EQ, static_cast<uint32_t>(family)),
                             SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, static_cast<uint32_t>(type)));
  for (int sys : {SCMP_SYS(shmget), SCMP_SYS(semget), SCMP_SYS(msgget), SCMP_SYS(socketpair)})
    if (sys != SCMP_SYS(socketpair)) rc |= seccomp_rule_add(ctx, deny, sys, 0);
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
