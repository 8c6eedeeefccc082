// `cage --self-test` on POSIX hosts (Linux, macOS): the Host the portable check list needs (this
// binary's path, a scratch directory under $HOME, a loopback listener, a process runner that
// captures output), and the probe's TCP client.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

#include "backend/backend.h"
#include "common/exit_status.h"
#include "selftest/checks.h"
#include "common/unique_fd.h"

extern char** environ;

namespace cage {

namespace {

std::string self_exe() {
  char buf[PATH_MAX];
#if defined(__APPLE__)
  uint32_t size = sizeof buf;
  if (_NSGetExecutablePath(buf, &size) != 0) return {};
  char real[PATH_MAX];
  return ::realpath(buf, real) ? std::string(real) : std::string(buf);
#else
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
#endif
}

int run_captured(const std::vector<std::string>& args, const selftest::EnvList& extra, std::string& output) {
  std::vector<std::string> env_text;
  for (char** e = environ; e && *e; ++e) env_text.emplace_back(*e);
  for (const auto& [k, v] : extra) env_text.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  int p[2];
  if (::pipe(p) != 0) return -1;
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::dup2(p[1], 1);
    ::dup2(p[1], 2);
    ::close(p[0]);
    ::close(p[1]);
    if (::chdir("/") != 0) _exit(exit_status::kCageError);
    ::execve(argv[0], argv.data(), envp.data());
    _exit(exit_status::kNotFound);
  }
  ::close(p[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) != 0)
    if (n > 0) output.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR) break;
  ::close(p[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return exit_status::of_wait(st, -1);
}

int listen_loopback(uint16_t& port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return -1;
  ::fcntl(s, F_SETFD, FD_CLOEXEC);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s, 64) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(s);
    return -1;
  }
  port = ntohs(a.sin_port);
  return s;
}

}  // namespace

namespace selftest {

int probe_tcp(const std::string& host, uint16_t port, const std::string& out, const std::string& until,
              std::string& in) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) return EINVAL;  // the checks use IPv4 literals
  UniqueFd s(::socket(AF_INET, SOCK_STREAM, 0));
  if (!s.valid()) return errno;
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return errno;
  for (size_t off = 0; off < out.size();) {
    ssize_t n = ::send(s.get(), out.data() + off, out.size() - off, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    off += static_cast<size_t>(n);
  }
  if (until.empty()) return 0;
  while (in.find(until) == std::string::npos && in.size() < 4096) {
    pollfd p{s.get(), POLLIN, 0};
    if (::poll(&p, 1, 10'000) <= 0) return ETIMEDOUT;
    char buf[1024];
    ssize_t n = ::recv(s.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace selftest

namespace backend {

// Shared by the Linux and macOS backends' self_test().
int posix_self_test(bool json) {
  selftest::Host h;
  h.exe = self_exe();
  const char* home = std::getenv("HOME");
  if (h.exe.empty() || !home || home[0] != '/')
    return fail(unavailable("--self-test", "cannot find this binary or $HOME", "run it from a normal login shell"),
                json);
  std::string tmpl = std::string(home) + "/.cage-self-test.XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    return fail(unavailable("--self-test", "cannot create a scratch directory in " + std::string(home),
                            "check that $HOME is writable", errno),
                json);
  h.scratch = tmpl;
  UniqueFd listener(listen_loopback(h.listen_port));
  int status = exit_status::kCageError;
  if (!listener.valid()) {
    status = fail(unavailable("--self-test", "cannot listen on 127.0.0.1", "check the loopback interface", errno),
                  json);
  } else {
    h.run = run_captured;
    status = selftest::run(h, json);
  }
  std::error_code ec;
  std::filesystem::remove_all(h.scratch, ec);
  return status;
}

}  // namespace backend

}  // namespace cage
