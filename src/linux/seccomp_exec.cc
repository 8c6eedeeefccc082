// Seccomp supplement for --exec (compile_exec.cc sets SeccompPlan::no_memfd; the parent builds it,
// the workload loads it on top of the chosen profile): memfd_create and memfd_secret answer ENOSYS,
// as on a kernel without them, so programs fall back to a file (on a noexec mount). A memfd lives on
// the kernel's internal shm mount, which no mount option reaches: its bytes could be run through the
// allowed dynamic loader (`ld.so /proc/self/fd/N`) or mapped executable, past Landlock's execute
// right, and vm.memfd_noexec=2 stops only execve of it (found by an attack review; tests/escape/exec_memfd.sh).
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "linux/seccomp.h"

namespace cage::lx::seccomp {

Result<Program> build_no_memfd_supplement() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return unavailable("--exec", "libseccomp could not start a filter", "report this");
  int rc = 0;
#if defined(__x86_64__)
  // The 32-bit entry points too, whatever the chosen profile does with them.
  for (uint32_t arch : {SCMP_ARCH_X86, SCMP_ARCH_X32})
    if (seccomp_arch_exist(ctx, arch) == -EEXIST) rc |= seccomp_arch_add(ctx, arch);
#endif
  for (int sys : {SCMP_SYS(memfd_create), SCMP_SYS(memfd_secret)})
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), sys, 0);
  Program prog;
  int fd = rc == 0 ? ::memfd_create("cage-seccomp", MFD_CLOEXEC) : -1;
  if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0) {
    off_t size = ::lseek(fd, 0, SEEK_END);
    prog.filter.resize(static_cast<size_t>(size) / sizeof(sock_filter));
    if (::pread(fd, prog.filter.data(), static_cast<size_t>(size), 0) != size) prog.filter.clear();
  }
  if (fd >= 0) ::close(fd);
  seccomp_release(ctx);
  if (prog.filter.empty())
    return unavailable("--exec", "the filter refusing memfd_create could not be built", "report this", rc ? -rc : errno);
  return prog;
}

}  // namespace cage::lx::seccomp
