// --explain's judgement (linux/explain.cc): observed accesses against hand-made plans of both
// mechanisms and a fake host; the observer itself is tested by tests/integration/explain.sh.
#include <gtest/gtest.h>

#include <set>

#include "linux/explain.h"

namespace cage {
namespace {

using lx::explain::Finding;
using lx::explain::Op;
using lx::explain::Verdict;

lx::MountStep mount(lx::MountKind kind, std::string target, std::string why = "", bool read_only = false) {
  lx::MountStep m;
  m.kind = kind;
  m.source = target;
  m.target = std::move(target);
  m.why = std::move(why);
  m.read_only = read_only;
  return m;
}

// / (read-only tmpfs), /usr read-only, /w/out writable, /w/src read-only with .env hidden, /tmp private.
lx::Plan namespaces_plan() {
  lx::Plan p;
  p.mounts = {mount(lx::MountKind::tmpfs, "/", "root", true),
              mount(lx::MountKind::bind_ro, "/usr", "default view"),
              mount(lx::MountKind::dir, "/w"),
              mount(lx::MountKind::bind_rw, "/w/out", "--rw /w/out"),
              mount(lx::MountKind::bind_ro, "/w/src", "--ro /w/src"),
              mount(lx::MountKind::hide, "/w/src/.env", "--hide /w/src/.env"),
              mount(lx::MountKind::tmpfs, "/tmp", "private /tmp")};
  return p;
}

struct Host {
  std::set<std::string> files, dirs;
  lx::explain::HostKind kind() const {
    return [this](const std::string& p) { return dirs.count(p) ? 2 : files.count(p) ? 1 : 0; };
  }
};

Host host() {
  return Host{{"/w/secret", "/w/src/.env", "/w/src/a.c", "/home/u/.npmrc", "/usr/bin/git", "/w/cfg/a",
               "/w/cfg/b", "/w/cfg/c"},
              {"/w", "/w/src", "/w/out", "/w/build", "/home/u", "/usr", "/usr/bin", "/w/cfg", "/tmp"}};
}

lx::explain::Accesses accesses(std::vector<std::pair<Op, std::string>> list) {
  lx::explain::Accesses a;
  uint64_t order = 0;
  for (auto& [op, path] : list) a[{op, path}] = lx::explain::Seen{1, 7, "prog", order++};
  return a;
}

const Finding* find(const std::vector<Finding>& all, Op op, const std::string& path) {
  for (const auto& f : all)
    if (f.op == op && f.path == path) return &f;
  return nullptr;
}

TEST(LinuxExplain, HiddenHostFileIsSuggestedReadOnly) {
  Host h = host();
  auto found = lx::explain::classify(namespaces_plan(), accesses({{Op::read, "/w/secret"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, Verdict::hidden);
  EXPECT_EQ(found[0].remedy, "--ro /w/secret");
  EXPECT_EQ(found[0].comm, "prog");
  EXPECT_EQ(lx::explain::render_text(found, 0),
            "cage: explain: read /w/secret: hidden (1x, first prog[7]); allow with --ro /w/secret\n");
}

TEST(LinuxExplain, AncestorsOfAMountExist) {
  Host h = host();
  lx::Plan plan = namespaces_plan();
  plan.mounts.push_back(mount(lx::MountKind::bind_ro, "/home/u/proj/sub", "--ro /home/u/proj/sub"));
  auto found = lx::explain::classify(plan, accesses({{Op::stat, "/home/u/proj"}, {Op::stat, "/home/u"}}), h.kind());
  EXPECT_TRUE(found.empty());
}

TEST(LinuxExplain, GrantedAccessesAreNotListed) {
  Host h = host();
  auto found = lx::explain::classify(namespaces_plan(),
                                     accesses({{Op::read, "/w/src/a.c"},
                                               {Op::create, "/w/out/x"},
                                               {Op::exec, "/usr/bin/git"},
                                               {Op::create, "/tmp/f"}}),
                                     h.kind());
  EXPECT_TRUE(found.empty());
}

// A stdio file opened again by its name (/dev/stdout) is the workload's for its descriptor's access
// (LandlockPlan::stdio): not listed; a read of a write-only one still is.
TEST(LinuxExplain, StdioFilesAreTheirDescriptorsAccess) {
  Host h = host();
  lx::Plan plan = namespaces_plan();
  plan.landlock.stdio.push_back(lx::StdioFile{1, "/w/secret", false, true});
  auto found = lx::explain::classify(plan, accesses({{Op::create, "/w/secret"}, {Op::write, "/w/secret"}}), h.kind());
  EXPECT_TRUE(found.empty());
  found = lx::explain::classify(plan, accesses({{Op::read, "/w/secret"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, Verdict::hidden);
}

// git from a subdirectory granted as its own mount stops at that mount: the repository's .git above
// is named with its repository's grant, though git never looked there.
TEST(LinuxExplain, RepositoryAboveTheWorkingDirectoryIsNamed) {
  Host h = host();
  h.dirs.insert({"/w/repo", "/w/repo/.git", "/w/repo/sub"});
  lx::Plan plan = namespaces_plan();
  plan.mounts.push_back(mount(lx::MountKind::bind_ro, "/w/repo/sub", "working directory"));
  auto found = lx::explain::classify(plan, accesses({{Op::stat, "/w/repo/sub/.git"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, "/w/repo/.git");
  EXPECT_EQ(found[0].verdict, Verdict::hidden);
  EXPECT_EQ(found[0].remedy, "--ro /w/repo");
  // Granted, or no repository above: nothing.
  plan.mounts.push_back(mount(lx::MountKind::bind_ro, "/w/repo", "--ro /w/repo"));
  EXPECT_TRUE(lx::explain::classify(plan, accesses({{Op::stat, "/w/repo/sub/.git"}}), h.kind()).empty());
  EXPECT_TRUE(lx::explain::classify(namespaces_plan(), accesses({{Op::stat, "/w/src/.git"}}), h.kind()).empty());
}

TEST(LinuxExplain, WriteBeneathReadOnlyGrantSuggestsItsDirectoryWritable) {
  Host h = host();
  auto found = lx::explain::classify(namespaces_plan(), accesses({{Op::create, "/w/src/a.o"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, Verdict::read_only);
  EXPECT_EQ(found[0].remedy, "--rw /w/src");
}

TEST(LinuxExplain, WriteIntoHiddenHostDirectorySuggestsIt) {
  Host h = host();
  auto found = lx::explain::classify(namespaces_plan(), accesses({{Op::create, "/w/build/x.o"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, Verdict::hidden);
  EXPECT_EQ(found[0].remedy, "--rw /w/build");
}

TEST(LinuxExplain, DirectoryTheWorkloadMadeItselfIsNotHidden) {
  Host h = host();
  h.dirs.insert("/tmp/cache");  // the host has one too, by chance
  auto found = lx::explain::classify(
      namespaces_plan(), accesses({{Op::create, "/tmp/cache"}, {Op::create, "/tmp/cache/f"}}), h.kind());
  EXPECT_TRUE(found.empty());
}

TEST(LinuxExplain, HiddenByPolicyIsNamedNotSuggested) {
  Host h = host();
  auto found = lx::explain::classify(namespaces_plan(), accesses({{Op::read, "/w/src/.env"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, Verdict::hidden_by_policy);
  EXPECT_EQ(
      lx::explain::render_text(found, 0),
      "cage: explain: read /w/src/.env: hidden by --hide /w/src/.env (1x, first prog[7]); not suggested\n");
}

TEST(LinuxExplain, AbsentOnTheHostTooIsAProbe) {
  Host h = host();
  auto found = lx::explain::classify(namespaces_plan(), accesses({{Op::stat, "/w/nothing"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, Verdict::probe);
  EXPECT_TRUE(found[0].remedy.empty());
}

TEST(LinuxExplain, ExecFoundElsewhereOnPathIsAProbe) {
  Host h = host();
  h.files.insert("/home/u/bin/git");  // earlier on PATH, hidden; the run found /usr/bin/git
  auto found = lx::explain::classify(
      namespaces_plan(), accesses({{Op::exec, "/home/u/bin/git"}, {Op::exec, "/usr/bin/git"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, Verdict::probe);
}

TEST(LinuxExplain, SeveralSiblingsFoldIntoTheirDirectory) {
  Host h = host();
  auto found = lx::explain::classify(
      namespaces_plan(), accesses({{Op::read, "/w/cfg/a"}, {Op::read, "/w/cfg/b"}, {Op::stat, "/w/cfg/c"}}),
      h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, "/w/cfg");
  EXPECT_EQ(found[0].remedy, "--ro /w/cfg");
  EXPECT_EQ(found[0].paths, 3u);
  EXPECT_EQ(found[0].count, 3u);
}

TEST(LinuxExplain, ProxyRefusalSuggestsTheNetRule) {
  Host h = host();
  auto found =
      lx::explain::classify(namespaces_plan(), accesses({{Op::connect, "example.test:443"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].remedy, "--net example.test:443");
}

// Found by an attack review: three dotfiles read were folded into `--ro /root`, the whole home. A
// home, a directory above it and / are never folded: each file is its own finding.
TEST(LinuxExplain, NoFoldIntoTheHomeOrAbove) {
  Host h = host();
  for (const char* f : {"/home/u/.bashrc", "/home/u/.profile", "/home/u/.gitconfig"}) h.files.insert(f);
  auto found = lx::explain::classify(
      namespaces_plan(),
      accesses({{Op::read, "/home/u/.bashrc"}, {Op::read, "/home/u/.profile"}, {Op::read, "/home/u/.gitconfig"}}),
      h.kind(), {}, "/home/u");
  ASSERT_EQ(found.size(), 3u);
  for (const auto& f : found) EXPECT_NE(f.remedy, "--ro /home/u") << f.path;
  ASSERT_NE(find(found, Op::read, "/home/u/.bashrc"), nullptr);
  EXPECT_EQ(find(found, Op::read, "/home/u/.bashrc")->remedy, "--ro /home/u/.bashrc");
  // Below the home, siblings still fold.
  auto cfg = lx::explain::classify(
      namespaces_plan(), accesses({{Op::read, "/w/cfg/a"}, {Op::read, "/w/cfg/b"}, {Op::stat, "/w/cfg/c"}}),
      h.kind(), {}, "/w");
  ASSERT_EQ(cfg.size(), 1u);  // /w is the home here: /w/cfg is a directory in it, not the home
  EXPECT_EQ(cfg[0].remedy, "--ro /w/cfg");
}

// The proxy's refusal names what the workload asked for: a remedy only for a host:port a shell reads
// as one word (a name with spaces and flags in it was printed as `--net evil:443 --rw /home ...`).
TEST(LinuxExplain, NetRemedyOnlyForAPlainHostAndPort) {
  Host h = host();
  auto found = lx::explain::classify(namespaces_plan(),
                                     accesses({{Op::connect, "evil.test:443 --rw /home --ro /root/.ssh #:443"},
                                               {Op::connect, ":0"},
                                               {Op::connect, "[2001:db8::1]:443"}}),
                                     h.kind());
  ASSERT_EQ(found.size(), 3u);
  for (const auto& f : found) {
    if (f.path == "[2001:db8::1]:443")
      EXPECT_EQ(f.remedy, "--net [2001:db8::1]:443");
    else
      EXPECT_EQ(f.remedy, "") << f.path;
  }
}

// A path on a filesystem host_lookup does not look up (-1) gets no suggestion, and a write beneath
// one gets no wider directory above it.
TEST(LinuxExplain, PathsNotLookedUpAreNotSuggested) {
  Host h = host();
  auto kind = [&](const std::string& p) { return p.rfind("/w/remote", 0) == 0 ? -1 : h.kind()(p); };
  auto found = lx::explain::classify(
      namespaces_plan(), accesses({{Op::read, "/w/remote/name"}, {Op::create, "/w/remote/dir/new"}}), kind);
  for (const auto& f : found) EXPECT_EQ(f.remedy, "") << f.path;
}

// A remedy is one shell word: a path with a space or quote is quoted.
TEST(LinuxExplain, RemedyPathsAreQuotedForAShell) {
  Host h = host();
  h.files.insert("/w/my file's");
  auto found = lx::explain::classify(namespaces_plan(), accesses({{Op::read, "/w/my file's"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].remedy, "--ro '/w/my file'\\''s'");
}

TEST(LinuxExplain, ExecOutsideTheExecAllowlistSuggestsIt) {
  Host h = host();
  h.files.insert("/usr/bin/curl");
  lx::Plan plan = namespaces_plan();
  plan.landlock.exec_listed_only = true;
  lx::LandlockRule git;
  git.path = "/usr/bin/git";
  git.access = lx::Access::exec;
  plan.landlock.rules.push_back(git);
  auto found = lx::explain::classify(
      plan, accesses({{Op::exec, "/usr/bin/git"}, {Op::exec, "/usr/bin/curl"}}), h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, Verdict::not_executable);
  EXPECT_EQ(found[0].remedy, "--exec /usr/bin/curl");
}

TEST(LinuxExplain, SeccompKillNamesTheCallsAndTheProfileToRelax) {
  Finding f = lx::explain::seccomp_kill("default", "clock_settime, settimeofday");
  EXPECT_EQ(lx::explain::render_text({f}, 0),
            "cage: explain: syscall one of clock_settime, settimeofday: killed (1x); allow with --seccomp relaxed\n");
  EXPECT_EQ(lx::explain::seccomp_kill("relaxed", "").remedy, "--seccomp none");
}

// Landlock only: a connect that bypassed the proxy has no --net remedy (none would let it through).
TEST(LinuxExplain, ADirectConnectNamesTheProxyNotANetGrant) {
  Finding f{Op::connect, "10.0.0.5:443", Verdict::direct, "", 2, 9, "curl", 1, 0};
  EXPECT_EQ(lx::explain::render_text({f}, 0),
            "cage: explain: connect 10.0.0.5:443: direct (2x, first curl[9]); connect through cage's proxy "
            "(HTTPS_PROXY, HTTP_PROXY as cage sets them), or use --mechanism namespaces for transparent egress\n");
  EXPECT_FALSE(lx::explain::finding_fields(f).contains("remedy"));
}

lx::Plan landlock_plan() {
  lx::Plan p;
  p.mechanism = lx::Mechanism::landlock_only;
  auto rule = [](std::string path, lx::Access a) {
    lx::LandlockRule r;
    r.path = std::move(path);
    r.access = a;
    return r;
  };
  p.landlock.rules = {rule("/usr", lx::Access::read_exec), rule("/w/src", lx::Access::read),
                      rule("/w/out", lx::Access::write), rule("/w", lx::Access::list)};
  return p;
}

// mkdir -p over directories that exist: EEXIST before Landlock is asked, not a refusal; a new one
// beneath a read-only rule still is.
TEST(LinuxExplainLandlock, MakingAnExistingDirectoryIsNotListed) {
  Host h = host();
  auto found = lx::explain::classify(landlock_plan(), accesses({{Op::create, "/w"}, {Op::create, "/w/src"},
                                                                {Op::create, "/w/src/new"}}),
                                     h.kind());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, "/w/src/new");
}

TEST(LinuxExplainLandlock, RulesDecide) {
  Host h = host();
  auto found = lx::explain::classify(landlock_plan(),
                                     accesses({{Op::read, "/w/secret"},
                                               {Op::stat, "/w/secret"},  // Landlock does not mediate stat
                                               {Op::read, "/w"},
                                               {Op::create, "/w/src/a.o"},
                                               {Op::exec, "/w/src/a.c"},
                                               {Op::create, "/w/out/x"}}),
                                     h.kind());
  ASSERT_EQ(found.size(), 3u);
  const Finding* read = find(found, Op::read, "/w/secret");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->verdict, Verdict::refused);
  EXPECT_EQ(read->remedy, "--ro /w/secret");
  const Finding* write = find(found, Op::create, "/w/src/a.o");
  ASSERT_TRUE(write);
  EXPECT_EQ(write->verdict, Verdict::read_only);
  EXPECT_EQ(write->remedy, "--rw /w/src");
  const Finding* exec = find(found, Op::exec, "/w/src/a.c");
  ASSERT_TRUE(exec);
  EXPECT_EQ(exec->verdict, Verdict::not_executable);
}

}  // namespace
}  // namespace cage
