// cage's exit statuses, named once (cage(1) EXIT STATUS; the --help epilogue says the same):
// the command's own status, 128+N when it died of signal N, and these.
#pragma once
#ifndef _WIN32
#include <sys/wait.h>
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
#endif

}  // namespace cage::exit_status
