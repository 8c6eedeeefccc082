// Landlock (child side, in the workload just before exec): a second, independent layer over the
// mount view, of whatever ABI the kernel has (none: plan.abi 0, namespaces confine alone). Every
// access right that ABI knows is handled; the plan's rules grant list, read(+exec) or write per
// path; TCP only where the plan asks (landlock_only, and the shim's own domain); (ABI 6) signals and
// abstract unix sockets scoped to the sandbox. Proved by tests/escape/ and integration/landlock_only_sockets.sh.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "linux/open_nofollow.h"
#include "linux/child.h"

namespace cage::lx {

namespace {

// The kernel's UAPI, spelled out here because the distribution's headers may predate the ABI the
// running kernel offers.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));
struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};
constexpr int kRulePathBeneath = 1, kRuleNetPort = 2;

constexpr uint64_t kExecute = 1ULL << 0, kWriteFile = 1ULL << 1, kReadFile = 1ULL << 2, kReadDir = 1ULL << 3,
                   kRemoveDir = 1ULL << 4, kRemoveFile = 1ULL << 5, kMakeChar = 1ULL << 6, kMakeDir = 1ULL << 7,
                   kMakeReg = 1ULL << 8, kMakeSock = 1ULL << 9, kMakeFifo = 1ULL << 10, kMakeBlock = 1ULL << 11,
                   kMakeSym = 1ULL << 12, kRefer = 1ULL << 13, kTruncate = 1ULL << 14, kIoctlDev = 1ULL << 15;
constexpr uint64_t kNetBindTcp = 1ULL << 0, kNetConnectTcp = 1ULL << 1;
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0, kScopeSignal = 1ULL << 1;

uint64_t fs_rights_of_abi(int abi) {
  uint64_t all = (kMakeSym << 1) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) all |= kRefer;
  if (abi >= 3) all |= kTruncate;
  if (abi >= 5) all |= kIoctlDev;
  return all;
}

uint64_t rights_for(Access a, bool is_dir, uint64_t handled, bool exec_listed_only) {
  const uint64_t read = kReadFile | kReadDir;
  const uint64_t write = kWriteFile | kRemoveDir | kRemoveFile | kMakeDir | kMakeReg | kMakeSock | kMakeFifo |
                         kMakeSym | kRefer | kTruncate;
  uint64_t r = 0;
  switch (a) {
    case Access::list: r = kReadDir; break;
    case Access::read: r = read; break;
    case Access::read_exec: r = read | kExecute; break;
    case Access::write: r = read | kExecute | write; break;
    case Access::dev_rw: r = read | kWriteFile | kTruncate | kIoctlDev; break;
    case Access::exec: r = read | kExecute; break;
  }
  if (exec_listed_only && a != Access::exec) r &= ~kExecute;
  if (!is_dir) r &= kExecute | kReadFile | kWriteFile | kTruncate | kIoctlDev;
  return r & handled;
}

// LandlockPlan::stdio: a rule on each file alone (not its directory), never more than the descriptor
// the workload holds now gives; the workload could already read or write, and ftruncate, through
// the descriptor itself. A rule the kernel refuses (a file of an internal mount, such as a memfd,
// which Landlock does not mediate) is no loss: a missing allow never widens.
void add_stdio_rules(const std::vector<StdioFile>& stdio, int rs, uint64_t handled) {
  for (const auto& f : stdio) {
    struct stat st{};
    const int fl = ::fcntl(f.fd, F_GETFL);
    if (fl < 0 || (fl & O_PATH) || ::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const int mode = fl & O_ACCMODE;
    uint64_t a = 0;
    if (f.read && (mode == O_RDONLY || mode == O_RDWR)) a |= kReadFile;
    if (f.write && (mode == O_WRONLY || mode == O_RDWR)) a |= kWriteFile | kTruncate;
    PathBeneathAttr pb{a & handled, f.fd};
    if (pb.allowed_access) ::syscall(SYS_landlock_add_rule, rs, kRulePathBeneath, &pb, 0);
  }
}

}  // namespace

int landlock_restrict(const LandlockPlan& plan, ChildStep* step, int* failed_index) {
  *failed_index = -1;
  if (plan.abi < 1) return 0;  // compile decided there is no Landlock layer (never for landlock_only)
  const uint64_t handled = fs_rights_of_abi(plan.abi);
  RulesetAttr attr{handled, 0, 0};
  size_t attr_size = sizeof(uint64_t);
  if (plan.abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    attr_size = 2 * sizeof(uint64_t);
  }
  if (plan.abi >= 6) {
    if (plan.scope_abstract_unix) attr.scoped |= kScopeAbstractUnix;
    if (plan.scope_signals) attr.scoped |= kScopeSignal;
    attr_size = sizeof attr;
  }
  // Under namespaces the network namespace is the boundary and the workload's own loopback servers
  // (test suites, databases) must work, with --net as without: TCP is handled only where the plan
  // asks for it (landlock_only, which shares the host's network, and the shim).
  if (plan.connect_tcp.empty() && !plan.deny_all_tcp && plan.abi >= 4) attr.handled_access_net = 0;
  *step = ChildStep::landlock_create;
  int rs = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0));
  if (rs < 0) return errno;
  *step = ChildStep::landlock_rule;
  for (size_t i = 0; i < plan.rules.size(); ++i) {
    const auto& r = plan.rules[i];
    int fd;
    if (plan.no_symlinks) {
      fd = open_no_symlinks(r.path.c_str(), O_PATH);  // also nested in a cage (openat2: ENOSYS)
    } else {
      fd = ::open(r.path.c_str(), O_PATH | O_CLOEXEC);
    }
    if (fd < 0) {
      if (errno == ENOENT) continue;  // e.g. /dev/tty missing on the host: nothing to grant
      *failed_index = static_cast<int>(i);
      ::close(rs);
      return errno;
    }
    PathBeneathAttr pb{rights_for(r.access, r.is_dir, handled, plan.exec_listed_only), fd};
    long rc = pb.allowed_access ? ::syscall(SYS_landlock_add_rule, rs, kRulePathBeneath, &pb, 0) : 0;
    int e = errno;
    ::close(fd);
    if (rc != 0) {
      *failed_index = static_cast<int>(i);
      ::close(rs);
      return e;
    }
  }
  add_stdio_rules(plan.stdio, rs, handled);
  for (uint16_t port : plan.connect_tcp) {
    NetPortAttr np{kNetConnectTcp, port};
    if (::syscall(SYS_landlock_add_rule, rs, kRuleNetPort, &np, 0) != 0) {
      int e = errno;
      ::close(rs);
      return e;
    }
  }
  *step = ChildStep::landlock_restrict;
  long rc = ::syscall(SYS_landlock_restrict_self, rs, 0);
  int e = errno;
  ::close(rs);
  return rc == 0 ? 0 : e;
}

}  // namespace cage::lx
