// --learn's pure half (linux/learn.cc): the learning view it asks compile for, and the profile
// written from judged observations: folding, secrets commented out, TOML that cage loads back.
#include <gtest/gtest.h>

#include "common/toml.h"
#include "linux/learn.h"

namespace cage {
namespace {

using lx::explain::Finding;
using lx::explain::Op;
using lx::explain::Verdict;

Finding found(Op op, std::string path, std::string remedy, Verdict v = Verdict::hidden) {
  Finding f;
  f.op = op;
  f.path = std::move(path);
  f.verdict = v;
  f.remedy = std::move(remedy);
  return f;
}

lx::learn::Observed observed(std::vector<Finding> findings) {
  lx::learn::Observed o;
  o.argv = {"make", "-j2"};
  o.date = "2026-11-27T07:40:00Z";
  o.home = "/home/u";
  o.cwd = "/w/proj";
  o.writable = {"/w/proj"};
  o.findings = std::move(findings);
  return o;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(LinuxLearn, SecretsAreKnownUnderHomeAndDotEnvAnywhere) {
  EXPECT_TRUE(lx::learn::is_secret("/home/u/.ssh/id_ed25519", "/home/u"));
  EXPECT_TRUE(lx::learn::is_secret("/home/u/.config/gcloud", "/home/u"));
  EXPECT_TRUE(lx::learn::is_secret("/w/proj/.env", "/home/u"));
  EXPECT_TRUE(lx::learn::is_secret("/w/proj/.env.local", "/home/u"));
  EXPECT_FALSE(lx::learn::is_secret("/home/u/.sshx", "/home/u"));
  EXPECT_FALSE(lx::learn::is_secret("/home/u/.config", "/home/u"));
  EXPECT_FALSE(lx::learn::is_secret("/w/proj/.envrc", "/home/u"));
}

TEST(LinuxLearn, GrantsAreWrittenAsProfileKeys) {
  auto text = lx::learn::render_profile(observed({
      found(Op::write, "/w/proj/hello.o", "--rw /w/proj", Verdict::read_only),
      found(Op::read, "/opt/tool/bin/tool", "--ro /opt/tool/bin/tool"),
      found(Op::read, "/srv/with space", "--ro '/srv/with space'"),
  }));
  EXPECT_TRUE(has_line(text, "version = 1")) << text;
  EXPECT_NE(text.find("rw = [\n  \"/w/proj\",\n]\n"), std::string::npos) << text;
  EXPECT_TRUE(has_line(text, "  \"/opt/tool/bin/tool\",")) << text;
  EXPECT_TRUE(has_line(text, "  \"/srv/with space\",")) << text;
  EXPECT_TRUE(has_line(text, "# command: make -j2")) << text;
  auto parsed = toml::parse(text);  // throws on a syntax error
  ASSERT_TRUE(parsed["fs"]["ro"].as_array());
  EXPECT_EQ(parsed["fs"]["ro"].as_array()->size(), 2u);
}

TEST(LinuxLearn, SecretsAndHomesAreCommentedOutWithWhy) {
  auto text = lx::learn::render_profile(observed({
      found(Op::read, "/home/u/.ssh/config", "--ro /home/u/.ssh/config"),
      found(Op::read, "/home/u", "--ro /home/u"),
      found(Op::read, "/home/u/.gitconfig", "--ro /home/u/.gitconfig"),
  }));
  EXPECT_NE(text.find("  # \"/home/u/.ssh/config\",  # a credential store"), std::string::npos) << text;
  EXPECT_NE(text.find("  # \"/home/u\",  # would grant the root or a whole home"), std::string::npos) << text;
  EXPECT_TRUE(has_line(text, "  \"/home/u/.gitconfig\",")) << text;
  auto parsed = toml::parse(text);
  EXPECT_EQ(parsed["fs"]["ro"].as_array()->size(), 1u);
}

TEST(LinuxLearn, SiblingsFoldIntoTheirDirectoryButNeverAHome) {
  auto text = lx::learn::render_profile(observed({
      found(Op::read, "/opt/t/a", "--ro /opt/t/a"),
      found(Op::read, "/opt/t/b", "--ro /opt/t/b"),
      found(Op::read, "/opt/t/c", "--ro /opt/t/c"),
      found(Op::read, "/home/u/.a", "--ro /home/u/.a"),
      found(Op::read, "/home/u/.b", "--ro /home/u/.b"),
      found(Op::read, "/home/u/.c", "--ro /home/u/.c"),
  }));
  EXPECT_TRUE(has_line(text, "  \"/opt/t\",")) << text;
  EXPECT_EQ(text.find("\"/opt/t/a\""), std::string::npos) << text;
  EXPECT_TRUE(has_line(text, "  \"/home/u/.a\",")) << text;
  EXPECT_EQ(text.find("  \"/home/u\","), std::string::npos) << text;
}

TEST(LinuxLearn, AGrantOverASecretLocationHidesIt) {
  auto text = lx::learn::render_profile(observed({
      found(Op::read, "/home/u/.config/a", "--ro /home/u/.config/a"),
      found(Op::read, "/home/u/.config/b", "--ro /home/u/.config/b"),
      found(Op::read, "/home/u/.config/c", "--ro /home/u/.config/c"),
  }));
  EXPECT_TRUE(has_line(text, "  \"/home/u/.config\",")) << text;
  EXPECT_TRUE(has_line(text, "  { path = \"/home/u/.config/gcloud\", optional = true },")) << text;
  EXPECT_NO_THROW(toml::parse(text));
}

TEST(LinuxLearn, WritesOutsideTheLearningViewAndCageOwnedPathsAreNotGranted) {
  auto text = lx::learn::render_profile(observed({
      found(Op::create, "/home/u/.cache/x", "--rw /home/u/.cache", Verdict::hidden),
      found(Op::read, "/sys/devices/system/cpu/online", "--ro /sys/devices/system/cpu/online"),
      found(Op::read, "/w/proj/sub/f", "--ro /w/proj/sub/f"),
      found(Op::write, "/w/proj/out/a.o", "--rw /w/proj/out", Verdict::read_only),
      found(Op::write, "/w/proj/b.o", "--rw /w/proj", Verdict::read_only),
      found(Op::create, "/var/tmp/x", "--rw /var/tmp", Verdict::hidden),
  }));
  EXPECT_NE(text.find("  # \"/var/tmp\",  # a private tmpfs while learning"), std::string::npos) << text;
  EXPECT_NE(text.find("  # \"/home/u/.cache\",  # written while learning and refused"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("/sys"), std::string::npos) << text;
  EXPECT_EQ(text.find("\"/w/proj/sub/f\""), std::string::npos) << text;  // beneath the rw grant
  EXPECT_EQ(text.find("\"/w/proj/out\""), std::string::npos) << text;
  EXPECT_TRUE(has_line(text, "  \"/w/proj\",")) << text;
}

TEST(LinuxLearn, NetworkUsedIsAllowedAndRefusedIsCommented) {
  auto o = observed({found(Op::connect, "other.test:443", "--net other.test:443", Verdict::refused)});
  o.net_used = {"10.9.0.2:8000"};
  auto text = lx::learn::render_profile(o);
  EXPECT_TRUE(has_line(text, "[net]")) << text;
  EXPECT_TRUE(has_line(text, "  \"10.9.0.2:8000\",")) << text;
  EXPECT_NE(text.find("  # \"other.test:443\",  # refused while learning"), std::string::npos) << text;
  auto parsed = toml::parse(text);
  EXPECT_EQ(parsed["net"]["allow"].as_array()->size(), 1u);
  EXPECT_EQ(text.find("# network: none"), std::string::npos) << text;
  o = observed({});
  o.offline = true;
  EXPECT_NE(lx::learn::render_profile(o).find("\n# network: none while learning (no --net)"),
            std::string::npos);
}

TEST(LinuxLearn, SeccompRefusalsAndKillsAreNamedNotGranted) {
  auto o = observed({found(Op::syscall, "ptrace", "--seccomp relaxed", Verdict::refused),
                     found(Op::syscall, "keyctl", "--seccomp none", Verdict::refused)});
  auto text = lx::learn::render_profile(o);
  EXPECT_TRUE(has_line(text,
                       "# seccomp: the profile refused ptrace, keyctl with an error, as it will on every run "
                       "(--explain names the profile that allows them)"))
      << text;
  EXPECT_EQ(text.find("[seccomp]"), std::string::npos) << text;
  o = observed({found(Op::syscall, "one of clock_settime", "--seccomp relaxed", Verdict::killed)});
  EXPECT_TRUE(has_line(lx::learn::render_profile(o),
                       "# warning: the seccomp filter killed a process of the command; see --explain"));
}

TEST(LinuxLearn, LimitsReachedAreSuggestedWithHeadroomCommentedOut) {
  auto o = observed({found(Op::read, "/opt/tool/bin/tool", "--ro /opt/tool/bin/tool")});
  o.memory_peak = 100 * (int64_t{1} << 20) + 1, o.memory_source = "ru_maxrss";
  o.tasks_peak = 20, o.tasks_source = "seen";
  auto text = lx::learn::render_profile(o);
  EXPECT_TRUE(has_line(text, "# [limits]")) << text;
  EXPECT_TRUE(has_line(text, "# memory = \"201M\"  # peak 101 MiB: ru_maxrss")) << text;
  EXPECT_TRUE(has_line(text, "# pids = 80  # 20: seen")) << text;
  // Commented out: the profile enforces no limit, so a rerun cannot fail on one.
  auto parsed = toml::parse(text);
  EXPECT_FALSE(parsed.contains("limits")) << text;
  // Small figures get the floor; nothing measured, nothing written.
  EXPECT_EQ(lx::learn::memory_suggested(1), int64_t{64} << 20);
  EXPECT_EQ(lx::learn::tasks_suggested(3), 64);
  EXPECT_EQ(lx::learn::render_profile(observed({})).find("limits"), std::string::npos);
}

TEST(LinuxLearn, AWorkloadsNameCannotEndACommentOrAString) {
  auto text = lx::learn::render_profile(observed({
      found(Op::read, "/home/u/.ssh/x\nrw = [\"/\"]", "--ro '/home/u/.ssh/x\nrw = [\"/\"]'"),
      found(Op::read, "/opt/a\"b", "--ro '/opt/a\"b'"),
  }));
  auto parsed = toml::parse(text);
  ASSERT_TRUE(parsed["fs"]["ro"].as_array());
  EXPECT_EQ(parsed["fs"]["ro"].as_array()->size(), 1u) << text;
  EXPECT_EQ(*parsed["fs"]["ro"][0].value<std::string>(), "/opt/a\"b");
  EXPECT_FALSE(parsed["fs"]["rw"]) << text;
}

policy::Policy base() {
  policy::Policy p;
  p.cwd = "/w/proj";
  p.home = "/home/u";
  p.learn = "/w/proj/cage.toml";
  p.learn_origin = "--learn cage.toml";
  return p;
}

TEST(LinuxLearn, TheViewShowsTheHostReadOnlyAndHidesSecrets) {
  auto v = lx::learn::learning_view(base(), {"/home/u/.ssh"});
  ASSERT_TRUE(v) << v.error().reason;
  ASSERT_EQ(v->ro.size(), 1u);
  EXPECT_EQ(v->ro[0].path, "/");
  ASSERT_EQ(v->rw.size(), 1u);
  EXPECT_EQ(v->rw[0].path, "/w/proj");
  ASSERT_EQ(v->hide.size(), 1u);
  EXPECT_EQ(v->hide[0].path, "/home/u/.ssh");
  EXPECT_EQ(v->tmpfs.size(), 3u);
}

TEST(LinuxLearn, TheViewRefusesWhatWouldHandMoreThanMeant) {
  auto p = base();
  p.cwd = "/home/u";
  auto v = lx::learn::learning_view(p, {});
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().cls, ErrorClass::invalid_policy);
  EXPECT_EQ(v.error().input, "--learn cage.toml");
  p = base();
  p.share_net = true;
  EXPECT_FALSE(lx::learn::learning_view(p, {}));
  p = base();
  p.explain = true;
  v = lx::learn::learning_view(p, {});
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().cls, ErrorClass::usage_error);
  p = base();
  p.system_view = false;
  EXPECT_FALSE(lx::learn::learning_view(p, {}));
}

}  // namespace
}  // namespace cage
