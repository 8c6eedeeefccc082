// Seccomp: the syscall filter of the workload. Parent side builds the BPF program with libseccomp
// from the profile data in seccomp/; child side only loads it (no allocation after clone).
#pragma once
#include <linux/filter.h>

#include <vector>

#include "common/error.h"
#include "linux/plan.h"

namespace cage::lx::seccomp {

struct Program {
  std::vector<sock_filter> filter;  // empty for SeccompProfile::none
};

Result<Program> build_program(const SeccompPlan& plan);  // parent, before clone
int load_program(const Program& prog);                   // child, last step before execve; 0 or errno
// Mechanism::landlock_only: sockets other than TCP, SysV IPC and more refused (seccomp/landlock_only.txt).
Result<Program> build_landlock_only_supplement(bool host_network, bool allow_metadata);
Result<Program> build_no_memfd_supplement();  // seccomp_exec.cc: SeccompPlan::no_memfd

}  // namespace cage::lx::seccomp
