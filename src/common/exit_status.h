// cage's exit statuses, named once (cage(1) EXIT STATUS; the --help epilogue says the same):
// the command's own status, 128+N when it died of signal N, and these.
#pragma once
#ifndef _WIN32
#include <sys/resource.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#endif

namespace cage::exit_status {

inline constexpr int kTimedOut = 124;       // --timeout stopped the command
inline constexpr int kCageError = 125;      // cage's own error: nothing of the command ran confined
inline constexpr int kCannotExecute = 126;  // the command exists but cannot be executed
inline constexpr int kNotFound = 127;       // the command is not there inside the sandbox
inline constexpr int kSignalBase = 128;     // + the signal that ended the command
inline constexpr int kInterrupted = 130;    // Windows: Ctrl-C or the console closed (128 + SIGINT)

// A wait(2) status as a shell reports it; `other` when it is neither an exit nor a signal.
#ifndef _WIN32
inline int of_wait(int st, int other = kCageError) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return kSignalBase + WTERMSIG(st);
  return other;
}

// The signal the command died of, once the backend has written its report and restored the terminal;
// main then ends cage by the same signal (die_of), so that the caller's shell sees a death by SIGINT
// and stops its loop (bash's "wait and cooperative exit"), as it would for the command run bare.
inline int g_died_of = 0;
inline void set_died_of(int sig) { g_died_of = sig; }

// Whether sig's default action ends the process: the others (ignore, stop) cannot end cage.
inline bool ends_process(int sig) {
  switch (sig) {
    case SIGCHLD: case SIGWINCH: case SIGCONT: case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
    case SIGURG: return false;
    default: return true;
  }
}

// main's last step: status itself, unless it is 128+N of the signal the command died of; cage then
// dies of N with its default action restored and unblocked (no core dump of cage's own: a workload's
// SIGSEGV or SIGABRT is the workload's). exit(128+N) if N does not end a process or raise returns.
[[noreturn]] inline void die_of(int sig) {
  struct rlimit none {};
  ::setrlimit(RLIMIT_CORE, &none);
  std::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::sigprocmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
  std::exit(kSignalBase + sig);
}
inline int finish(int status) {
  if (g_died_of > 0 && status == kSignalBase + g_died_of && ends_process(g_died_of)) die_of(g_died_of);
  return status;
}
#endif

}  // namespace cage::exit_status
