// plan_fill: which steps beneath the curated /etc the supervisor creates (and which wait for it), and
// fill_tmpfs creating them for real beneath a directory of the test's, as it does beneath init's tmpfs.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "linux/child.h"

namespace cage::testing {
namespace {

using lx::FillRole;
using lx::MountKind;
using lx::MountStep;

MountStep step(MountKind k, std::string target, std::string source = "", std::string content = "") {
  MountStep s;
  s.kind = k;
  s.target = std::move(target);
  s.source = std::move(source);
  s.content = std::move(content);
  return s;
}

// The default view's shape: a read-only tmpfs at /etc, ten files in it, a directory with a link.
lx::Plan etc_plan() {
  lx::Plan p;
  p.init.build_root = true;
  p.mounts.push_back(step(MountKind::tmpfs, "/etc"));
  p.mounts.back().read_only = true;
  p.mounts.push_back(step(MountKind::proc, "/proc", "proc"));
  p.mounts.push_back(step(MountKind::dir, "/etc/ssl"));
  for (int i = 0; i < 10; ++i) p.mounts.push_back(step(MountKind::file, "/etc/f" + std::to_string(i), "", "x\n"));
  p.mounts.push_back(step(MountKind::symlink, "/etc/ssl/certs.pem", "../f0"));
  return p;
}

TEST(EtcFill, TheCuratedEntriesAreTheSupervisors) {
  lx::Plan p = etc_plan();
  std::vector<FillRole> roles;
  ASSERT_EQ(lx::plan_fill(p, roles), 0);
  EXPECT_EQ(roles[0], FillRole::child);  // the tmpfs itself: the child mounts it
  EXPECT_EQ(roles[1], FillRole::child);  // /proc: not beneath
  for (size_t i = 2; i < p.mounts.size(); ++i) EXPECT_EQ(roles[i], FillRole::supervisor) << p.mounts[i].target;
}

TEST(EtcFill, MountsBeneathAndWhatTheyCoverWaitForTheFill) {
  lx::Plan p = etc_plan();
  p.mounts.push_back(step(MountKind::bind_ro, "/etc/fonts", "/etc/fonts"));           // a bound /etc directory
  p.mounts.push_back(step(MountKind::bind_ro, "/etc/f3", "/home/u/hosts"));           // a grant over a copy
  p.mounts.push_back(step(MountKind::tmpfs, "/etc/scratch"));                         // --tmpfs beneath /etc
  p.mounts.push_back(step(MountKind::dir, "/etc/scratch/start"));                     // the start directory in it
  std::vector<FillRole> roles;
  ASSERT_EQ(lx::plan_fill(p, roles), 0);
  // etc_plan: 0 the tmpfs, 1 /proc, 2 /etc/ssl, 3-12 /etc/f0-f9, 13 the link; then the four above.
  EXPECT_EQ(roles[14], FillRole::deferred);    // /etc/fonts
  EXPECT_EQ(roles[15], FillRole::deferred);    // the grant at /etc/f3
  EXPECT_EQ(roles[6], FillRole::deferred);     // the copy of /etc/f3 it covers: made first, in order
  EXPECT_EQ(roles[16], FillRole::deferred);    // /etc/scratch
  EXPECT_EQ(roles[17], FillRole::deferred);    // inside a mount made later: never filled before it
  EXPECT_EQ(roles[7], FillRole::supervisor);   // /etc/f4
  EXPECT_EQ(roles[13], FillRole::supervisor);  // the link in /etc/ssl
}

TEST(EtcFill, NoFillForFewEntriesAnotherMountAtTheTopOrNoOwnRoot) {
  std::vector<FillRole> roles;
  lx::Plan few;
  few.init.build_root = true;
  few.mounts.push_back(step(MountKind::tmpfs, "/etc"));
  few.mounts.back().read_only = true;
  for (int i = 0; i < 7; ++i) few.mounts.push_back(step(MountKind::file, "/etc/f" + std::to_string(i), "", "x"));
  EXPECT_EQ(lx::plan_fill(few, roles), -1);
  for (FillRole r : roles) EXPECT_EQ(r, FillRole::child);

  lx::Plan covered = etc_plan();
  covered.mounts.push_back(step(MountKind::bind_ro, "/etc", "/srv/etc"));  // mounted over the tmpfs
  EXPECT_EQ(lx::plan_fill(covered, roles), -1);

  lx::Plan writable = etc_plan();
  writable.mounts[0].read_only = false;  // a --tmpfs of the user's: nothing of cage's in it
  EXPECT_EQ(lx::plan_fill(writable, roles), -1);

  lx::Plan landlock = etc_plan();
  landlock.init.build_root = false;
  EXPECT_EQ(lx::plan_fill(landlock, roles), -1);
}

TEST(EtcFill, FillCreatesTheEntriesBeneathTheGivenDirectoryOnly) {
  char dir[] = "/tmp/cage-fill-test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  lx::Plan p = etc_plan();
  std::vector<FillRole> roles;
  ASSERT_EQ(lx::plan_fill(p, roles), 0);
  int fd = ::open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const mode_t mask = ::umask(077);
  int failed = -1;
  EXPECT_EQ(lx::fill_tmpfs(p, roles, 0, fd, &failed), 0);
  EXPECT_EQ(::umask(mask), 077);  // the caller's umask is back
  struct stat st {};
  const std::string d(dir);
  ASSERT_EQ(::lstat((d + "/f9").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);  // not narrowed by the umask
  ASSERT_EQ(::lstat((d + "/ssl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  char link[64] = {};
  ASSERT_EQ(::readlink((d + "/ssl/certs.pem").c_str(), link, sizeof link - 1), 5);
  EXPECT_STREQ(link, "../f0");
  // A second fill finds a link where a file goes (f0 swapped for a link to outside): refused, nothing written through it.
  ASSERT_EQ(::unlink((d + "/f0").c_str()), 0);
  ASSERT_EQ(::symlink("/tmp/cage-fill-test-outside", (d + "/f0").c_str()), 0);
  EXPECT_NE(lx::fill_tmpfs(p, roles, 0, fd, &failed), 0);
  EXPECT_EQ(p.mounts[static_cast<size_t>(failed)].target, "/etc/f0");
  EXPECT_NE(::access("/tmp/cage-fill-test-outside", F_OK), 0);
  ::close(fd);
  std::string rm = std::string("rm -rf ") + dir;
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

// A mount met beneath the tmpfs (made into the sandbox's namespace before the fill, by a process of
// the caller's) is refused, not walked into; its twin without the mount is the test above.
TEST(EtcFill, FillRefusesToWalkIntoAMountBeneath) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounts need root";
  char dir[] = "/tmp/cage-fill-xdev.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string d(dir);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // a mount namespace of its own: nothing reaches the host's
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_PRIVATE | MS_REC, nullptr) != 0) _exit(2);
    if (::mkdir((d + "/ssl").c_str(), 0755) != 0 || ::mount("tmpfs", (d + "/ssl").c_str(), "tmpfs", 0, nullptr) != 0)
      _exit(3);
    lx::Plan p = etc_plan();
    std::vector<FillRole> roles;
    if (lx::plan_fill(p, roles) != 0) _exit(4);
    int fd = ::open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int failed = -1;
    const int e = lx::fill_tmpfs(p, roles, 0, fd, &failed);
    struct stat st {};
    const bool written_into_mount = ::lstat((d + "/ssl/certs.pem").c_str(), &st) == 0;
    const bool files_made = ::lstat((d + "/f9").c_str(), &st) == 0;  // before the walk met the mount
    _exit(e == EXDEV && failed >= 0 && p.mounts[static_cast<size_t>(failed)].target == "/etc/ssl/certs.pem" &&
                  !written_into_mount && files_made
              ? 0
              : 5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::string rm = std::string("rm -rf ") + dir;
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

}  // namespace
}  // namespace cage::testing
