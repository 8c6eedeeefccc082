// The seccomp profiles as data: seccomp/*.txt parse, every entry says why, the default profile
// holds everything issue #3 requires, and the BPF embedded in cage is exactly what libseccomp
// builds from the data files today (so a stale generated table cannot ship).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <span>
#include <set>
#include <sstream>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "linux/open_nofollow.h"
#include "linux/seccomp.h"
#include "linux/seccomp_profiles.h"
#include "linux/seccomp_rules.h"

namespace cage::lx::seccomp {
namespace {

std::string data_file(const std::string& name) {
  std::ifstream in(std::string(CAGE_SOURCE_DIR) + "/seccomp/" + name + ".txt");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Profile load(const std::string& name) {
  auto p = parse_profile(data_file(name), "seccomp/" + name + ".txt");
  EXPECT_TRUE(p) << p.error().input << ": " << p.error().reason;
  return p ? *p : Profile{};
}

// A profile as cage loads it: floor.txt's rules first ("none" is the floor alone).
Profile full(const std::string& name) {
  auto floor = load("floor");
  return name == "none" ? floor : with_floor(floor, load(name));
}

const Rule* find(const Profile& p, const std::string& name, Action a) {
  for (const auto& r : p.rules)
    if (r.name == name && r.action == a) return &r;
  return nullptr;
}

TEST(SeccompData, BothProfilesParseAndEveryEntryHasAReason) {
  for (const char* name : {"floor", "default", "relaxed"}) {
    auto p = load(name);
    EXPECT_FALSE(p.rules.empty()) << name;
    for (const auto& r : p.rules) EXPECT_FALSE(r.why.empty()) << name << ":" << r.line << " " << r.name;
    EXPECT_TRUE(unknown_everywhere(p).empty()) << name;
  }
}

TEST(SeccompData, DefaultDeniesWhatTheIssueRequires) {
  auto p = full("default");
  for (const char* n :
       {"ptrace", "process_vm_readv", "process_vm_writev", "kexec_load", "kexec_file_load", "init_module",
        "finit_module", "delete_module", "keyctl", "add_key", "request_key", "mount", "umount2", "pivot_root",
        "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr", "swapon",
        "swapoff", "reboot", "acct", "quotactl", "userfaultfd", "bpf", "perf_event_open", "setns", "unshare",
        "clone", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_by_handle_at",
        "name_to_handle_at", "lookup_dcookie", "nfsservctl", "migrate_pages", "move_pages", "personality",
        "ioctl", "socket", "vmsplice"})
    EXPECT_NE(find(p, n, Action::eperm), nullptr) << n;
  EXPECT_NE(find(p, "clone3", Action::enosys), nullptr);
  for (const char* n : {"iopl", "ioperm", "clock_settime", "settimeofday", "adjtimex", "clock_adjtime"})
    EXPECT_NE(find(p, n, Action::kill), nullptr) << n;
  EXPECT_EQ(p.compat, Compat::deny);
}

TEST(SeccompData, ArgumentRulesCompareWhatTheKernelReads) {
  auto p = load("floor");
  // ioctl's cmd is an unsigned int: bits 32..63 must not let TIOCSTI past the filter.
  int ioctl_rules = 0;
  for (const auto& r : p.rules)
    if (r.name == "ioctl") {
      ++ioctl_rules;
      ASSERT_EQ(r.conditions.size(), 1u);
      EXPECT_TRUE(r.conditions[0].low32);
      EXPECT_EQ(r.conditions[0].arg, 1u);
    }
  EXPECT_EQ(ioctl_rules, 4 + 37 + 3);  // TIOCSTI, TIOCLINUX, TIOCSETD, TIOCEXCL, the console's setters, fscrypt keys
  p = load("default");
  const Rule* clone = find(p, "clone", Action::eperm);
  ASSERT_NE(clone, nullptr);
  ASSERT_EQ(clone->conditions.size(), 1u);
  EXPECT_EQ(clone->conditions[0].op, Op::any_bit);
  EXPECT_EQ(clone->conditions[0].values[0] & 0x10000000u, 0x10000000u);  // CLONE_NEWUSER
}

TEST(SeccompData, RelaxedBlocksOnlyTheMachineWideCalls) {
  auto p = load("relaxed");
  std::set<std::string> names;
  for (const auto& r : p.rules) names.insert(r.name);
  EXPECT_EQ(names, (std::set<std::string>{"reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module",
                                          "delete_module", "swapon", "swapoff"}));
}

TEST(SeccompData, TheFloorHoldsUnderEveryProfile) {
  auto floor = load("floor");
  std::set<std::string> names;
  for (const auto& r : floor.rules) names.insert(r.name);
  EXPECT_EQ(names, (std::set<std::string>{"ioctl", "socket", "chmod", "fchmod", "fchmodat", "fchmodat2", "open",
                                          "openat", "creat", "mknod", "mknodat", "openat2", "fcntl", "fcntl64", "io_uring_setup", "io_uring_enter", "io_uring_register"}));
  EXPECT_EQ(floor.compat, Compat::filter);  // --seccomp none runs 32-bit programs
  EXPECT_NE(find(floor, "openat2", Action::enosys), nullptr);
  for (const char* name : {"default", "relaxed"}) {
    auto p = full(name);
    ASSERT_GE(p.rules.size(), floor.rules.size());
    for (size_t i = 0; i < floor.rules.size(); ++i) EXPECT_EQ(p.rules[i].line, floor.rules[i].line) << name;
  }
  // The set-id rules only for the setuid and setgid bits (a program planted on the host for any user).
  for (const auto& r : floor.rules)
    if (r.name.find("chmod") != std::string::npos || r.name.find("mknod") != std::string::npos || r.name == "creat") {
      ASSERT_EQ(r.conditions.size(), 1u) << r.name;
      EXPECT_EQ(r.conditions[0].op, Op::any_bit);
      EXPECT_EQ(r.conditions[0].values[0], static_cast<uint64_t>(S_ISUID | S_ISGID)) << r.name;
    }
}

TEST(SeccompParse, RejectsMissingReasonsTyposAndBadConditions) {
  auto no_reason = parse_profile("%compat deny # x\nptrace eperm\n", "t.txt");
  ASSERT_FALSE(no_reason);
  EXPECT_EQ(no_reason.error().input, "t.txt:2");
  EXPECT_FALSE(parse_profile("%compat deny # x\nptrace deny # y\n", "t.txt"));
  EXPECT_FALSE(parse_profile("%compat deny # x\nioctl eperm a1 == NOT_A_CONSTANT # y\n", "t.txt"));
  EXPECT_FALSE(parse_profile("%compat deny # x\nsocket eperm a0 == 1 a0 == 2 # y\n", "t.txt"));
  EXPECT_FALSE(parse_profile("%compat deny # x\nioctl eperm a1:32 == 0x100000000 # y\n", "t.txt"));
  EXPECT_FALSE(parse_profile("ptrace eperm # no compat line\n", "t.txt"));
  EXPECT_FALSE(parse_profile("%compat deny # x\nsocket eperm a0:32 notin 5..1 # y\n", "t.txt"));
  // Masked arguments take == and in, inside the mask; < and > compare the whole register.
  EXPECT_FALSE(parse_profile("%compat deny # x\nsocket eperm a1&0xf != 2 # y\n", "t.txt"));
  EXPECT_FALSE(parse_profile("%compat deny # x\nsocket eperm a1&0xf in 1,16 # y\n", "t.txt"));
  EXPECT_FALSE(parse_profile("%compat deny # x\nsocket eperm a0:32 < 2 # y\n", "t.txt"));
  EXPECT_FALSE(parse_profile("%compat deny # x\n%when Share_Net # y\n", "t.txt"));
  auto in = parse_profile("%compat native # x\n%when !a # y\nsocket eperm a1&0xf in 0,2..4 # z\n", "t.txt");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->rules[0].when, "!a");
  EXPECT_EQ(in->rules[0].conditions[0].mask, 0xfu);
  EXPECT_EQ(in->rules[0].conditions[0].values, (std::vector<uint64_t>{0, 2, 3, 4}));
  EXPECT_EQ(unknown_conditions(*in, {"b"}), std::vector<std::string>{"t.txt:3 %when !a"});
  // A syscall number is the native ABI's: refused where other ABIs are filtered alike.
  auto number = parse_profile("%compat filter # x\n463 eperm # y\n", "t.txt");
  ASSERT_TRUE(number);
  EXPECT_TRUE(unknown_everywhere(*number).empty());
  EXPECT_FALSE(compile_profile(*number, *arch_set(CAGE_SECCOMP_ARCH)));
  auto range = parse_profile("%compat deny # x\nsocket eperm a0:32 notin 0..AF_MCTP # y\n", "t.txt");
  ASSERT_TRUE(range);
  EXPECT_EQ(range->rules[0].conditions[0].values.size(), 46u);
  auto typo = parse_profile("%compat deny # x\nptarce eperm # y\n", "t.txt");
  ASSERT_TRUE(typo);
  EXPECT_EQ(unknown_everywhere(*typo), std::vector<std::string>{"t.txt:2 ptarce"});
  // Known on some architecture but not this one: kept in the data, skipped in the filter.
  auto other_arch = parse_profile("%compat deny # x\nstime kill # y\n", "t.txt");
  ASSERT_TRUE(other_arch);
  EXPECT_TRUE(unknown_everywhere(*other_arch).empty());
}

bool same_bpf(const std::vector<sock_filter>& a, std::span<const sock_filter> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const sock_filter& x, const sock_filter& y) {
    return x.code == y.code && x.jt == y.jt && x.jf == y.jf && x.k == y.k;
  });
}

TEST(SeccompBuild, EmbeddedFiltersMatchTheDataFiles) {
  auto arches = arch_set(CAGE_SECCOMP_ARCH);
  ASSERT_TRUE(arches);
  EXPECT_EQ(embedded_arch(), CAGE_SECCOMP_ARCH);
  for (auto [name, profile] : {std::pair{"default", policy::SeccompProfile::default_profile},
                               std::pair{"relaxed", policy::SeccompProfile::relaxed},
                               std::pair{"none", policy::SeccompProfile::none}}) {
    auto bpf = compile_profile(full(name), *arches);
    ASSERT_TRUE(bpf) << bpf.error().reason;
    auto embedded = embedded_filter(profile);
    ASSERT_EQ(bpf->size(), embedded.size()) << name << ": rebuild cage, the generated table is stale";
    EXPECT_TRUE(std::equal(embedded.begin(), embedded.end(), bpf->begin(), [](const sock_filter& a, const sock_filter& b) {
      return a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == b.k;
    })) << name;
  }
}

// The Landlock-only supplement: each of its four variants is what libseccomp builds from
// seccomp/landlock_only.txt today (first proved identical to the hand-written builder it replaced),
// and build_landlock_only_supplement hands out the one the run asks for.
TEST(SeccompBuild, LandlockOnlyVariantsMatchTheDataFile) {
  auto arches = arch_set(CAGE_SECCOMP_ARCH);
  ASSERT_TRUE(arches);
  Profile data = load("landlock_only");
  EXPECT_TRUE(unknown_conditions(data, {"share-net", "allow-metadata"}).empty());
  for (bool share_net : {false, true})
    for (bool metadata : {false, true}) {
      std::vector<std::string> on;
      if (share_net) on.push_back("share-net");
      if (metadata) on.push_back("allow-metadata");
      auto bpf = compile_profile(select_when(data, on), *arches);
      ASSERT_TRUE(bpf) << bpf.error().reason;
      auto prog = build_landlock_only_supplement(share_net, metadata);
      ASSERT_TRUE(prog);
      EXPECT_TRUE(same_bpf(*bpf, embedded_landlock_only(share_net, metadata))) << share_net << metadata;
      EXPECT_TRUE(same_bpf(*bpf, prog->filter)) << share_net << metadata;
    }
}

// What each %when section holds: listen and Fast Open only without the host's network, the
// metadata calls only unless --allow-degraded=metadata, the rest always.
TEST(SeccompData, LandlockOnlySectionsSelectByRun) {
  Profile data = load("landlock_only");
  EXPECT_EQ(data.compat, Compat::native);
  auto has = [](const Profile& p, const std::string& name) {
    return find(p, name, Action::eperm) != nullptr;
  };
  Profile isolated = select_when(data, {}), shared = select_when(data, {"share-net", "allow-metadata"});
  EXPECT_TRUE(has(isolated, "listen") && has(isolated, "sendto") && has(isolated, "463"));
  EXPECT_FALSE(has(shared, "listen") || has(shared, "sendto") || has(shared, "463"));
  for (const char* always : {"socket", "socketpair", "shmat", "keyctl", "prlimit64", "io_uring_setup"})
    EXPECT_TRUE(has(isolated, always) && has(shared, always)) << always;
}

TEST(SeccompBuild, BuildProgramPerProfile) {
  for (auto profile : {policy::SeccompProfile::default_profile, policy::SeccompProfile::relaxed}) {
    auto prog = build_program(SeccompPlan{profile});
    if (!prog && prog.error().cls == ErrorClass::spawn_sandbox_unavailable)
      GTEST_SKIP() << "kernel without seccomp filters: " << prog.error().reason;
    ASSERT_TRUE(prog) << prog.error().reason;
    EXPECT_FALSE(prog->filter.empty());
    EXPECT_LE(prog->filter.size(), size_t{BPF_MAXINSNS});
  }
  // --seccomp none: the floor alone, far shorter than either profile.
  auto none = build_program(SeccompPlan{policy::SeccompProfile::none});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->filter.empty());
  EXPECT_LT(none->filter.size(), build_program(SeccompPlan{policy::SeccompProfile::default_profile})->filter.size());
}

// Under the floor openat2 answers ENOSYS (cage nested in a cage); open_no_symlinks then walks the path
// and still refuses a symlink in any component, and still opens a plain path.
TEST(SeccompBuild, OpenNoSymlinksWalksWhereOpenat2IsRefused) {
  char dir[] = "/tmp/cage-nofollow.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string d = dir;
  ASSERT_EQ(mkdir((d + "/real").c_str(), 0755), 0);
  ASSERT_EQ(symlink((d + "/real").c_str(), (d + "/link").c_str()), 0);
  auto floor = build_program(SeccompPlan{policy::SeccompProfile::none});
  ASSERT_TRUE(floor);
  pid_t pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || load_program(*floor) != 0) _exit(10);
    int ok = open_no_symlinks((d + "/real").c_str(), O_PATH);
    int via_link = open_no_symlinks((d + "/link/").c_str(), O_PATH);
    int link_e = errno;
    int last_link = open_no_symlinks((d + "/link").c_str(), O_PATH);
    int last_e = errno;
    _exit(ok >= 0 && via_link < 0 && link_e == ELOOP && last_link < 0 && last_e == ELOOP ? 0 : 11);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  unlink((d + "/link").c_str());
  rmdir((d + "/real").c_str());
  rmdir(dir);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
}

TEST(SeccompBuild, CompilesForEveryTargetArchitecture) {
  // The data must build for aarch64 as well (iopl/ioperm skipped there), whatever the build host is.
  for (const char* target : {"x86_64", "aarch64"}) {
    auto arches = arch_set(target);
    ASSERT_TRUE(arches) << target;
    for (const char* name : {"default", "relaxed", "none"}) {
      auto bpf = compile_profile(full(name), *arches);
      ASSERT_TRUE(bpf) << target << " " << name << ": " << bpf.error().reason;
      EXPECT_FALSE(bpf->empty());
    }
  }
}

}  // namespace
}  // namespace cage::lx::seccomp
