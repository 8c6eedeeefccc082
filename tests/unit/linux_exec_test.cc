// lx::compile_exec (--exec): with an allowlist only Access::exec rules grant execute, writable
// mounts are noexec, the command and the dynamic loader are added and said so; what cannot be
// enforced (no Landlock ABI 2, Landlock alone without exec-written accepted) is refused.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_host_view.h"
#include "linux/compile.h"

namespace cage::testing {
namespace {

FakeHostView exec_host() {
  FakeHostView host;
  host.add_file("/usr/bin/git", 0755);
  host.add_dir("/usr/lib");
  host.add_dir("/usr/lib/x86_64-linux-gnu");
  host.add_file("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0755);
  host.add_link("/lib64", "usr/lib64");
  host.add_dir("/usr/lib64");
  host.add_link("/usr/lib64/ld-linux-x86-64.so.2", "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  host.add_file("/home/ann/proj/out/tool", 0755);
  host.set_uid(0);
  return host;
}

Result<lx::Plan> compile_exec(std::vector<std::string> words, const FakeHostView& host = exec_host()) {
  return lx::compile(policy_of(std::move(words)), host, {{"PATH", "/usr/bin:/bin"}});
}

const lx::LandlockRule* rule(const lx::Plan& plan, const std::string& path, lx::Access a) {
  for (const auto& r : plan.landlock.rules)
    if (r.path == path && r.access == a) return &r;
  return nullptr;
}

TEST(LinuxExec, OnlyListedPathsKeepExecute) {
  auto plan = compile_exec({"--exec", "/usr/bin/git", "--rw", "out", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(plan->landlock.exec_listed_only);
  EXPECT_NE(rule(*plan, "/usr/bin/git", lx::Access::exec), nullptr);
  EXPECT_NE(rule(*plan, "/usr/bin/make", lx::Access::exec), nullptr) << "the command is added";
  EXPECT_NE(rule(*plan, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", lx::Access::exec), nullptr);
  for (const auto& r : plan->landlock.rules) EXPECT_NE(r.access, lx::Access::read_exec) << r.path;
  for (const auto& m : plan->mounts) {
    bool writable = m.kind == lx::MountKind::bind_rw || (m.kind == lx::MountKind::tmpfs && !m.read_only) ||
                    m.kind == lx::MountKind::dev;
    EXPECT_EQ(m.noexec, writable) << m.target;
  }
  ASSERT_EQ(plan->exec_summary.size(), 3u);
  EXPECT_EQ(plan->exec_summary[0], "/usr/bin/git  # --exec /usr/bin/git");
  EXPECT_EQ(plan->exec_summary[1], "/usr/bin/make  # the command (make), added");
  EXPECT_NE(lx::render_summary(*plan).find("may exec:    /usr/bin/git  # --exec /usr/bin/git"), std::string::npos);
  EXPECT_NE(lx::render_text(*plan).find("(noexec)"), std::string::npos);
  EXPECT_TRUE(plan->seccomp.no_memfd) << "a memfd's code could be mapped past the allowlist";
}

TEST(LinuxExec, WithoutAllowlistNothingChanges) {
  auto plan = compile_exec({"--rw", "out", "--", "make"});
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->landlock.exec_listed_only);
  EXPECT_TRUE(plan->exec_summary.empty());
  for (const auto& m : plan->mounts) EXPECT_FALSE(m.noexec) << m.target;
}

TEST(LinuxExec, CommandBeneathTheListIsNotAddedTwice) {
  auto plan = compile_exec({"--exec", "/usr/bin", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_NE(rule(*plan, "/usr/bin", lx::Access::exec), nullptr);
  EXPECT_EQ(rule(*plan, "/usr/bin/make", lx::Access::exec), nullptr);
  EXPECT_EQ(plan->exec_summary[0], "/usr/bin/ (everything beneath)  # --exec /usr/bin");
}

TEST(LinuxExec, RefusedInputsNameThemselves) {
  struct Case { std::vector<std::string> words; ErrorClass cls; std::string input; };
  const Case cases[] = {
      {{"--exec", "/usr/bin/nope", "--", "make"}, ErrorClass::invalid_policy, "--exec /usr/bin/nope"},
      {{"--exec", "/home/ann/.ssh", "--", "make"}, ErrorClass::invalid_policy, "--exec /home/ann/.ssh"},  // not visible
      {{"--rw", "out", "--exec", "out/tool", "--", "make"}, ErrorClass::invalid_policy, "--exec out/tool"},  // writable
      {{"--rw", "out", "--exec", "/usr/bin/git", "--", "out/tool"}, ErrorClass::invalid_policy, "COMMAND out/tool"},
      {{"--exec", "/usr/bin/git", "--", "/lib64/ld-linux-x86-64.so.2", "/usr/bin/git"}, ErrorClass::invalid_policy,
       "COMMAND /lib64/ld-linux-x86-64.so.2"},
  };
  for (const auto& c : cases) {
    auto plan = compile_exec(c.words);
    ASSERT_FALSE(plan) << c.input;
    EXPECT_EQ(plan.error().cls, c.cls) << c.input;
    EXPECT_EQ(plan.error().input, c.input);
  }
}

TEST(LinuxExec, NoLandlockExecuteRightIsRefusedNotDropped) {
  for (int abi : {0, 1}) {
    FakeHostView host = exec_host();
    host.set_landlock_abi(abi);
    auto plan = compile_exec({"--exec", "/usr/bin/git", "--", "make"}, host);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
    EXPECT_EQ(plan.error().input, "--exec");
    EXPECT_TRUE(compile_exec({"--", "make"}, host)) << "without --exec the host still runs";
  }
}

// A memfd has no path for Landlock to check and its mount is not noexec: memfd_create is refused
// by seccomp for every caller, root or not, whatever the host's vm.memfd_noexec (no refusal needed).
TEST(LinuxExec, MemfdIsRefusedForEveryCaller) {
  for (uint32_t uid : {0u, 1000u}) {
    FakeHostView host = exec_host();
    host.set_uid(uid);
    auto plan = compile_exec({"--exec", "/usr/bin/git", "--", "make"}, host);
    ASSERT_TRUE(plan) << uid << ": " << plan.error().reason;
    EXPECT_TRUE(plan->seccomp.no_memfd);
    EXPECT_NE(lx::render_text(*plan).find("memfd_create and memfd_secret answer ENOSYS"), std::string::npos);
  }
  auto plain = compile_exec({"--", "make"}, exec_host());
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->seccomp.no_memfd) << "without --exec nothing changes";
}

TEST(LinuxExec, LandlockAloneNeedsTheLoaderLossAccepted) {
  FakeHostView host = exec_host();
  host.set_user_namespaces(false);
  auto refused = compile_exec({"--allow-degraded", "pid", "--exec", "/usr/bin/git", "--", "make"}, host);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_NE(refused.error().remedy.find("--allow-degraded=exec-written"), std::string::npos);
  auto plan = compile_exec({"--allow-degraded", "pid,exec-written", "--exec", "/usr/bin/git", "--", "make"}, host);
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(plan->landlock.exec_listed_only);
  EXPECT_NE(rule(*plan, "/usr/bin/git", lx::Access::exec), nullptr);
  EXPECT_TRUE(std::any_of(plan->degraded.begin(), plan->degraded.end(),
                          [](const std::string& d) { return d.rfind("exec-written:", 0) == 0; }));
}

}  // namespace
}  // namespace cage::testing
