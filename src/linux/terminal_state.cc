// Saving and restoring the caller's terminal around a run (terminal_state.h).
#include "linux/terminal_state.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cage::lx {

SavedTerminal save_terminal() {
  SavedTerminal s;
  for (int fd = 0; fd < 3; ++fd)
    if (::isatty(fd) && ::tcgetattr(fd, &s.mode) == 0) {
      s.fd = fd;
      s.foreground = ::tcgetpgrp(fd);
      s.have_size = ::ioctl(fd, TIOCGWINSZ, &s.size) == 0;
      return s;
    }
  return s;
}

namespace {

bool same_mode(const termios& a, const termios& b) {
  return a.c_iflag == b.c_iflag && a.c_oflag == b.c_oflag && a.c_cflag == b.c_cflag && a.c_lflag == b.c_lflag &&
         std::memcmp(a.c_cc, b.c_cc, sizeof a.c_cc) == 0 && ::cfgetispeed(&a) == ::cfgetispeed(&b) &&
         ::cfgetospeed(&a) == ::cfgetospeed(&b);
}

// The group holding the terminal now is the run's own (cage's, or one the workload made and that
// died with it), not another job of the caller's.
bool run_holds(pid_t fg) {
  if (fg <= 0 || fg == ::getpgrp()) return true;
  return ::kill(-fg, 0) != 0 && errno == ESRCH;
}

}  // namespace

void restore_terminal(const SavedTerminal& saved) {
  if (saved.fd < 0 || saved.foreground != ::getpgrp() || !::isatty(saved.fd)) return;
  if (!run_holds(::tcgetpgrp(saved.fd))) return;
  // The workload may have left cage in the background (its own job control): with SIGTTOU blocked
  // the kernel lets cage change the terminal instead of stopping it.
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  ::sigprocmask(SIG_BLOCK, &ttou, &old);
  if (::tcgetpgrp(saved.fd) != saved.foreground) ::tcsetpgrp(saved.fd, saved.foreground);
  // Output first (TCOOFF left it stopped): a mode change waits for nothing then.
  ::tcflow(saved.fd, TCOON);
  termios now{};
  if (::tcgetattr(saved.fd, &now) == 0 && !same_mode(now, saved.mode)) ::tcsetattr(saved.fd, TCSANOW, &saved.mode);
  // The window size the run started with. A window resized during the run therefore gets its start size
  // back: the kernel does not say who set a size, and the workload's TIOCSWINSZ must not outlive the run.
  winsize ws{};
  if (saved.have_size && ::ioctl(saved.fd, TIOCGWINSZ, &ws) == 0 &&
      (ws.ws_row != saved.size.ws_row || ws.ws_col != saved.size.ws_col || ws.ws_xpixel != saved.size.ws_xpixel ||
       ws.ws_ypixel != saved.size.ws_ypixel))
    ::ioctl(saved.fd, TIOCSWINSZ, &saved.size);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace cage::lx
