// lx::compile: invariants of the plan and golden --dry-run text, against a FakeHostView.
#include <gtest/gtest.h>

#include <tuple>

#include <fstream>
#include <sstream>

#include "common/json.h"
#include "common/sha256.h"
#include "fake_host_view.h"
#include "golden.h"
#include "linux/compile.h"

namespace cage::testing {
namespace {

using lx::MountKind;

Result<lx::Plan> compile_words(std::vector<std::string> words, const FakeHostView& host = FakeHostView()) {
  return lx::compile(policy_of(std::move(words)), host, {{"PATH", "/usr/bin:/bin"}, {"SECRET_TOKEN", "x"}});
}

int step_index(const lx::Plan& plan, const std::string& target) {
  for (size_t i = 0; i < plan.mounts.size(); ++i)
    if (plan.mounts[i].target == target) return static_cast<int>(i);
  return -1;
}

// The step mounted at target; a missing one fails the test and yields an empty placeholder.
const lx::MountStep* step(const lx::Plan& plan, const std::string& target) {
  static const lx::MountStep missing{lx::MountKind::dir, "", "<missing>", "", false, false, ""};
  int i = step_index(plan, target);
  EXPECT_GE(i, 0) << "no mount step at " << target;
  return i < 0 ? &missing : &plan.mounts[i];
}

TEST(LinuxCompile, GrantsBindAtTheSamePath) {
  auto plan = compile_words({"--ro", "src", "--rw", "out", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  ASSERT_NE(step(*plan, "/home/ann/proj/src"), nullptr);
  EXPECT_EQ(step(*plan, "/home/ann/proj/src")->kind, MountKind::bind_ro);
  EXPECT_EQ(step(*plan, "/home/ann/proj/out")->kind, MountKind::bind_rw);
  EXPECT_EQ(step(*plan, "/home/ann/proj/out")->why, "--rw out");
  EXPECT_EQ(plan->exec_path, "/usr/bin/make");
}

// The workload's stdio files get a Landlock rule each, for their own access (LandlockPlan::stdio),
// under both mechanisms; a stream --max-output caps reaches the workload as a pipe, so gets none.
TEST(LinuxCompile, StdioFilesAreListedForTheirOwnAccess) {
  FakeHostView host;
  host.add_stdio(0, "/home/ann/in.txt", true, false);
  host.add_stdio(1, "/home/ann/logs/build.log", false, true);
  host.add_stdio(2, "/home/ann/logs/err.log", false, true);
  for (auto mech : {"namespaces", "landlock"}) {
    auto plan = compile_words({"--mechanism", mech, "--allow-degraded", "pid", "--", "make"}, host);
    ASSERT_TRUE(plan) << plan.error().reason;
    ASSERT_EQ(plan->landlock.stdio.size(), 3u) << mech;
    EXPECT_EQ(plan->landlock.stdio[0].path, "/home/ann/in.txt");
    EXPECT_TRUE(plan->landlock.stdio[0].read);
    EXPECT_FALSE(plan->landlock.stdio[0].write);
    EXPECT_FALSE(plan->landlock.stdio[1].read);
    EXPECT_TRUE(plan->landlock.stdio[1].write);
  }
  auto capped = compile_words({"--max-stdout", "1M", "--", "make"}, host);
  ASSERT_TRUE(capped) << capped.error().reason;
  ASSERT_EQ(capped->landlock.stdio.size(), 2u);
  EXPECT_EQ(capped->landlock.stdio[0].fd, 0);
  EXPECT_EQ(capped->landlock.stdio[1].fd, 2);
  auto both = compile_words({"--max-output", "1M", "--", "make"}, host);
  ASSERT_TRUE(both) << both.error().reason;
  ASSERT_EQ(both->landlock.stdio.size(), 1u);
  EXPECT_EQ(both->landlock.stdio[0].fd, 0);
}

TEST(LinuxCompile, HideIsMountedAfterTheGrantItMasks) {
  auto plan = compile_words({"--ro", "/home/ann/proj", "--hide", "/home/ann/proj/.env", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_LT(step_index(*plan, "/home/ann/proj"), step_index(*plan, "/home/ann/proj/.env"));
  EXPECT_EQ(step(*plan, "/home/ann/proj/.env")->kind, MountKind::hide);
}

TEST(LinuxCompile, DefaultViewHoldsNoSecrets) {
  auto plan = compile_words({"--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  for (const auto& m : plan->mounts) {
    EXPECT_EQ(m.target.find("shadow"), std::string::npos) << m.target;
    EXPECT_NE(m.target, "/root");
    EXPECT_NE(m.target, "/home/ann/.ssh");
  }
  EXPECT_EQ(step(*plan, "/etc")->kind, MountKind::tmpfs);
  EXPECT_TRUE(step(*plan, "/etc")->read_only);
  EXPECT_EQ(step(*plan, "/etc/passwd")->kind, MountKind::file);
  EXPECT_EQ(step(*plan, "/etc/passwd")->content.find("ann:x:1000:1000::/home/ann:/bin/bash"), 
            step(*plan, "/etc/passwd")->content.find("ann:"));
  EXPECT_EQ(step(*plan, "/home/ann")->kind, MountKind::tmpfs);  // empty private $HOME
  EXPECT_EQ(step(*plan, "/bin")->kind, MountKind::symlink);
  EXPECT_EQ(step(*plan, "/proc/keys")->kind, MountKind::hide);
  EXPECT_EQ(step(*plan, "/proc/sys")->kind, MountKind::proc_ro);
  // The current directory is shown read-only, after $HOME's tmpfs.
  EXPECT_EQ(step(*plan, "/home/ann/proj")->kind, MountKind::bind_ro);
  EXPECT_LT(step_index(*plan, "/home/ann"), step_index(*plan, "/home/ann/proj"));
}

TEST(LinuxCompile, EnvironmentIsScrubbed) {
  auto plan = compile_words({"--setenv", "A=1", "--", "make"});
  ASSERT_TRUE(plan);
  bool saw_home = false;
  for (const auto& e : plan->env) {
    EXPECT_EQ(e.find("SECRET_TOKEN"), std::string::npos);
    saw_home = saw_home || e == "HOME=/home/ann";
  }
  EXPECT_TRUE(saw_home);
}

TEST(LinuxCompile, MissingGrantIsInvalidPolicyNamingIt) {
  auto plan = compile_words({"--rw", "nope", "--", "make"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::invalid_policy);
  EXPECT_EQ(plan.error().input, "--rw nope");
}

TEST(LinuxCompile, TmpfsInsideAGrantMustExistOnTheHost) {
  auto plan = compile_words({"--rw", "/home/ann/proj", "--tmpfs", "/home/ann/proj/build", "--", "make"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::invalid_policy);
  EXPECT_NE(plan.error().reason.find("on the host"), std::string::npos);
  // ... and a tmpfs where cage owns the tree is fine.
  EXPECT_TRUE(compile_words({"--tmpfs", "/scratch", "--", "make"}));
}

TEST(LinuxCompile, SetuidProgramIsRefused) {
  auto plan = compile_words({"--", "sudo", "id"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::capability_denied);
}

TEST(LinuxCompile, CommandNotVisibleIsNotFound) {
  FakeHostView host;
  host.add_dir("/opt");
  host.add_file("/opt/tool", 0755);
  auto plan = lx::compile(policy_of({"--", "/opt/tool"}), host, {});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::not_found);
  EXPECT_EQ(exit_status_of(plan.error()), 127);
  EXPECT_TRUE(lx::compile(policy_of({"--ro", "/opt", "--", "/opt/tool"}), host, {}));
}

// A directory or a file without an execute bit is said to be one, granted or not (granted, it would
// not run either); "not visible" only for a program that would.
TEST(LinuxCompile, CommandThatCannotRunSaysWhy) {
  FakeHostView host;
  host.add_dir("/opt");
  host.add_dir("/opt/d");
  host.add_file("/opt/data", 0644);
  for (const char* grant : {"/opt", "/usr"}) {
    auto dir = lx::compile(policy_of({"--ro", grant, "--", "/opt/d"}), host, {});
    ASSERT_FALSE(dir);
    EXPECT_EQ(dir.error().cls, ErrorClass::exec_failed);
    EXPECT_EQ(exit_status_of(dir.error()), 126);
    EXPECT_NE(dir.error().reason.find("is a directory"), std::string::npos) << dir.error().reason;
    auto data = lx::compile(policy_of({"--ro", grant, "--", "/opt/data"}), host, {});
    ASSERT_FALSE(data);
    EXPECT_EQ(exit_status_of(data.error()), 126);
    EXPECT_NE(data.error().reason.find("not executable"), std::string::npos) << data.error().reason;
    EXPECT_EQ(data.error().input, "COMMAND /opt/data");
  }
}

// A script whose #! interpreter is missing or not shown is planned (a run pays nothing for the
// question); once its exec fails, or for --dry-run, interpreter_problem names the interpreter, not
// the script as if it were missing. Its twin with a visible interpreter has no problem.
TEST(LinuxCompile, ScriptInterpreterMissingOrInvisibleIsNamed) {
  FakeHostView host;
  host.add_dir("/opt");
  host.add_dir("/srv");
  host.add_file("/srv/py", 0755);
  host.add_file("/opt/gone.sh", 0755, "#!/usr/bin/python9 -u\nprint(1)\n");
  host.add_file("/opt/hidden.sh", 0755, "#! /srv/py\n");
  host.add_file("/opt/dos.sh", 0755, "#!/usr/bin/make\r\n");
  host.add_file("/opt/ok.sh", 0755, "#!/usr/bin/make -f\n");
  host.add_file("/opt/elf", 0755, "\x7f" "ELF");
  auto problem = [&](std::vector<std::string> words) -> std::optional<Error> {
    auto plan = lx::compile(policy_of(words), host, {});
    EXPECT_TRUE(plan) << plan.error().reason;
    return plan ? lx::interpreter_problem(*plan, host) : std::nullopt;
  };
  auto gone = problem({"--ro", "/opt", "--", "/opt/gone.sh"});
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->cls, ErrorClass::not_found);
  EXPECT_EQ(gone->input, "COMMAND /opt/gone.sh");
  EXPECT_NE(gone->reason.find("interpreter /usr/bin/python9 named on the #! line of /opt/gone.sh does not exist"),
            std::string::npos) << gone->reason;
  auto hidden = problem({"--ro", "/opt", "--", "/opt/hidden.sh"});
  ASSERT_TRUE(hidden);
  EXPECT_NE(hidden->reason.find("interpreter /srv/py named on the #! line of /opt/hidden.sh is not visible"),
            std::string::npos) << hidden->reason;
  EXPECT_FALSE(problem({"--ro", "/opt", "--ro", "/srv", "--", "/opt/hidden.sh"}));
  auto dos = problem({"--ro", "/opt", "--", "/opt/dos.sh"});
  ASSERT_TRUE(dos);
  EXPECT_NE(dos->reason.find("carriage return"), std::string::npos) << dos->reason;
  EXPECT_FALSE(problem({"--ro", "/opt", "--", "/opt/ok.sh"}));
  EXPECT_FALSE(problem({"--ro", "/opt", "--", "/opt/elf"}));
}

// A grant named in the project that a link on the way leads out of it, to $HOME, a credential store,
// a system directory or elsewhere in $HOME, is refused naming the target, under both mechanisms;
// links inside the project, out of $HOME, and the caller's own outside the project are followed.
TEST(LinuxCompile, GrantThroughLinkOutOfTheProjectIsJudgedByItsTarget) {
  FakeHostView host;
  host.add_dir("/home/ann/.cache");
  host.add_dir("/home/ann/dotfiles");
  host.add_dir("/srv");
  host.add_dir("/srv/out");
  host.add_link("/home/ann/proj/build", "/home/ann");
  host.add_link("/home/ann/proj/docs", "../.ssh");
  host.add_link("/home/ann/proj/cache", "/home/ann/.cache");
  host.add_link("/home/ann/proj/etc", "/etc");
  host.add_link("/home/ann/proj/up", "../..");
  host.add_link("/home/ann/proj/inside", "src");
  host.add_link("/home/ann/proj/far", "/srv/out");
  host.add_link("/home/ann/vim", "/home/ann/dotfiles");
  for (const char* mech : {"auto", "landlock"}) {
    auto words = [&](std::vector<std::string> w) {
      if (std::string(mech) == "landlock") w.insert(w.begin(), {"--mechanism", "landlock", "--allow-degraded", "pid"});
      w.insert(w.end(), {"--", "make"});
      return w;
    };
    for (auto [flag, path, target] : {std::tuple{"--rw", "./build", "/home/ann"}, {"--ro", "./docs", "/home/ann/.ssh"},
                                      {"--rw", "./cache", "/home/ann/.cache"}, {"--ro", "./etc", "/etc"},
                                      {"--rw", "./up", "/home"}}) {
      auto plan = lx::compile(policy_of(words({flag, path})), host, {});
      ASSERT_FALSE(plan) << mech << " " << path;
      EXPECT_EQ(plan.error().cls, ErrorClass::invalid_policy);
      EXPECT_EQ(plan.error().input, std::string(flag) + " " + path);
      EXPECT_NE(plan.error().reason.find("resolves through a symbolic link to"), std::string::npos) << plan.error().reason;
      EXPECT_NE(plan.error().reason.find(target), std::string::npos) << plan.error().reason;
    }
    for (auto [flag, path] : {std::pair{"--rw", "./inside"}, {"--rw", "./far"}, {"--ro", "/home/ann/vim"},
                              {"--rw", "/home/ann/.cache"}}) {
      auto plan = lx::compile(policy_of(words({flag, path})), host, {});
      EXPECT_TRUE(plan) << mech << " " << path << ": " << (plan ? "" : plan.error().reason);
    }
  }
}

// Landlock is a layer under namespaces, not a gate: without it the run is planned all the same
// (linux_layers_test.cc covers each ABI).
TEST(LinuxCompile, NoLandlockStillConfinedByNamespaces) {
  FakeHostView host;
  host.set_landlock_abi(0);
  auto plan = lx::compile(policy_of({"--", "make"}), host, {});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->landlock.abi, 0);
  EXPECT_FALSE(plan->mounts.empty());
}

TEST(LinuxCompile, LandlockMirrorsTheMounts) {
  auto plan = compile_words({"--ro", "src", "--rw", "out", "--", "make"});
  ASSERT_TRUE(plan);
  auto access_of = [&](const std::string& p) {
    for (const auto& r : plan->landlock.rules)
      if (r.path == p) return std::string(lx::to_string(r.access));
    return std::string("none");
  };
  EXPECT_EQ(access_of("/home/ann/proj/src"), "read_exec");
  EXPECT_EQ(access_of("/home/ann/proj/out"), "write");
  EXPECT_EQ(access_of("/usr"), "read_exec");
  EXPECT_EQ(access_of("/"), "list");
  EXPECT_EQ(access_of("/etc"), "read");
}

// A host with a project whose nested grants lie several directories below the --rw grant.
FakeHostView nested_host() {
  FakeHostView host;
  for (const char* d : {"/home/ann/proj/.git", "/home/ann/proj/.git/hooks", "/home/ann/proj/config",
                        "/home/ann/proj/deep", "/home/ann/proj/deep/a", "/home/ann/proj/deep/a/b"})
    host.add_dir(d);
  host.add_file("/home/ann/proj/config/app.toml");
  return host;
}

// Each directory between a --rw grant and a mount nested in it is bound onto itself (a mount point
// cannot be renamed or removed), after the grant and before the nested mount: renaming .git aside
// cannot set a --ro .git/hooks aside.
TEST(LinuxCompile, NestedMountsBeneathRwArePinned) {
  auto host = nested_host();
  auto plan = lx::compile(policy_of({"--rw", ".", "--ro", ".git/hooks", "--hide", "config/app.toml", "--tmpfs",
                                     "deep/a/b", "--", "make"}),
                          host, {});
  ASSERT_TRUE(plan) << plan.error().reason;
  for (const char* pin : {"/home/ann/proj/.git", "/home/ann/proj/config", "/home/ann/proj/deep", "/home/ann/proj/deep/a"}) {
    const lx::MountStep* s = step(*plan, pin);
    EXPECT_EQ(s->kind, MountKind::bind_rw) << pin;
    EXPECT_EQ(s->source, pin);
    EXPECT_EQ(s->why.rfind("pinned: ", 0), 0u) << s->why;
    EXPECT_LT(step_index(*plan, "/home/ann/proj"), step_index(*plan, pin));
  }
  EXPECT_LT(step_index(*plan, "/home/ann/proj/.git"), step_index(*plan, "/home/ann/proj/.git/hooks"));
  EXPECT_LT(step_index(*plan, "/home/ann/proj/deep/a"), step_index(*plan, "/home/ann/proj/deep/a/b"));
  EXPECT_EQ(step(*plan, "/home/ann/proj/.git")->why,
            "pinned: path to --ro .git/hooks inside --rw . (cannot be renamed)");
  // Nothing else is pinned: not the nested grants, not the --rw grant, not src or out.
  int pins = 0;
  for (const auto& m : plan->mounts) pins += m.why.rfind("pinned: ", 0) == 0;
  EXPECT_EQ(pins, 4);
}

// Beneath a read-only grant, or a tmpfs cage owns, a rename cannot reach the host: no pins.
TEST(LinuxCompile, NestedMountsElsewhereAreNotPinned) {
  auto host = nested_host();
  for (const char* outer : {"--ro", "--tmpfs"}) {
    auto plan = lx::compile(policy_of({outer, ".", "--ro", ".git/hooks", "--hide", "config/app.toml", "--", "make"}), host, {});
    ASSERT_TRUE(plan) << plan.error().reason;
    for (const auto& m : plan->mounts) EXPECT_NE(m.why.rfind("pinned: ", 0), 0u) << outer << " " << m.target;
  }
  // A nested grant directly inside --rw is a mount point itself: nothing between.
  auto plan = lx::compile(policy_of({"--rw", ".", "--ro", "src", "--", "make"}), host, {});
  ASSERT_TRUE(plan);
  for (const auto& m : plan->mounts) EXPECT_NE(m.why.rfind("pinned: ", 0), 0u) << m.target;
}

// Landlock cannot take write access back beneath a write rule (rights add up along the path), so
// wherever a read-only step lies beneath a Landlock write rule, a read-only mount is the boundary:
// it must be a mount, and no directory between it and a --rw grant may be renamable.
TEST(LinuxCompile, ReadOnlyBeneathALandlockWriteRuleIsAPinnedReadOnlyMount) {
  auto host = nested_host();
  auto plan = lx::compile(policy_of({"--rw", ".", "--ro", ".git/hooks", "--ro", "/tmp", "--", "make"}), host, {});
  ASSERT_TRUE(plan) << plan.error().reason;
  for (const auto& s : plan->mounts) {
    if (s.kind != MountKind::bind_ro && s.kind != MountKind::hide) continue;
    for (const auto& r : plan->landlock.rules) {
      if (r.access != lx::Access::write || !policy::is_beneath(s.target, r.path) || s.target == r.path) continue;
      const lx::MountStep* cover = nullptr;
      for (const auto& c : plan->mounts)
        if ((c.kind == MountKind::bind_rw || c.kind == MountKind::tmpfs) && policy::is_beneath(s.target, c.target) &&
            c.target != s.target && (!cover || c.target.size() > cover->target.size()))
          cover = &c;
      ASSERT_NE(cover, nullptr) << s.target;
      if (cover->kind != MountKind::bind_rw) continue;  // a rename in cage's tmpfs stays inside
      for (std::string d = s.target.substr(0, s.target.rfind('/')); d.size() > cover->target.size();
           d = d.substr(0, d.rfind('/')))
        EXPECT_GE(step_index(*plan, d), 0) << d << " between " << cover->target << " and " << s.target;
    }
  }
}

TEST(LinuxCompile, GoldenDryRunNestedGrants) {
  auto host = nested_host();
  host.add_file("/home/ann/proj/build.sh", 0755);
  auto plan = lx::compile(policy_of({"--no-system", "--rw", ".", "--ro", ".git/hooks", "--hide", "config/app.toml",
                                     "--", "./build.sh"}),
                          host, {{"PATH", "/usr/bin:/bin"}});
  ASSERT_TRUE(plan) << plan.error().reason;
  expect_golden(lx::render_text(*plan), "rw_nested_pins.txt");
  expect_golden(lx::render_summary(*plan), "summary_nested_pins.txt");
}

TEST(LinuxCompile, ProcAndDevCannotBeGranted) {
  auto plan = compile_words({"--rw", "/proc/sys", "--", "make"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::invalid_policy);
}

TEST(LinuxCompile, GoldenDryRun) {
  auto plan = compile_words({"--ro", "src", "--rw", "out", "--hide", ".env", "--", "make", "-j2"});
  ASSERT_TRUE(plan);
  expect_golden(lx::render_text(*plan), "ro_rw_hide.txt");
}

// The main flag combination of an unattended run: --net, limits, output caps, an exec allowlist is
// not possible on the fake host (no Landlock ABI), so: net + --limits default + --uid + --secret.
TEST(LinuxCompile, GoldenDryRunNetLimitsIdentity) {
  auto plan = compile_words({"--rw", "out", "--net", "registry.example.org:443", "--limits", "default", "--uid",
                             "nobody", "--secret", "TOKEN=fd:3", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  expect_golden(lx::render_text(*plan), "net_limits_identity.txt");
}

// The default --dry-run output: the user's grants first, each with its source, the default view
// as counts, limits and network in a line or two.
TEST(LinuxRender, GoldenSummary) {
  auto plan = compile_words({"--ro", "src", "--rw", "out", "--hide", ".env", "--memory", "64M", "--timeout", "30s",
                             "--net", "example.org:443", "--", "make", "-j2"});
  ASSERT_TRUE(plan) << plan.error().reason;
  expect_golden(lx::render_summary(*plan), "summary_ro_rw_hide.txt");
}

TEST(LinuxRender, SummaryListsEveryGrantWithItsSourceAndNoDefaultStep) {
  auto plan = compile_words({"--ro", "src", "--rw", "out", "--hide", ".env", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  const std::string text = lx::render_summary(*plan);
  size_t grants = 0;
  for (const auto& m : plan->mounts) {
    if (!m.granted) {
      EXPECT_EQ(text.find("# " + m.why + "\n"), std::string::npos) << m.target << " (" << m.why << ")";
      continue;
    }
    ++grants;
    EXPECT_NE(text.find("  " + m.target + " "), std::string::npos) << m.target;
    EXPECT_NE(text.find("# " + m.why + "\n"), std::string::npos) << m.why;
  }
  EXPECT_EQ(grants, 4u);  // src, out, .env and the implicit current directory
  EXPECT_LT(text.find("read-write:\n  /home/ann/proj/out "), text.find("read-only:\n"));
  EXPECT_EQ(text.find("SECRET_TOKEN"), std::string::npos);
  EXPECT_NE(text.find("environment: "), std::string::npos);
  for (const auto& l : lx::layers_in_force(*plan)) EXPECT_NE(text.find("  " + l + "\n"), std::string::npos) << l;
  // The whole plan has every step; the summary is a fraction of it.
  const std::string full = lx::render_text(*plan);
  EXPECT_NE(full.find("/etc/passwd"), std::string::npos);
  EXPECT_EQ(text.find("/etc/passwd"), std::string::npos);
}

// --dry-run --json describes a copied file by size and digest, never by content (/etc's copies made
// the plan 185 KB, and text such as passwd lines is not the plan's to print).
TEST(LinuxRender, JsonCarriesNoFileContents) {
  auto plan = compile_words({"--rw", "out", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  const auto table = lx::render_table(*plan);
  size_t files = 0;
  for (const auto& node : *table["mounts"].as_array()) {
    const auto& m = *node.as_table();
    if (m["kind"].value_or(std::string()) != "file") continue;
    ++files;
    const std::string target = m["target"].value_or(std::string());
    EXPECT_FALSE(m.contains("content")) << target;
    const lx::MountStep* s = step(*plan, target);
    EXPECT_EQ(m["bytes"].value_or(int64_t{-1}), static_cast<int64_t>(s->content.size())) << target;
    EXPECT_EQ(m["sha256"].value_or(std::string()), sha256_hex(s->content)) << target;
  }
  EXPECT_GE(files, 3u);  // passwd, group, hostname at least
  const std::string json = to_json(table);
  EXPECT_EQ(json.find("nobody:x:65534"), std::string::npos);
  EXPECT_NE(json.find("\"granted\" : true"), std::string::npos) << json.substr(0, 400);
}

}  // namespace
}  // namespace cage::testing

namespace cage::testing {
namespace {
TEST(LinuxCompile, SharedDirectoriesAreNotShownAsTheStartDirectory) {
  for (const char* shared : {"/tmp", "/home/ann", "/home", "/"}) {
    auto in = policy_of({"--chdir", shared, "--", "make"});
    auto plan = lx::compile(in, FakeHostView(), {});
    ASSERT_TRUE(plan) << shared << ": " << plan.error().reason;
    for (const auto& m : plan->mounts) EXPECT_NE(m.why, "current directory (read-only)") << shared;
  }
  EXPECT_TRUE(lx::cwd_too_wide("/run/user/1000", "/home/ann"));
  EXPECT_TRUE(lx::cwd_too_wide("/var/tmp", "/home/ann"));
  EXPECT_FALSE(lx::cwd_too_wide("/tmp/proj", "/home/ann"));
  EXPECT_FALSE(lx::cwd_too_wide("/run/user/1000/x", "/home/ann"));
  EXPECT_FALSE(lx::cwd_too_wide("/home/ann/proj", "/home/ann"));
  // System directories: /etc and /boot with all below them, the state and home roots themselves.
  for (const char* sys : {"/etc", "/etc/ssh", "/boot/grub", "/var", "/var/lib", "/var/log", "/home", "/srv", "/root"})
    EXPECT_TRUE(lx::cwd_too_wide(sys, "/home/ann")) << sys;
  for (const char* project : {"/var/lib/jenkins/workspace/app", "/root/proj", "/srv/www/site", "/usr/src/linux"})
    EXPECT_FALSE(lx::cwd_too_wide(project, "/home/ann")) << project;
}
// Started in a repository's subdirectory, only that subdirectory is shown: the plan says so with
// the grant that shows the repository; with that grant, or from the root, nothing is said.
TEST(LinuxCompile, RepositorySubdirectoryIsSaidWithTheGrantForGit) {
  FakeHostView host;
  host.add_dir("/home/ann/proj/.git");
  auto sub = compile_words({"--chdir", "src", "--", "make"}, host);
  ASSERT_TRUE(sub) << sub.error().reason;
  EXPECT_NE(sub->cwd_note.find("inside the git repository /home/ann/proj"), std::string::npos) << sub->cwd_note;
  EXPECT_NE(sub->cwd_note.find("--ro /home/ann/proj"), std::string::npos) << sub->cwd_note;
  auto granted = compile_words({"--chdir", "src", "--ro", ".", "--", "make"}, host);
  ASSERT_TRUE(granted) << granted.error().reason;
  EXPECT_EQ(granted->cwd_note, "");
  auto root = compile_words({"--", "make"}, host);
  ASSERT_TRUE(root) << root.error().reason;
  EXPECT_EQ(root->cwd_note, "");
  auto no_repo = compile_words({"--chdir", "src", "--", "make"});
  ASSERT_TRUE(no_repo) << no_repo.error().reason;
  EXPECT_EQ(no_repo->cwd_note, "");
}

}  // namespace
}  // namespace cage::testing

namespace cage::testing {
namespace {

// Every tmpfs the workload can write has a size (issue 22, point 5): 1/8 of RAM by default, or
// --tmpfs-size, or a --tmpfs's own; read-only ones (/etc) keep none.
TEST(LinuxCompile, WritableTmpfsMountsAreSized) {
  FakeHostView host;
  host.add_file("/proc/meminfo", 0444, "MemTotal:       24684544 kB\nMemFree:        1 kB\n");
  EXPECT_EQ(lx::default_tmpfs_bytes(host), 3013ull << 20);
  EXPECT_EQ(lx::default_tmpfs_bytes(FakeHostView()), 1ull << 30);  // no /proc/meminfo
  auto plan = compile_words({"--tmpfs", "/scratch:size=8M", "--tmpfs", "/big", "--", "make"}, host);
  ASSERT_TRUE(plan) << plan.error().reason;
  for (const char* t : {"/tmp", "/var/tmp", "/run", "/home/ann", "/big", "/dev"})
    EXPECT_EQ(step(*plan, t)->size_bytes, 3013ull << 20) << t;
  EXPECT_EQ(step(*plan, "/scratch")->size_bytes, 8ull << 20);
  EXPECT_EQ(step(*plan, "/etc")->size_bytes, 0u);
  plan = compile_words({"--tmpfs-size", "64M", "--tmpfs", "/scratch:size=8M", "--", "make"}, host);
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(step(*plan, "/tmp")->size_bytes, 64ull << 20);
  EXPECT_EQ(step(*plan, "/scratch")->size_bytes, 8ull << 20);
  EXPECT_NE(lx::render_text(*plan).find("tmpfs    /tmp (size 64M)"), std::string::npos) << lx::render_text(*plan);
}

// Plan::init holds what execute.cc and init.cc do for each mechanism (issue 26, point 1): the
// namespaces of the clone, whether init builds a root and a loopback, and whether it is pid 1.
TEST(LinuxCompile, InitPerMechanism) {
  auto ns = compile_words({"--", "make"});
  ASSERT_TRUE(ns) << ns.error().reason;
  EXPECT_EQ(ns->init.namespaces, (std::vector<std::string>{"user", "mount", "pid", "ipc", "uts", "cgroup", "net"}));
  EXPECT_TRUE(ns->init.build_root && ns->init.loopback && ns->init.pid1);
  EXPECT_FALSE(ns->seccomp.landlock_only_supplement);
  auto shared = compile_words({"--share-net", "--", "make"});
  ASSERT_TRUE(shared) << shared.error().reason;
  EXPECT_EQ(shared->init.namespaces, (std::vector<std::string>{"user", "mount", "pid", "ipc", "uts", "cgroup"}));
  EXPECT_FALSE(shared->init.loopback);
  auto ll = compile_words({"--mechanism", "landlock", "--allow-degraded", "pid", "--", "make"});
  ASSERT_TRUE(ll) << ll.error().reason;
  EXPECT_TRUE(ll->init.namespaces.empty());
  EXPECT_FALSE(ll->init.build_root || ll->init.loopback || ll->init.pid1);
  EXPECT_TRUE(ll->seccomp.landlock_only_supplement);
}

}  // namespace
}  // namespace cage::testing
