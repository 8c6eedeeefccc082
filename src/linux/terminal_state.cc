// Saving and restoring the caller's terminal around a run (terminal_state.h).
#include "linux/terminal_state.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cage::lx {

SavedTerminal save_terminal() {
  SavedTerminal s;
  for (int fd = 0; fd < 3; ++fd) s.flags[fd] = ::fcntl(fd, F_GETFL);
  for (int fd = 0; fd < 3; ++fd)
    if (::isatty(fd) && ::tcgetattr(fd, &s.mode) == 0) {
      s.fd = fd;
      s.foreground = ::tcgetpgrp(fd);
      s.have_size = ::ioctl(fd, TIOCGWINSZ, &s.size) == 0;
      return s;
    }
  return s;
}

void note_continued(SavedTerminal& saved) {
  if (saved.fd >= 0) saved.backgrounded = ::tcgetpgrp(saved.fd) != ::getpgrp();
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

// O_NONBLOCK lives in the open file description, which fds 0-2 share with the caller's shell (a
// terminal) or with its other jobs (a CI runner's log pipe): the run's setting is taken back.
void restore_blocking(int fd, int saved) {
  int now = ::fcntl(fd, F_GETFL);
  if (saved >= 0 && now >= 0 && (now & O_NONBLOCK) != (saved & O_NONBLOCK))
    ::fcntl(fd, F_SETFL, (now & ~O_NONBLOCK) | (saved & O_NONBLOCK));
}

}  // namespace

void restore_terminal(const SavedTerminal& saved) {
  // Cage's own job state decides, not who holds the terminal now: the workload can give the terminal
  // to the shell's process group (tcsetpgrp), and a restore skipped for that left its modes behind.
  const bool ours = saved.fd >= 0 && saved.foreground == ::getpgrp() && ::isatty(saved.fd) &&
                    (!saved.backgrounded || run_holds(::tcgetpgrp(saved.fd)));
  for (int fd = 0; fd < 3; ++fd)
    if (ours || !::isatty(fd)) restore_blocking(fd, saved.flags[fd]);
  if (!ours) return;
  // The workload may have left cage in the background (its own job control, or the terminal handed to
  // the shell's group): with SIGTTOU blocked the kernel lets cage take the foreground back and change
  // the terminal instead of stopping it.
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
