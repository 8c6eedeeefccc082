// late_netns: the maker's namespace is a new one, and the caller is in it after join, on the real
// kernel (in a child of the test that first makes its own user namespace, as init runs in one).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "linux/late_netns.h"

namespace cage::testing {
namespace {

std::string own_netns() {
  char buf[PATH_MAX] = {};
  ssize_t n = ::readlink("/proc/self/ns/net", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

TEST(LateNetns, TheCallerJoinsANewNamespaceMadeBesideIt) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::unshare(CLONE_NEWUSER) != 0) _exit(77);  // no user namespaces here: nothing to test
    const std::string before = own_netns();
    lx::late_netns::Maker m;
    lx::late_netns::start(m);
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(__SANITIZE_ADDRESS__)
    if (m.pid <= 0) _exit(4);  // the maker did not start: join would make the namespace itself
#endif
    if (lx::late_netns::join(m) != 0) _exit(1);
    const std::string after = own_netns();
    if (before.empty() || after.empty() || before == after) _exit(2);
    // The maker is reaped: no child is left.
    _exit(::waitpid(-1, nullptr, __WALL | WNOHANG) < 0 && errno == ECHILD ? 0 : 3);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  if (WEXITSTATUS(st) == 77) GTEST_SKIP() << "user namespaces are not available";
  EXPECT_EQ(WEXITSTATUS(st), 0) << "1: join failed, 2: same namespace, 3: the maker was left, 4: no maker";
}

}  // namespace
}  // namespace cage::testing
