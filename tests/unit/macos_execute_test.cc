// macos::execute on Linux, with a stand-in for /usr/bin/sandbox-exec that keeps the profile it was
// given and runs the command unconfined: everything the executor does besides the sandbox itself
// (exit status and signals, forwarding, --timeout, rlimits, the scrubbed environment, the private
// TMPDIR and its removal, no descriptor leaked, the proxy's port and secret in the environment and
// the profile, the errors). The sandbox's own enforcement is `cage --self-test` on a Mac.
#include "macos/execute.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/options.h"

namespace {

using namespace cage;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

class MacosExecute : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/cage-macexec.XXXXXX";
    ASSERT_NE(mkdtemp(t), nullptr);
    dir_ = t;
    std::filesystem::create_directory(dir_ + "/home");
    fake_ = dir_ + "/sandbox-exec";
    std::ofstream(fake_) << "#!/bin/sh\n"
                            "[ \"$1\" = -p ] && [ \"$3\" = -- ] || exit 99\n"
                            "printf '%s' \"$2\" > \"${0%/*}/profile.sbpl\"\n"
                            "shift 3\n"
                            "exec \"$@\"\n";
    chmod(fake_.c_str(), 0755);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<int> run(std::vector<std::string> words) {
    words.insert(words.begin(), "cage");
    auto inv = cli::parse(words, dir_);
    if (!inv) return inv.error();
    auto pol = policy::validate(inv->input, policy::Context{dir_, dir_ + "/home", {}});
    if (!pol) return pol.error();
    return macos::execute(*pol, env_, fake_);
  }

  std::string dir_, fake_;
  std::vector<std::pair<std::string, std::string>> env_ = {
      {"PATH", "/usr/bin:/bin"}, {"AWS_SECRET_ACCESS_KEY", "x"}, {"TMPDIR", "/tmp"}};
};

TEST_F(MacosExecute, ExitStatusAndSignalsPassThrough) {
  auto r = run({"--", "sh", "-c", "exit 7"});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 7);
  r = run({"--", "sh", "-c", "kill -TERM $$"});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 128 + SIGTERM);
}

TEST_F(MacosExecute, ForwardsATermSentToCage) {
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill(getpid(), SIGTERM);  // as a supervisor (timeout(1), CI) would
  });
  auto r = run({"--", "sleep", "5"});
  killer.join();
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 128 + SIGTERM);
}

TEST_F(MacosExecute, TimeoutEndsTheCommandWith124) {
  auto start = std::chrono::steady_clock::now();
  auto r = run({"--timeout", "300ms", "--", "sleep", "5"});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 124);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST_F(MacosExecute, RlimitsAreSetInTheChild) {
  auto r = run({"--rlimit", "nofile=64", "--", "sh", "-c", "test \"$(ulimit -n)\" = 64"});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 0);
}

TEST_F(MacosExecute, ScrubbedEnvironmentAndAPrivateTmpdirRemovedAfterwards) {
  env_.back().second = dir_;  // the caller's TMPDIR: the private one is made inside it
  auto r = run({"--rw", dir_, "--", "sh", "-c",
                "echo \"$TMPDIR\" > " + dir_ + "/tmpdir; touch \"$TMPDIR/left\"; "
                "test -z \"$AWS_SECRET_ACCESS_KEY\" && test \"$HOME\" = " + dir_ + "/home"});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 0);
  std::string tmp = slurp(dir_ + "/tmpdir");
  EXPECT_EQ(tmp.rfind(dir_ + "/cage-private.", 0), 0u) << tmp;
  EXPECT_FALSE(std::filesystem::exists(tmp)) << "the private TMPDIR outlived the run";
  EXPECT_NE(slurp(dir_ + "/profile.sbpl").find("(subpath \"" + tmp + "\")"), std::string::npos)
      << "the private TMPDIR is not writable in the profile";
}

// The command's HOME is a private empty directory with a link to a grant beneath the real home,
// removed after the run without following the link.
TEST_F(MacosExecute, PrivateHomeWithALinkToAGrantRemovedAfterwards) {
  std::ofstream(dir_ + "/home/.gitconfig") << "[user]\n";
  const std::string script = "echo \"$HOME\" > " + dir_ + "/home-was; test -L \"$HOME/.gitconfig\" && " +
                             "cat \"$HOME/.gitconfig\" > " + dir_ + "/read && " +
                             "test \"$(ls -A \"$HOME\")\" = .gitconfig";
  auto r = run({"--ro", dir_ + "/home/.gitconfig", "--", "sh", "-c", script});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 0);
  std::string home = slurp(dir_ + "/home-was");
  EXPECT_EQ(home.rfind("/tmp/cage-private.", 0), 0u) << home;
  EXPECT_EQ(slurp(dir_ + "/read"), "[user]");
  EXPECT_FALSE(std::filesystem::exists(home)) << "the private HOME outlived the run";
  EXPECT_EQ(slurp(dir_ + "/home/.gitconfig"), "[user]") << "the removal followed the link";
  EXPECT_NE(slurp(dir_ + "/profile.sbpl").find("(subpath \"" + home + "\")"), std::string::npos);
}

TEST_F(MacosExecute, NetGivesTheProxysPortAndSecretAndNoDescriptorLeaks) {
  auto r = run({"--rw", dir_, "--net", "127.0.0.1:9", "--", "sh", "-c",
                "echo \"$HTTPS_PROXY\" > " + dir_ + "/proxy; exec ls /proc/self/fd > " + dir_ + "/fds"});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 0);
  std::string url = slurp(dir_ + "/proxy");
  ASSERT_EQ(url.rfind("http://cage:", 0), 0u) << url;
  auto at = url.find('@');
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(at - 12, 32u) << "the secret is not 32 hex digits: " << url;
  std::string port = url.substr(url.rfind(':') + 1);
  EXPECT_NE(slurp(dir_ + "/profile.sbpl").find("(remote tcp \"localhost:" + port + "\")"), std::string::npos)
      << "the profile does not allow the proxy's port " << port;
  // What the command started with, listed by ls exec'd in its place: 0-2 and the directory ls reads
  // (3, the lowest free number, unless something leaked). A shell lists its own too: its pipeline
  // ends and saved descriptors (dash keeps stdout at 10 during a redirection) came and went.
  EXPECT_EQ(slurp(dir_ + "/fds"), "0\n1\n2\n3") << "descriptors beyond 0-2 reached the command";
}

// A setuid or setgid program is refused as on Linux (macOS has no no_new_privs to defuse it), by
// path and when found on PATH; its unprivileged twin runs. The directory is granted: a command the
// profile hides is not found at all (CommandIsResolvedPastHiddenPathEntries).
TEST_F(MacosExecute, RefusesSetuidAndSetgidPrograms) {
  std::filesystem::create_directory(dir_ + "/bin");
  for (auto [name, mode] :
       {std::pair<const char*, mode_t>{"su-tool", 04755}, {"sg-tool", 02755}, {"plain", 0755}}) {
    std::string p = dir_ + "/bin/" + name;
    std::ofstream(p) << "#!/bin/sh\nexit 3\n";
    ASSERT_EQ(chmod(p.c_str(), mode), 0) << p;
    struct stat st {};
    ASSERT_EQ(stat(p.c_str(), &st), 0);
    if ((st.st_mode & 07777) != mode) GTEST_SKIP() << "this file system drops the setuid/setgid bits";
  }
  auto by_path = run({"--ro", dir_ + "/bin", "--", dir_ + "/bin/su-tool"});
  ASSERT_FALSE(by_path);
  EXPECT_EQ(by_path.error().cls, ErrorClass::capability_denied);
  EXPECT_EQ(by_path.error().input, "COMMAND " + dir_ + "/bin/su-tool");
  EXPECT_NE(by_path.error().reason.find("setuid/setgid"), std::string::npos) << by_path.error().reason;
  env_[0].second = dir_ + "/bin:/usr/bin:/bin";
  auto on_path = run({"--ro", dir_ + "/bin", "--", "sg-tool"});
  ASSERT_FALSE(on_path);
  EXPECT_EQ(on_path.error().cls, ErrorClass::capability_denied);
  EXPECT_EQ(on_path.error().input, "COMMAND sg-tool");
  EXPECT_EQ(slurp(dir_ + "/profile.sbpl"), "") << "sandbox-exec must not have been started";
  auto plain = run({"--ro", dir_ + "/bin", "--", "plain"});
  ASSERT_TRUE(plain) << plain.error().reason;
  EXPECT_EQ(*plain, 3);
}

TEST_F(MacosExecute, ErrorsAreStructured) {
  auto r = run({"--", "no-such-command-cage-test"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().cls, ErrorClass::not_found);
  auto pol = policy::validate(cli::parse({"cage", "--", "true"}, dir_)->input, policy::Context{dir_, dir_, {}});
  ASSERT_TRUE(pol);
  auto missing = macos::execute(*pol, env_, dir_ + "/no-sandbox-exec");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().cls, ErrorClass::spawn_sandbox_unavailable);
}

// The command is found outside the sandbox and run by its absolute path, and a PATH entry the profile
// hides is not what it is found in (macOS's execvp would stop at its EPERM): here dir_/home, the
// caller's HOME, holds a shim of the same name before /usr/bin.
TEST_F(MacosExecute, CommandIsResolvedPastHiddenPathEntries) {
  std::filesystem::create_directory(dir_ + "/home/shims");
  std::ofstream(dir_ + "/home/shims/true") << "#!/bin/sh\nexit 9\n";
  chmod((dir_ + "/home/shims/true").c_str(), 0755);
  env_[0].second = dir_ + "/home/shims:/usr/bin:/bin";
  auto r = run({"--", "sh", "-c",
                "[ \"$0\" = /usr/bin/sh ] || [ \"$0\" = /bin/sh ] && [ \"$PATH\" = /usr/bin:/bin ]"});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r, 0) << "argv[0] is not the absolute path, or PATH kept the hidden entry";
  auto t = run({"--", "true"});
  ASSERT_TRUE(t) << t.error().reason;
  EXPECT_EQ(*t, 0) << "the shim in the hidden home was run";
  auto only_hidden = run({"--", dir_ + "/home/shims/true"});
  ASSERT_FALSE(only_hidden);
  EXPECT_EQ(only_hidden.error().cls, ErrorClass::not_found);
}

// --check's probes, against stand-ins: one that denies as the real sandbox-exec does under a bare
// (deny default) (execvp fails with EPERM, exit 71), the unconfined one (which must fail the deny
// probe) and a missing one (nothing passes).
TEST_F(MacosExecute, CheckProbesRunSandboxExecForReal) {
  const std::string denying = dir_ + "/denying-sandbox-exec";
  std::ofstream(denying) << "#!/bin/sh\n"
                            "[ \"$1\" = -p ] && [ \"$3\" = -- ] || exit 64\n"
                            "[ \"$2\" = '(version 1)(deny default)' ] && exit 71\n"
                            "shift 3\nexec \"$@\"\n";
  chmod(denying.c_str(), 0755);
  auto probes = macos::check_probes("(version 1)(deny default)(allow process-exec)");
  ASSERT_EQ(probes.size(), 3u);
  for (auto& p : probes) {
    p.status = macos::run_probe(denying, p.profile);
    EXPECT_TRUE(macos::probe_passed(p)) << p.name << ": " << p.status;
  }
  auto unconfined = macos::check_probes("");
  ASSERT_EQ(unconfined.size(), 2u);
  for (auto& p : unconfined) p.status = macos::run_probe(fake_, p.profile);
  EXPECT_TRUE(macos::probe_passed(unconfined[0]));
  EXPECT_FALSE(macos::probe_passed(unconfined[1])) << "a sandbox that runs what it should deny passed";
  for (auto& p : probes) {
    p.status = macos::run_probe(dir_ + "/missing", p.profile);
    EXPECT_EQ(p.status, -1);
    EXPECT_FALSE(macos::probe_passed(p));
  }
}

}  // namespace
