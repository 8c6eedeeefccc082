// --explain's view of the calls the seccomp profile refuses with an errno (ptrace, keyctl, bpf,
// unshare...) or kills the process for (clock_settime, reboot...). The kernel runs every filter of a
// chain on each call and keeps the strongest action, and SECCOMP_RET_ERRNO and _KILL_PROCESS are
// stronger than SECCOMP_RET_USER_NOTIF, so a refusal or kill in the main filter never reaches the
// listener. Under --explain the two filters are rewritten as a pair that lets nothing run that the
// main filter alone does not let run:
//   - the main filter answers ALLOW where it answered an errno or a kill, except for the calls the
//     listener already notifies (connect, chmod, the observed path calls...), other architectures and
//     x32, which keep the original program untouched: the supervisor answers CONTINUE for some of
//     those, which must never run a refused call;
//   - the listener, after its own checks, runs a copy of the main filter in which every errno and
//     kill answer is a notification and every other answer ALLOW.
// The supervisor judges such a notification with the original filter (evaluate() below, on the
// call's own seccomp_data), never answers CONTINUE: an errno is answered with that errno; a kill is
// carried out by the supervisor, SIGKILL to the caller's thread group (the caller dies waiting, the
// call never runs; its parent sees signal 9, not SIGSYS), then answered ENOSYS should the caller
// still be waiting. If an answer could not be sent, or the supervisor is gone, the kernel fails the
// call (ENOSYS). So nothing the profile refused or killed for runs.
// Proved by tests/unit/seccomp_observe_test.cc (the pair against the original on every call number,
// and the interpreter against the profiles' own rules) and tests/integration/explain_lib.bash.
#pragma once
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace cage::lx::seccomp {

// The architecture cage's hand-written filters check, and the call-number bit of x32 (x86_64's other
// ABI, whose calls would bypass checks by native number; 0 where there is none).
#if defined(__x86_64__)
inline constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
inline constexpr uint32_t kForeignNrBit = 0x40000000;
#elif defined(__aarch64__)
inline constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
inline constexpr uint32_t kForeignNrBit = 0;
#else
#error "seccomp: unknown architecture"
#endif

// Runs a classic BPF seccomp program on one call, as the kernel's interpreter would, and returns its
// action (SECCOMP_RET_*|data). An instruction seccomp does not accept, a jump out of the program or a
// program without a return gives SECCOMP_RET_KILL_PROCESS: the caller treats that as "not an errno".
uint32_t evaluate(std::span<const sock_filter> prog, const seccomp_data& d);

// The action kills the process (SECCOMP_RET_KILL_PROCESS, the profiles' "kill").
bool is_kill(uint32_t action);

struct ObservedPair {
  std::vector<sock_filter> main;  // replaces the main filter
  std::vector<sock_filter> tail;  // appended to the listener's filter (connect_notify::filter)
};

// The pair for `main`; `notified`: the native call numbers the listener's own checks notify.
// nullopt when the program cannot be rewritten safely (a computed return, or too long): the run then
// keeps the original filter and --explain does not see its errno refusals or kills.
std::optional<ObservedPair> observe_refusals(std::span<const sock_filter> main, std::span<const int> notified,
                                             uint32_t arch, uint32_t foreign_nr_bit);

}  // namespace cage::lx::seccomp
