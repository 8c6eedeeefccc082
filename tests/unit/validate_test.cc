// validate(): a valid and an invalid case for every flag; invalid cases assert the class and input.
#include <gtest/gtest.h>

#include "policy/policy.h"
#include "policy/summary.h"

namespace cage::policy {
namespace {

Context ctx() { return Context{"/w", "/home/ann", {}}; }

PolicyInput with_cmd() {
  PolicyInput in;
  in.argv = {"true"};
  return in;
}

Value v(std::string text, std::string origin) { return Value{std::move(text), std::move(origin), "/w"}; }

void expect_invalid(const PolicyInput& in, const std::string& input_prefix) {
  auto p = validate(in, ctx());
  ASSERT_FALSE(p) << "accepted: " << input_prefix;
  EXPECT_EQ(p.error().cls, ErrorClass::invalid_policy);
  EXPECT_EQ(p.error().input.rfind(input_prefix, 0), 0u) << p.error().input;
}

TEST(Validate, NoCommandIsAUsageError) {
  auto p = validate(PolicyInput{}, ctx());
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().cls, ErrorClass::usage_error);
}

// --limits default fills each limit not given; one given beside it wins; an unknown name is refused.
TEST(Validate, LimitsPresetFillsOnlyWhatIsNotGiven) {
  auto in = with_cmd();
  in.limits_preset = v("default", "--limits");
  auto p = validate(in, ctx());
  ASSERT_TRUE(p) << p.error().reason;
  EXPECT_EQ(p->limits.memory_bytes, 4ULL << 30);
  EXPECT_EQ(p->limits.pids, 1024u);
  EXPECT_EQ(p->limits.timeout_ms, 1800000u);
  EXPECT_EQ(p->limits.tmpfs_bytes, 1ULL << 30);
  EXPECT_EQ(p->limits.max_stdout, 16ULL << 20);
  EXPECT_EQ(p->limits.max_stderr, 16ULL << 20);
  in.memory = v("1G", "--memory");
  in.max_stderr = v("0", "--max-stderr");
  p = validate(in, ctx());
  ASSERT_TRUE(p) << p.error().reason;
  EXPECT_EQ(p->limits.memory_bytes, 1ULL << 30);
  EXPECT_EQ(p->limits.max_stderr, 0u);
  EXPECT_EQ(p->limits.max_stdout, 16ULL << 20);
  in.limits_preset = v("generous", "--limits");
  expect_invalid(in, "--limits generous");
}

// --explain: a way of running, outside the policy hash; refused where only Linux carries it out.
TEST(Validate, ExplainIsABooleanOutsideThePolicy) {
  auto in = with_cmd();
  in.explain = v("true", "--explain");
  auto p = validate(in, ctx());
  ASSERT_TRUE(p) << p.error().reason;
  EXPECT_TRUE(p->explain);
  auto refused = refuse_linux_only(*p, "macOS");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(refused.error().input, "--explain");
  in.explain = v("maybe", "--explain");
  expect_invalid(in, "--explain");
}

// --learn FILE: an absolute file name, kept with its flag for messages; refused off Linux.
TEST(Validate, LearnIsAFileResolvedAgainstTheBase) {
  auto in = with_cmd();
  in.learn = v("cage.toml", "--learn");
  auto p = validate(in, ctx());
  ASSERT_TRUE(p) << p.error().reason;
  EXPECT_EQ(p->learn, "/w/cage.toml");
  EXPECT_EQ(p->learn_origin, "--learn cage.toml");
  auto refused = refuse_linux_only(*p, "macOS");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().input, "--learn cage.toml");
  in.learn = v("", "--learn");
  expect_invalid(in, "--learn ");
}

TEST(Validate, PathsResolveAgainstBaseAndHome) {
  auto in = with_cmd();
  in.ro = {v("src", "--ro"), v("~/notes", "--ro"), v("/a//b/./c/", "--ro")};
  auto p = validate(in, ctx());
  ASSERT_TRUE(p);
  ASSERT_EQ(p->ro.size(), 3u);
  EXPECT_EQ(p->ro[0].path, "/w/src");
  EXPECT_EQ(p->ro[1].path, "/home/ann/notes");
  EXPECT_EQ(p->ro[2].path, "/a/b/c");
  EXPECT_EQ(p->ro[0].origin, "--ro src");
}

TEST(Validate, BadPathsAreRefused) {
  for (const char* bad : {"", "~bob/x", "a\nb", "x\x01"}) {
    auto in = with_cmd();
    in.rw = {v(bad, "--rw")};
    expect_invalid(in, "--rw");
  }
}

// Issue 20, point 2: a relative --rw landing on $HOME, an ancestor, / or a system directory is
// refused; the same directory named absolutely, a project beneath it, or --ro of it is accepted.
TEST(Validate, WideRelativeRwIsRefusedAbsoluteIsNot) {
  auto at = [](std::string text, std::string base) { return Value{std::move(text), "--rw", std::move(base)}; };
  for (auto [text, base] : std::initializer_list<std::pair<const char*, const char*>>{
           {".", "/home/ann"}, {"..", "/home/ann/proj"}, {"ann", "/home"}, {".", "/home"}, {".", "/"},
           {".", "/usr"}, {"..", "/usr/share"}, {"./etc/", "/"}, {"tmp", "/"}}) {
    auto in = with_cmd();
    in.rw = {at(text, base)};
    auto p = validate(in, ctx());
    ASSERT_FALSE(p) << "accepted --rw " << text << " from " << base;
    EXPECT_EQ(p.error().cls, ErrorClass::invalid_policy);
    EXPECT_NE(p.error().remedy.find("absolutely"), std::string::npos);
  }
  for (auto [text, base] : std::initializer_list<std::pair<const char*, const char*>>{
           {"/home/ann", "/w"}, {"~", "/w"}, {"/usr", "/w"}, {".", "/home/ann/proj"}, {"proj", "/home/ann"},
           {"local/x", "/usr"}}) {
    auto in = with_cmd();
    in.rw = {at(text, base)};
    EXPECT_TRUE(validate(in, ctx())) << "refused --rw " << text << " from " << base;
  }
  auto in = with_cmd();
  in.ro = {Value{".", "--ro", "/home/ann"}};
  EXPECT_TRUE(validate(in, ctx()));
}

TEST(Validate, SamePathTwoWaysIsRefused) {
  auto in = with_cmd();
  in.ro = {v("out", "--ro")};
  in.rw = {v("/w/out", "--rw")};
  expect_invalid(in, "--rw /w/out");
}

TEST(Validate, TmpfsAndHideOfRootAreRefused) {
  auto in = with_cmd();
  in.tmpfs = {v("/", "--tmpfs")};
  expect_invalid(in, "--tmpfs");
  in = with_cmd();
  in.hide = {v("/", "--hide")};
  expect_invalid(in, "--hide");
}

// --tmpfs PATH[:size=SIZE]: the size is the text after the last ':' only when it starts "size=", so
// a path may hold ':' anywhere; a bad or empty size is refused naming the flag.
TEST(Validate, TmpfsSizes) {
  auto in = with_cmd();
  in.tmpfs = {v("/scratch:size=8M", "--tmpfs"), v("/a:b", "--tmpfs"), v("/c:size=1G:size=2M", "--tmpfs")};
  in.tmpfs_size = v("64M", "--tmpfs-size");
  auto p = validate(in, ctx());
  ASSERT_TRUE(p) << p.error().reason;
  ASSERT_EQ(p->tmpfs.size(), 3u);
  EXPECT_EQ(p->tmpfs[0].path, "/scratch");
  EXPECT_EQ(p->tmpfs[0].size_bytes, 8u << 20);
  EXPECT_EQ(p->tmpfs[1].path, "/a:b");
  EXPECT_EQ(p->tmpfs[1].size_bytes, 0u);
  EXPECT_EQ(p->tmpfs[2].path, "/c:size=1G");
  EXPECT_EQ(p->tmpfs[2].size_bytes, 2u << 20);
  EXPECT_EQ(p->limits.tmpfs_bytes, 64u << 20);
  for (const char* bad : {"/x:size=", "/x:size=abc", "/x:size=0", "/x:size=512K", ":size=1G"}) {
    in = with_cmd();
    in.tmpfs = {v(bad, "--tmpfs")};
    expect_invalid(in, std::string("--tmpfs ") + bad);
  }
  in = with_cmd();
  in.tmpfs_size = v("lots", "--tmpfs-size");
  expect_invalid(in, "--tmpfs-size lots");
}

TEST(Validate, Environment) {
  auto in = with_cmd();
  in.env_pass = {v("LC_*", "--env")};
  in.env_set = {v("A=b=c", "--setenv")};
  in.env_unset = {v("TERM", "--unsetenv")};
  auto p = validate(in, ctx());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->env.set[0], (std::pair<std::string, std::string>{"A", "b=c"}));
  for (auto [list, bad] : {std::pair{&PolicyInput::env_pass, "1X"}, {&PolicyInput::env_set, "NOEQUALS"},
                           {&PolicyInput::env_set, "A-B=1"}, {&PolicyInput::env_unset, "A B"}}) {
    auto b = with_cmd();
    (b.*list) = {v(bad, "--x")};
    expect_invalid(b, "--x");
  }
}

// --secret: sources only (a file made absolute, a descriptor, a variable); a value on the command
// line, a bad name or a name given twice is refused naming the flag. The hash input has no value.
TEST(Validate, SecretsAreSourcesNeverValues) {
  auto in = with_cmd();
  in.env_secret = {v("TOKEN=@~/.token", "--secret"), v("B=@rel/t", "--secret"), v("C=fd:3", "--secret"),
                   v("D=env:GH_TOKEN", "--secret")};
  auto p = validate(in, ctx());
  ASSERT_TRUE(p) << p.error().reason;
  ASSERT_EQ(p->env.secrets.size(), 4u);
  EXPECT_EQ(p->env.secrets[0].source, "@/home/ann/.token");
  EXPECT_EQ(p->env.secrets[1].source, "@/w/rel/t");
  EXPECT_EQ(p->env.secrets[2].source, "fd:3");
  EXPECT_EQ(p->env.secrets[3].source, "env:GH_TOKEN");
  for (const char* bad : {"TOKEN=hunter2", "TOKEN", "1X=@f", "T=fd:", "T=fd:x", "T=env:", "T=@"}) {
    auto b = with_cmd();
    b.env_secret = {v(bad, "--secret")};
    expect_invalid(b, "--secret");
  }
  auto twice = with_cmd();
  twice.env_secret = {v("T=@a", "--secret"), v("T=@b", "--secret")};
  expect_invalid(twice, "--secret");
}

TEST(Validate, TimeoutAndRlimits) {
  auto in = with_cmd();
  in.timeout = v("1.5s", "--timeout");
  in.rlimits = {v("nofile=64", "--rlimit"), v("core=0:unlimited", "--rlimit"), v("nofile=128", "--rlimit")};
  auto p = validate(in, ctx());
  ASSERT_TRUE(p);
  EXPECT_EQ(*p->limits.timeout_ms, 1500u);
  ASSERT_EQ(p->limits.rlimits.size(), 2u);  // the later nofile replaces the earlier one
  EXPECT_EQ(p->limits.rlimits[1].soft, 128u);
  for (auto [text, ms] : std::vector<std::pair<const char*, uint64_t>>{
           {"90", 90000}, {"500ms", 500}, {"2m", 120000}, {"1m30s", 90000}, {"1h30m", 5400000}, {"2h5m10s", 7510000}}) {
    auto d = with_cmd();
    d.timeout = v(text, "--timeout");
    auto pd = validate(d, ctx());
    ASSERT_TRUE(pd) << text;
    EXPECT_EQ(*pd->limits.timeout_ms, ms) << text;
    // --dry-run shows it in units it takes back: the same milliseconds again.
    auto again = with_cmd();
    again.timeout = v(human_duration(ms), "--timeout");
    auto pa = validate(again, ctx());
    ASSERT_TRUE(pa) << human_duration(ms);
    EXPECT_EQ(*pa->limits.timeout_ms, ms) << human_duration(ms);
  }
  EXPECT_EQ(human_duration(300000), "5m");
  EXPECT_EQ(human_duration(90000), "1m30s");
  EXPECT_EQ(human_duration(1500), "1s500ms");
  for (const char* bad : {"0", "-1s", "abc", "5x", "", "1e400", "1m30", "s", "1.2.3s", "1m-5s", "0s0m"}) {
    auto b = with_cmd();
    b.timeout = v(bad, "--timeout");
    expect_invalid(b, "--timeout");
  }
  auto sized = with_cmd();
  sized.rlimits = {v("fsize=1G:2G", "--rlimit")};
  auto ps = validate(sized, ctx());
  ASSERT_TRUE(ps);
  EXPECT_EQ(ps->limits.rlimits[0].soft, 1ull << 30);
  EXPECT_EQ(ps->limits.rlimits[0].hard, 2ull << 30);
  for (const char* bad : {"nofile", "bogus=1", "nofile=abc", "nofile=10:5", "fsize=1Q", "fsize=99999999T"}) {
    auto b = with_cmd();
    b.rlimits = {v(bad, "--rlimit")};
    expect_invalid(b, "--rlimit");
  }
}

TEST(Validate, SizesPidsCpu) {
  auto in = with_cmd();
  in.memory = v("512M", "--memory");
  in.pids = v("64", "--pids");
  in.cpu = v("1.5", "--cpu");
  auto p = validate(in, ctx());
  ASSERT_TRUE(p);
  EXPECT_EQ(*p->limits.memory_bytes, 512ull << 20);
  EXPECT_EQ(*p->limits.pids, 64u);
  EXPECT_DOUBLE_EQ(*p->limits.cpu, 1.5);
  for (auto [text, bytes] : std::vector<std::pair<const char*, uint64_t>>{
           {"2GiB", 2ull << 30}, {"512MiB", 512ull << 20}, {"512MB", 512ull << 20}, {"1.5g", 3ull << 29}}) {
    auto s = with_cmd();
    s.memory = v(text, "--memory");
    auto psz = validate(s, ctx());
    ASSERT_TRUE(psz) << text;
    EXPECT_EQ(*psz->limits.memory_bytes, bytes) << text;
  }
  for (const char* bad : {"12Q", "0", "-5M", "10", "2iB", "2Gi B", "GiB"}) {
    auto b = with_cmd();
    b.memory = v(bad, "--memory");
    expect_invalid(b, "--memory");
  }
  for (const char* bad : {"0", "-1", "x", "99999999"}) {
    auto b = with_cmd();
    b.pids = v(bad, "--pids");
    expect_invalid(b, "--pids");
  }
  auto b = with_cmd();
  b.cpu = v("0", "--cpu");
  expect_invalid(b, "--cpu");
}

TEST(Validate, SeccompProfiles) {
  for (auto [name, want] : {std::pair{"default", SeccompProfile::default_profile}, {"relaxed", SeccompProfile::relaxed},
                            {"none", SeccompProfile::none}}) {
    auto in = with_cmd();
    in.seccomp = v(name, "--seccomp");
    auto p = validate(in, ctx());
    ASSERT_TRUE(p);
    EXPECT_EQ(p->seccomp, want);
  }
  auto in = with_cmd();
  in.seccomp = v("off", "--seccomp");
  expect_invalid(in, "--seccomp off");
}

TEST(Validate, NetRulesAndShareNetExcludeEachOther) {
  auto in = with_cmd();
  in.net = {v("api.github.com:443", "--net")};
  ASSERT_TRUE(validate(in, ctx()));
  in.share_net = v("true", "--share-net");
  expect_invalid(in, "--share-net");
  auto b = with_cmd();
  b.net = {v("no-port", "--net")};
  expect_invalid(b, "--net no-port");
}

TEST(Validate, NetModeNeedsNet) {
  auto in = with_cmd();
  in.net_mode = v("proxy", "--net-mode");
  expect_invalid(in, "--net-mode proxy");
  auto p = validate(in, ctx());
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().reason.find("--net-mode without --net"), std::string::npos) << p.error().reason;
  in.net = {v("https://registry.example.org/", "--net")};  // twin: with a destination (a URL) it holds
  auto ok = validate(in, ctx());
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->net.size(), 1u);
  EXPECT_EQ(ok->net[0].pattern.text, "registry.example.org:443");
  EXPECT_EQ(ok->net[0].origin, "--net https://registry.example.org/");
}

TEST(Validate, HostnameAndChdir) {
  auto in = with_cmd();
  in.hostname = v("box-1", "--hostname");
  in.chdir = v("sub", "--chdir");
  auto p = validate(in, ctx());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->hostname, "box-1");
  EXPECT_EQ(p->cwd, "/w/sub");
  in.hostname = v("bad name", "--hostname");
  expect_invalid(in, "--hostname");
}

// A current directory that is gone (ctx.cwd empty): only an absolute --chdir does without it.
TEST(Validate, GoneCurrentDirectoryNeedsAnAbsoluteChdir) {
  const Context gone{"", "/home/ann", {}};
  auto in = with_cmd();
  auto none = validate(in, gone);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().cls, ErrorClass::invalid_policy);
  EXPECT_EQ(none.error().input, "cwd");
  in.chdir = Value{"/srv/app", "--chdir", ""};
  auto abs = validate(in, gone);
  ASSERT_TRUE(abs) << abs.error().reason;
  EXPECT_EQ(abs->cwd, "/srv/app");
  in.chdir = Value{"sub", "--chdir", ""};
  auto rel = validate(in, gone);
  ASSERT_FALSE(rel);
  EXPECT_EQ(rel.error().input, "--chdir sub");
  EXPECT_NE(rel.error().reason.find("current directory"), std::string::npos) << rel.error().reason;
}

TEST(Environment, DefaultSetPassesNoSecrets) {
  EnvPolicy env;
  env.pass = {"MY_*"};
  env.set = {{"X", "1"}};
  env.unset = {"TERM"};
  auto out = build_environment(env,
                               {{"PATH", "/usr/bin"}, {"TERM", "xterm"}, {"AWS_SECRET_ACCESS_KEY", "s3cr3t"},
                                {"LC_ALL", "C"}, {"MY_VAR", "y"}, {"LD_PRELOAD", "/evil.so"}},
                               {{"HOME", "/home/ann"}});
  auto has = [&](const std::string& e) { return std::find(out.begin(), out.end(), e) != out.end(); };
  EXPECT_TRUE(has("PATH=/usr/bin"));
  EXPECT_TRUE(has("LC_ALL=C"));
  EXPECT_TRUE(has("MY_VAR=y"));
  EXPECT_TRUE(has("X=1"));
  EXPECT_TRUE(has("HOME=/home/ann"));
  EXPECT_FALSE(has("TERM=xterm"));
  for (const auto& e : out) {
    EXPECT_EQ(e.find("SECRET"), std::string::npos);
    EXPECT_EQ(e.find("LD_PRELOAD"), std::string::npos);
  }
}

TEST(Environment, GlobMatching) {
  EXPECT_TRUE(env_glob_match("LC_*", "LC_ALL"));
  EXPECT_TRUE(env_glob_match("*", "X"));
  EXPECT_TRUE(env_glob_match("A?C", "ABC"));
  EXPECT_FALSE(env_glob_match("LC_*", "LANG"));
  EXPECT_FALSE(env_glob_match("A?C", "AC"));
}

}  // namespace
}  // namespace cage::policy
