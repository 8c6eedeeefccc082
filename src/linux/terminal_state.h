// The caller's terminal as the run found it: the workload keeps the caller's terminal and session (so
// job control, Ctrl-C/Ctrl-Z, resize and tty(1) work as outside), so whatever it changes there — modes
// (stty -echo, a new interrupt character), output stopped with TCOOFF, the window size, the foreground
// process group — would outlive the run. The supervisor saves the state before the workload starts and
// puts it back after the run ended, however it ended (exit, signal, --timeout, killed). What cannot be
// put back (injected input, a console's keymap, fonts, VT mode) is refused by seccomp/floor.txt.
// Proved by tests/escape/terminal_state.sh.
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
};

SavedTerminal save_terminal();
// Only for a run that started in the foreground, and only while no other live process group (the
// caller's shell after a Ctrl-Z, an editor) has the terminal: their state is not the run's to undo.
void restore_terminal(const SavedTerminal& saved);

}  // namespace cage::lx
