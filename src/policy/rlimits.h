// The --rlimit resources, in one table (issue 26: each fact once). Validation accepts the names of
// both lists; the Linux executor maps every name to its RLIMIT_ constant, the macOS executor the
// POSIX list (macOS has no other), and the macOS plan refuses a name of the Linux-only list. Each
// user expands the lists with its own X(name, CONSTANT_SUFFIX) macro.
#pragma once

// setrlimit resources Linux and macOS both have.
#define CAGE_RLIMITS_POSIX(X)                                                                                 \
  X(as, AS) X(core, CORE) X(cpu, CPU) X(data, DATA) X(fsize, FSIZE) X(memlock, MEMLOCK) X(nofile, NOFILE) \
  X(nproc, NPROC) X(rss, RSS) X(stack, STACK)
// Linux only.
#define CAGE_RLIMITS_LINUX_ONLY(X) \
  X(msgqueue, MSGQUEUE) X(nice, NICE) X(rtprio, RTPRIO) X(rttime, RTTIME) X(sigpending, SIGPENDING)

namespace cage::policy {

#define CAGE_RLIMIT_NAME(n, N) #n,
inline constexpr const char* kRlimitNames[] = {CAGE_RLIMITS_POSIX(CAGE_RLIMIT_NAME)
                                                   CAGE_RLIMITS_LINUX_ONLY(CAGE_RLIMIT_NAME)};
inline constexpr const char* kPosixRlimitNames[] = {CAGE_RLIMITS_POSIX(CAGE_RLIMIT_NAME)};
#undef CAGE_RLIMIT_NAME

}  // namespace cage::policy
