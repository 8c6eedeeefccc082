// The caller's terminal as the run found it: the workload keeps the caller's terminal and session (so
// job control, Ctrl-C/Ctrl-Z, resize and tty(1) work as outside), so whatever it changes there — modes
// (stty -echo, a new interrupt character), output stopped with TCOOFF, the window size, the foreground
// process group, O_NONBLOCK on the open file description it shares with the caller's shell (whose next
// read then fails with EAGAIN) — would outlive the run. The supervisor saves the state before the
// workload starts and puts it back after the run ended, however it ended (exit, signal, --timeout,
// killed). What cannot be put back (injected input, a console's keymap, fonts, VT mode) is refused by
// seccomp/floor.txt. Proved by tests/escape/terminal_state.sh and terminal_foreground.sh.
#pragma once
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

namespace cage::lx {

struct SavedTerminal {
  int fd = -1;            // the first of stdin, stdout, stderr that is a terminal; -1: none
  pid_t foreground = -1;  // the terminal's foreground process group at the start
  termios mode{};
  winsize size{};
  bool have_size = false;
  int flags[3] = {-1, -1, -1};  // F_GETFL of fds 0-2 (-1: not open)
  // The caller's job control continued cage (SIGCONT) and left it in the background (`bg`).
  bool backgrounded = false;
};

SavedTerminal save_terminal();
// cage got SIGCONT: the user's job control (`fg`, `bg`; the workload cannot signal cage: pid namespace,
// or Landlock's signal scope) continued it after a stop; whether it is in the foreground now tells which.
void note_continued(SavedTerminal& saved);
// Only for a run that started in the foreground, and not once the user put cage in the background
// (the caller's shell or an editor has the terminal then: their state is not the run's to undo). That
// another group holds the terminal does not say so: the workload can hand it to the shell's group itself.
void restore_terminal(const SavedTerminal& saved);

}  // namespace cage::lx
