// The sentinel (sentinel.h).
#include "linux/sentinel.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "linux/child.h"

namespace cage::lx {

namespace {

constexpr int kMax = 4;
struct Paths {
  char path[kMax][512];
  Sentinel::Kind kind[kMax];
  int n = 0;
};

void sleep_10ms() {
  struct timespec ts {0, 10 * 1000 * 1000};
  ::nanosleep(&ts, nullptr);
}

// SIGKILL to each pid listed in dir/cgroup.procs, parsed without allocating.
void kill_members(const char* dir) {
  char path[600], buf[4096];
  size_t dl = std::strlen(dir);
  if (dl + 14 >= sizeof path) return;
  std::memcpy(path, dir, dl);
  std::memcpy(path + dl, "/cgroup.procs", 14);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  long pid = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] >= '0' && buf[i] <= '9') {
      pid = pid * 10 + (buf[i] - '0');
    } else {
      if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
      pid = 0;
    }
  }
}

// rmdir fails with EBUSY until the last member has been reaped (its sandbox is dying with cage).
void remove_cgroup(const char* dir) {
  for (int k = 0; k < 300; ++k) {
    if (::rmdir(dir) == 0 || errno != EBUSY) return;
    if (k % 20 == 0) kill_members(dir);
    sleep_10ms();
  }
}

[[noreturn]] void sentinel_main(int rd, const Paths& p) {
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2})
    ::sigaction(sig, &ign, nullptr);
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && null >= 0; ++fd) ::dup2(null, fd);
  // Nothing else of the supervisor's: a write end held here would keep a pipe from ever ending.
  if (rd > 3) ::syscall(SYS_close_range, 3u, static_cast<unsigned>(rd - 1), 0u);
  ::syscall(SYS_close_range, static_cast<unsigned>(rd + 1), ~0u, 0u);
  char b;
  ssize_t n;
  do n = ::read(rd, &b, 1);
  while (n < 0 && errno == EINTR);
  if (n == 1) ::_exit(0);  // the supervisor removed them itself
  for (int i = 0; i < p.n; ++i) {
    if (p.kind[i] == Sentinel::Kind::cgroup) remove_cgroup(p.path[i]);
    else remove_private_dir(p.path[i]);  // landlock_only.cc: no allocation, no link followed
  }
  ::_exit(0);
}

}  // namespace

int Sentinel::start(const std::vector<std::pair<Kind, std::string>>& paths) {
  Paths p;
  for (const auto& [kind, path] : paths) {
    if (p.n == kMax || path.size() >= sizeof p.path[0]) return ENAMETOOLONG;
    std::memcpy(p.path[p.n], path.c_str(), path.size() + 1);
    p.kind[p.n++] = kind;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return e;
  }
  if (pid == 0) sentinel_main(fds[0], p);
  ::close(fds[0]);
  pipe_.reset(fds[1]);
  pid_ = pid;
  return 0;
}

void Sentinel::release() {
  if (pid_ <= 0) return;
  char go = 'q';
  if (::write(pipe_.get(), &go, 1) != 1) { /* it is gone already */ }
  pipe_.reset();
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

}  // namespace cage::lx
