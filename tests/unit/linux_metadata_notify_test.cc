// lx::metadata_notify::decide (src/linux/metadata_notify.cc) on notifications made up here, with this
// process as the "workload": the still_waiting callback (the mediator's SECCOMP_IOCTL_NOTIF_ID_VALID)
// is where the check happens, so a callback that rewrites the workload's memory shows which bytes the
// decision used: everything must be copied before that last check (seccomp_unotify(2)). And the ioctl
// route where pidfd_getfd is refused by an outer filter (Docker's default profile), in a child.
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <functional>
#include <string>

#include "common/unique_fd.h"
#include "linux/metadata_notify.h"

namespace cage::testing {
namespace {

uint64_t word(const void* p) { return reinterpret_cast<uint64_t>(p); }
uint64_t word(int v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }

// The callback standing in for the id check: it first changes the workload's memory, as a sibling
// thread (or a reused tid's new owner) could right after the check, then says "still waiting".
struct Later {
  std::function<void()> change;
};
bool change_then_valid(void* ctx) {
  static_cast<Later*>(ctx)->change();
  return true;
}

class MetadataNotify : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cage-unit-notify.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    file_ = dir_ + "/f";
    UniqueFd f(::open(file_.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    ASSERT_TRUE(f.valid());
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  static seccomp_notif request(int nr, std::initializer_list<uint64_t> args) {
    seccomp_notif r{};
    r.id = 1;
    r.pid = static_cast<uint32_t>(::getpid());
    r.data.nr = nr;
    size_t k = 0;
    for (uint64_t a : args) r.data.args[k++] = a;
    return r;
  }
  static int decide(const seccomp_notif& r, const std::vector<std::string>& writable, Later& later) {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
    return lx::metadata_notify::decide(r, pidfd.get(), writable, change_then_valid, &later);
  }
  // FS_IOC_GETFLAGS, or -1 where the filesystem keeps no inode flags.
  int flags() const {
    UniqueFd f(::open(file_.c_str(), O_RDONLY | O_CLOEXEC));
    int v = 0;
    return f.valid() && ::ioctl(f.get(), FS_IOC_GETFLAGS, &v) == 0 ? v : -1;
  }

  std::string dir_, file_;
};

TEST_F(MetadataNotify, TimestampsAreCopiedBeforeTheLastIdCheck) {
  timespec ts[2] = {{1000, 0}, {2000, 0}};
  auto r = request(SYS_utimensat, {word(AT_FDCWD), word(file_.c_str()), word(ts), 0});
  Later later{[&] { ts[0] = ts[1] = {5000, 0}; }};
  ASSERT_EQ(decide(r, {dir_}, later), 0);
  struct stat st {};
  ASSERT_EQ(::stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 2000) << "the times were read after the id check";
}

TEST_F(MetadataNotify, XattrNameAndValueAreCopiedBeforeTheLastIdCheck) {
  char name[] = "user.cage";
  char value[] = "good";
  auto r = request(SYS_setxattr, {word(file_.c_str()), word(name), word(value), 4, 0});
  Later later{[&] { name[5] = 'x', value[0] = 'b'; }};
  int e = decide(r, {dir_}, later);
  if (e == EOPNOTSUPP) GTEST_SKIP() << dir_ << " keeps no user xattrs";
  ASSERT_EQ(e, 0);
  char got[8] = {};
  EXPECT_EQ(::getxattr(file_.c_str(), "user.cage", got, sizeof got), 4) << "the name was read after the id check";
  EXPECT_STREQ(got, "good") << "the value was read after the id check";
}

TEST_F(MetadataNotify, IoctlArgumentIsCopiedBeforeTheLastIdCheck) {
  const int before = flags();
  if (before < 0) GTEST_SKIP() << dir_ << " keeps no inode flags";
  UniqueFd f(::open(file_.c_str(), O_RDONLY | O_CLOEXEC));
  int arg = before | FS_NODUMP_FL;
  auto r = request(SYS_ioctl, {word(f.get()), FS_IOC_SETFLAGS, word(&arg)});
  Later later{[&] { arg = before; }};
  ASSERT_EQ(decide(r, {dir_}, later), 0);
  EXPECT_NE(flags() & FS_NODUMP_FL, 0) << "the argument was read after the id check";
}

// In a child under a filter refusing pidfd_getfd (EPERM, as Docker's default profile does without
// CAP_SYS_PTRACE): the exit code is decide()'s answer for FS_IOC_SETFLAGS +nodump on `path`.
int setflags_without_pidfd_getfd(const std::string& path, const std::vector<std::string>& writable) {
  pid_t pid = ::fork();
  if (pid == 0) {
    sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_getfd, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog fprog{static_cast<unsigned short>(sizeof prog / sizeof prog[0]), prog};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0)
      ::_exit(200);
    if (::syscall(SYS_pidfd_getfd, -1, 0, 0) == 0 || errno != EPERM) ::_exit(201);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    int arg = 0;
    if (fd < 0 || ::ioctl(fd, FS_IOC_GETFLAGS, &arg) != 0) ::_exit(202);
    arg |= FS_NODUMP_FL;
    seccomp_notif r{};
    r.pid = static_cast<uint32_t>(::getpid());
    r.data.nr = SYS_ioctl;
    r.data.args[0] = static_cast<uint64_t>(fd);
    r.data.args[1] = FS_IOC_SETFLAGS;
    r.data.args[2] = word(&arg);
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
    ::_exit(lx::metadata_notify::decide(r, pidfd, writable, [](void*) { return true; }, nullptr));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

// Found under Docker's default profile: chattr in --rw failed (EACCES) where pidfd_getfd is refused.
// The file is reopened from /proc instead; outside the writable places it stays refused.
TEST_F(MetadataNotify, IoctlWithoutPidfdGetfdReopensTheSameFile) {
  if (flags() < 0) GTEST_SKIP() << dir_ << " keeps no inode flags";
  EXPECT_EQ(setflags_without_pidfd_getfd(file_, {"/nonexistent"}), EACCES);
  EXPECT_EQ(flags() & FS_NODUMP_FL, 0);
  EXPECT_EQ(setflags_without_pidfd_getfd(file_, {dir_}), 0);
  EXPECT_NE(flags() & FS_NODUMP_FL, 0);
}

}  // namespace
}  // namespace cage::testing
