// cage-probe: a static helper the sandbox tests run inside cage. Each subcommand tries one thing and
// reports the raw outcome: exit 0 on success, else the errno (capped to 1..120) with "errno=N NAME"
// on stderr. `syscall NAME` calls NAME with harmless or invalid arguments that still reach the
// seccomp filter, so a test can tell EPERM (1) or ENOSYS (38) from the filter apart from the errno the
// kernel gives when the filter lets the call through. Exit 121: NAME does not exist on this architecture.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fscrypt.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr int kNotOnThisArch = 121;
using Args = std::vector<std::string>;

int report_errno(int e, const std::string& what) {
  const char* name = strerrorname_np(e);
  std::fprintf(stderr, "errno=%d %s (%s)\n", e, name ? name : "?", what.c_str());
  return e < 1 ? 1 : e > 120 ? 120 : e;
}

// The raw result of a syscall: 0 and "ok N" on success, else the errno.
int outcome(long r, const std::string& what) {
  if (r >= 0) {
    std::printf("ok %ld\n", r);
    return 0;
  }
  return report_errno(errno, what);
}

int not_on_this_arch(const std::string& name) {
  std::fprintf(stderr, "%s: not on this architecture\n", name.c_str());
  return kNotOnThisArch;
}

// Numbers or symbolic names for the arguments tests pass ("AF_ALG", "CLONE_NEWUSER|CLONE_NEWNS").
uint64_t value_of(const std::string& s) {
  static const std::map<std::string, uint64_t> names = {
      {"CLONE_NEWNS", CLONE_NEWNS},     {"CLONE_NEWUSER", CLONE_NEWUSER}, {"CLONE_NEWPID", CLONE_NEWPID},
      {"CLONE_NEWNET", CLONE_NEWNET},   {"CLONE_NEWUTS", CLONE_NEWUTS},   {"CLONE_NEWIPC", CLONE_NEWIPC},
      {"CLONE_NEWCGROUP", CLONE_NEWCGROUP}, {"CLONE_NEWTIME", 0x80},      {"CLONE_FILES", CLONE_FILES},
      {"CLONE_FS", CLONE_FS},           {"AF_UNIX", AF_UNIX},             {"AF_INET", AF_INET},
      {"AF_INET6", AF_INET6},           {"AF_NETLINK", AF_NETLINK},       {"AF_PACKET", AF_PACKET},
      {"AF_KEY", AF_KEY},               {"AF_ALG", AF_ALG},               {"AF_VSOCK", AF_VSOCK},
      {"AF_BLUETOOTH", AF_BLUETOOTH},   {"AF_XDP", 44},                   {"SOCK_STREAM", SOCK_STREAM},
      {"SOCK_DGRAM", SOCK_DGRAM},       {"SOCK_RAW", SOCK_RAW},           {"SOCK_SEQPACKET", SOCK_SEQPACKET},
      {"NETLINK_ROUTE", 0},             {"NETLINK_AUDIT", 9},             {"NETLINK_KOBJECT_UEVENT", 15},
      {"NETLINK_SOCK_DIAG", 4},         {"TIOCSTI", TIOCSTI},             {"TIOCLINUX", TIOCLINUX},
      {"FIONREAD", FIONREAD},           {"PER_LINUX", 0},                 {"PER_LINUX32", 8},
      {"ADDR_NO_RANDOMIZE", 0x0040000}, {"READ_IMPLIES_EXEC", 0x0400000}, {"MMAP_PAGE_ZERO", 0x0100000},
      {"UNAME26", 0x0020000},           {"QUERY", 0xffffffff},
      {"FS_IOC_ADD_ENCRYPTION_KEY", FS_IOC_ADD_ENCRYPTION_KEY},
      {"FS_IOC_REMOVE_ENCRYPTION_KEY", FS_IOC_REMOVE_ENCRYPTION_KEY},
      {"FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS", FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS},
      {"FS_IOC_GET_ENCRYPTION_KEY_STATUS", FS_IOC_GET_ENCRYPTION_KEY_STATUS},
  };
  uint64_t v = 0;
  size_t start = 0;
  while (start <= s.size()) {
    size_t bar = s.find('|', start);
    std::string term = s.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    auto it = names.find(term);
    v |= it != names.end() ? it->second : std::strtoull(term.c_str(), nullptr, 0);
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return v;
}

uint64_t arg_or(const Args& a, size_t i, uint64_t dflt) { return i < a.size() ? value_of(a[i]) : dflt; }

// Fork-like raw clone with the given flags; the child exits at once. Returns the parent's outcome.
int probe_clone(uint64_t flags) {
  long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (r == 0) _exit(0);
  if (r < 0) return report_errno(errno, "clone");
  int status = 0;
  waitpid(static_cast<pid_t>(r), &status, 0);
  std::printf("ok %ld\n", r);
  return 0;
}

// vhangup hangs up the caller's controlling terminal: only ever try it in a child with none.
int probe_vhangup() {
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    _exit(syscall(SYS_vhangup) == 0 ? 0 : errno);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) raise(WTERMSIG(status));  // a kill reaches the test as this process's death
  int e = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  return e == 0 ? outcome(0, "vhangup") : report_errno(e, "vhangup");
}

#if defined(__x86_64__)
// getpid through the i386 entry point: seccomp sees AUDIT_ARCH_I386.
long int80_getpid() {
  long r = 20;  // __NR_getpid on i386
  asm volatile("int $0x80" : "+a"(r) : : "memory");
  if (r < 0) errno = static_cast<int>(-r), r = -1;
  return r;
}
#endif

using Probe = std::function<int(const Args&)>;
#define RAW(nr, ...) [](const Args& a) { (void)a; return outcome(syscall(nr, __VA_ARGS__), #nr); }

// Each call is harmless if the filter lets it through: bogus pids, fds, flags or paths, queries.
const std::map<std::string, Probe>& probes() {
  static const std::map<std::string, Probe> table = {
      // other processes: a pid that cannot exist gives ESRCH when allowed
      {"ptrace", RAW(SYS_ptrace, 3 /* PTRACE_PEEKUSER */, 0x3fffffff, 0, 0)},
      {"process_vm_readv", RAW(SYS_process_vm_readv, 0x3fffffff, nullptr, 0, nullptr, 0, 0)},
      {"process_vm_writev", RAW(SYS_process_vm_writev, 0x3fffffff, nullptr, 0, nullptr, 0, 0)},
      {"process_madvise", RAW(SYS_process_madvise, -1, nullptr, 0, 0, 0)},
      {"pidfd_getfd", RAW(SYS_pidfd_getfd, -1, 0, 0)},
      // the kernel: invalid flags or magic, so nothing is loaded, unloaded or rebooted
      {"kexec_load", RAW(SYS_kexec_load, 0, 1000, nullptr, 0x8000)},
      {"kexec_file_load", RAW(SYS_kexec_file_load, -1, -1, 0, nullptr, 0x80000000UL)},
      {"init_module", RAW(SYS_init_module, nullptr, 0, "")},
      {"finit_module", RAW(SYS_finit_module, -1, "", 0)},
      {"delete_module", RAW(SYS_delete_module, "cage_probe_no_such_module", O_NONBLOCK)},
      {"reboot", RAW(SYS_reboot, 0, 0, 0, nullptr)},
      {"swapon", RAW(SYS_swapon, "/nonexistent/cage-probe", 0)},
      {"swapoff", RAW(SYS_swapoff, "/nonexistent/cage-probe")},
      {"acct", RAW(SYS_acct, "/nonexistent/cage-probe")},
      {"quotactl", RAW(SYS_quotactl, 0x7fffff00, nullptr, 0, nullptr)},
      {"quotactl_fd", RAW(SYS_quotactl_fd, -1, 0, 0, nullptr)},
      {"syslog", RAW(SYS_syslog, 10, nullptr, 0)},  // SYSLOG_ACTION_SIZE_BUFFER: a query
      {"lookup_dcookie", RAW(SYS_lookup_dcookie, 0, nullptr, 0)},
      {"fanotify_init", RAW(SYS_fanotify_init, 0xffffffff, 0)},
      {"bpf", RAW(SYS_bpf, -1, nullptr, 0)},
      {"perf_event_open", RAW(SYS_perf_event_open, nullptr, 0, -1, -1, 0)},
      {"userfaultfd", RAW(SYS_userfaultfd, 0xffffffff)},
      {"io_uring_setup", RAW(SYS_io_uring_setup, 0, nullptr)},
      {"io_uring_enter", RAW(SYS_io_uring_enter, -1, 0, 0, 0, nullptr, 0)},
      {"io_uring_register", RAW(SYS_io_uring_register, -1, 0, nullptr, 0)},
      {"keyctl", RAW(SYS_keyctl, 0x7fff, 0, 0, 0, 0)},
      {"add_key", RAW(SYS_add_key, "cage_probe_no_such_type", "x", nullptr, 0, -2)},
      {"request_key", RAW(SYS_request_key, "cage_probe_no_such_type", "x", nullptr, 0)},
      {"open_by_handle_at", RAW(SYS_open_by_handle_at, -1, nullptr, 0)},
      {"name_to_handle_at", RAW(SYS_name_to_handle_at, AT_FDCWD, "/", nullptr, nullptr, 0)},
      {"migrate_pages", RAW(SYS_migrate_pages, 0x3fffffff, 0, nullptr, nullptr)},
      {"move_pages", RAW(SYS_move_pages, 0x3fffffff, 0, nullptr, nullptr, nullptr, 0)},
      // mounts: nonexistent paths and fds
      {"mount", RAW(SYS_mount, "none", "/nonexistent/cage-probe", "cage_probe_no_such_fs", 0, nullptr)},
      {"umount2", RAW(SYS_umount2, "/nonexistent/cage-probe", 0)},
      {"pivot_root", RAW(SYS_pivot_root, "/nonexistent/cage-probe-a", "/nonexistent/cage-probe-b")},
      {"fsopen", RAW(SYS_fsopen, "cage_probe_no_such_fs", 0)},
      {"fsconfig", RAW(SYS_fsconfig, -1, 0, nullptr, nullptr, 0)},
      {"fsmount", RAW(SYS_fsmount, -1, 0, 0)},
      {"fspick", RAW(SYS_fspick, -1, "", 0)},
      {"move_mount", RAW(SYS_move_mount, -1, "", -1, "", 0)},
      {"open_tree", RAW(SYS_open_tree, -1, "/nonexistent/cage-probe", 0)},
      {"mount_setattr", RAW(SYS_mount_setattr, -1, "", 0, nullptr, 0)},
      // namespaces: these really create one when allowed (harmless: the probe exits)
      {"setns", RAW(SYS_setns, -1, 0)},
      {"unshare", [](const Args& a) { return outcome(syscall(SYS_unshare, arg_or(a, 0, CLONE_NEWUSER)), "unshare"); }},
      {"clone", [](const Args& a) { return probe_clone(arg_or(a, 0, CLONE_NEWUSER)); }},
      {"clone3", RAW(SYS_clone3, nullptr, 0)},  // EINVAL (size 0) when allowed
      {"personality", [](const Args& a) { return outcome(syscall(SYS_personality, arg_or(a, 0, 0xffffffff)), "personality"); }},
      // ioctl NAME [hi]: on fd -1 (EBADF when allowed); "hi" sets bits 32..63 of cmd, which the kernel drops
      {"ioctl",
       [](const Args& a) {
         uint64_t cmd = arg_or(a, 0, TIOCSTI) | (a.size() > 1 && a[1] == "hi" ? uint64_t{1} << 32 : 0);
         char c = 'x';
         return outcome(syscall(SYS_ioctl, -1, cmd, &c), "ioctl");
       }},
      // socket FAMILY [TYPE [PROTO]] [hi]: "hi" sets bits 32..63 of the family
      {"socket",
       [](const Args& a) {
         uint64_t hi = !a.empty() && a.back() == "hi" ? uint64_t{1} << 32 : 0;
         size_t n = a.size() - (hi ? 1 : 0);
         long fd = syscall(SYS_socket, arg_or(a, 0, AF_INET) | hi, n > 1 ? value_of(a[1]) : uint64_t{SOCK_DGRAM},
                           n > 2 ? value_of(a[2]) : 0);
         return outcome(fd, "socket");
       }},
      {"vhangup", [](const Args&) { return probe_vhangup(); }},
      {"nfsservctl", RAW(SYS_nfsservctl, 0, nullptr, nullptr)},
      // kill-listed: invalid pointers, so the clock is never changed when allowed
      {"clock_settime", RAW(SYS_clock_settime, CLOCK_REALTIME, nullptr)},
      {"settimeofday", RAW(SYS_settimeofday, nullptr, nullptr)},
      {"adjtimex", RAW(SYS_adjtimex, nullptr)},
      {"clock_adjtime", RAW(SYS_clock_adjtime, CLOCK_REALTIME, nullptr)},
      {"getpid", RAW(SYS_getpid, 0)},
#if defined(__x86_64__)
      {"iopl", RAW(SYS_iopl, 0)},                   // lowering to level 0 needs no privilege
      {"ioperm", RAW(SYS_ioperm, 0x80, 1, 0)},       // turning access off needs no privilege
      {"modify_ldt", RAW(SYS_modify_ldt, 0, nullptr, 0)},  // read
      {"uselib", RAW(SYS_uselib, "/nonexistent/cage-probe")},
      {"x32", RAW(SYS_getpid | 0x40000000, 0)},      // x32 ABI entry (bit 30 of the number)
      {"int80", [](const Args&) { return outcome(int80_getpid(), "int80 getpid"); }},
#endif
  };
  return table;
}

int cmd_syscall(const Args& a) {
  if (a.empty()) return report_errno(EINVAL, "usage: syscall NAME [args...]");
  auto it = probes().find(a[0]);
  if (it == probes().end()) {
    static const char* const elsewhere[] = {"iopl", "ioperm", "modify_ldt", "uselib", "x32", "int80",
                                            "umount", "stime", "clock_settime64", "clock_adjtime64"};
    for (const char* n : elsewhere)
      if (a[0] == n) return not_on_this_arch(a[0]);
    return report_errno(EINVAL, "unknown syscall probe " + a[0]);
  }
  return it->second(Args(a.begin() + 1, a.end()));
}

int cmd_write(const Args& a) {
  if (a.size() != 1) return report_errno(EINVAL, "usage: write PATH");
  int fd = open(a[0].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return report_errno(errno, "open " + a[0]);
  if (write(fd, "probe\n", 6) != 6) return report_errno(errno, "write " + a[0]);
  if (close(fd) != 0) return report_errno(errno, "close " + a[0]);
  std::printf("ok\n");
  return 0;
}

int cmd_read(const Args& a) {
  if (a.size() != 1) return report_errno(EINVAL, "usage: read PATH");
  int fd = open(a[0].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return report_errno(errno, "open " + a[0]);
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) return report_errno(errno, "read " + a[0]);
    if (n == 0) break;
    fwrite(buf, 1, static_cast<size_t>(n), stdout);
  }
  close(fd);
  return 0;
}

int cmd_connect(const Args& a) {
  if (a.size() != 2) return report_errno(EINVAL, "usage: connect HOST PORT");
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto port = htons(static_cast<uint16_t>(std::atoi(a[1].c_str())));
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, a[0].c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET, v4->sin_port = port, len = sizeof *v4;
  } else if (inet_pton(AF_INET6, a[0].c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6, v6->sin6_port = port, len = sizeof *v6;
  } else {
    return report_errno(EINVAL, "numeric host expected: " + a[0]);
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return report_errno(errno, "socket");
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) return report_errno(errno, "connect");
  close(fd);
  std::printf("ok\n");
  return 0;
}

int cmd_exec(const Args& a) {
  if (a.empty()) return report_errno(EINVAL, "usage: exec PATH [args...]");
  std::vector<char*> argv;
  for (const auto& s : a) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  return report_errno(errno, "exec " + a[0]);
}

// Push a character into the input queue of fd 0's terminal: what a sandboxed program would do to
// run a command in the user's shell after it exits.
int cmd_tiocsti(const Args& a) {
  const char* text = a.empty() ? "x" : a[0].c_str();
  for (const char* p = text; *p; ++p)
    if (ioctl(0, TIOCSTI, p) != 0) return report_errno(errno, "ioctl(0, TIOCSTI)");
  std::printf("ok\n");
  return 0;
}

// Run CMD under a seccomp filter like the default profiles of Docker and Kubernetes: unshare and
// clone with CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS (so libc falls back to clone). For
// tests of hosts that block user namespaces.
int cmd_deny_userns(const Args& a) {
  if (a.empty()) return report_errno(EINVAL, "deny-userns CMD [args]");
#if defined(__x86_64__)
  constexpr uint32_t arch = AUDIT_ARCH_X86_64;
#else
  constexpr uint32_t arch = AUDIT_ARCH_AARCH64;
#endif
  sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof f / sizeof *f), f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return report_errno(errno, "seccomp");
  std::vector<char*> argv;
  for (const auto& s : a) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  return report_errno(errno, "exec " + a[0]);
}

// Run CMD as on a kernel without Landlock (built with it, but not in lsm=): the three Landlock calls
// fail with EOPNOTSUPP, as that kernel answers. A stand-in for such a host in tests of the namespaces
// mechanism, made from outside cage: cage itself has no switch that weakens a real run.
int cmd_no_landlock(const Args& a) {
  if (a.empty()) return report_errno(EINVAL, "no-landlock CMD [args]");
#if defined(__x86_64__)
  constexpr uint32_t arch = AUDIT_ARCH_X86_64;
#else
  constexpr uint32_t arch = AUDIT_ARCH_AARCH64;
#endif
  sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_create_ruleset, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_add_rule, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_restrict_self, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof f / sizeof *f), f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return report_errno(errno, "seccomp");
  std::vector<char*> argv;
  for (const auto& s : a) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  return report_errno(errno, "exec " + a[0]);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc < 2) {
    std::fprintf(stderr, "usage: cage-probe syscall NAME [args] | write PATH | read PATH | connect HOST PORT |"
                         " exec PATH [args] | tiocsti [TEXT] | deny-userns CMD [args] | no-landlock CMD [args]\n");
    return 2;
  }
  std::string cmd = argv[1];
  Args rest(argv + 2, argv + argc);
  if (cmd == "syscall") return cmd_syscall(rest);
  if (cmd == "write") return cmd_write(rest);
  if (cmd == "read") return cmd_read(rest);
  if (cmd == "connect") return cmd_connect(rest);
  if (cmd == "exec") return cmd_exec(rest);
  if (cmd == "tiocsti") return cmd_tiocsti(rest);
  if (cmd == "deny-userns") return cmd_deny_userns(rest);
  if (cmd == "no-landlock") return cmd_no_landlock(rest);
  return report_errno(EINVAL, "unknown command " + cmd);
}
