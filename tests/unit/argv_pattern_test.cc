// [exec] run (argv_pattern.cc) and --exec (validate.cc): every placeholder accepts its good words
// and refuses each bad one with a usage_error naming the argument; the pattern itself is checked.
#include <gtest/gtest.h>

#include "policy/policy.h"

namespace cage::policy {
namespace {

std::vector<Value> words(std::initializer_list<const char*> ws) {
  std::vector<Value> out;
  for (const char* w : ws) out.push_back(Value{w, "p.toml:3:7 exec.run", "/w"});
  return out;
}

ArgvPattern pattern(std::initializer_list<const char*> ws) {
  auto p = parse_argv_pattern(words(ws));
  EXPECT_TRUE(p) << p.error().reason;
  return p ? *p : ArgvPattern{};
}

void expect_refused(const ArgvPattern& p, const std::vector<std::string>& argv, const std::string& input) {
  auto s = match_argv(p, argv);
  ASSERT_FALSE(s) << "accepted: " << input;
  EXPECT_EQ(s.error().cls, ErrorClass::usage_error);
  EXPECT_EQ(s.error().input, input);
  EXPECT_NE(s.error().remedy.find("p.toml:3:7 exec.run allows only: "), std::string::npos) << s.error().remedy;
}

TEST(ArgvPattern, LiteralsMustMatchExactly) {
  auto p = pattern({"git", "status"});
  EXPECT_TRUE(match_argv(p, {"git", "status"}));
  expect_refused(p, {"git", "push"}, "COMMAND argument 1 'push'");
  expect_refused(p, {"/usr/bin/git", "status"}, "COMMAND argument 0 '/usr/bin/git'");
  expect_refused(p, {"git"}, "COMMAND argument 1");
  expect_refused(p, {"git", "status", "-v"}, "COMMAND argument 2 '-v'");
}

TEST(ArgvPattern, UrlIsHttpsWithoutUserInformation) {
  auto p = pattern({"git", "clone", "{url}"});
  for (const char* good : {"https://github.com/a/b.git", "https://example.com", "https://h:8443/x?y#z",
                           "https://[::1]:443/r", "https://a-b.c/"})
    EXPECT_TRUE(match_argv(p, {"git", "clone", good})) << good;
  for (const char* bad : {"http://github.com/a", "ssh://git@github.com/a", "git@github.com:a/b", "https://",
                          "https://good.example@evil.example/", "https://u:p@h/", "https://h:0/", "https://h:65536/",
                          "https://h:x/", "https://-h/", "https://h h/", "https://h/\x01", "--upload-pack=x",
                          "https://[zz]/", "https://[::1/", "ext::sh -c x", "HTTPS://h/"})
    expect_refused(p, {"git", "clone", bad}, std::string("COMMAND argument 2 '") + bad + "'");
}

TEST(ArgvPattern, PathIsRelativeWithoutDotDot) {
  auto p = pattern({"cat", "{path}"});
  for (const char* good : {"a", "a/b.txt", ".", "./x", "a/..b", "..x/y", "a/b/", "dir/a:b"}) EXPECT_TRUE(match_argv(p, {"cat", good})) << good;
  for (const char* bad : {"", "/etc/passwd", "..", "../x", "a/../b", "a/..", "-n", "a\nb", "host:repo", "ext::sh -c x"})
    expect_refused(p, {"cat", bad}, std::string("COMMAND argument 1 '") + bad + "'");
}

TEST(ArgvPattern, ArgIsAnyWordButAnOption) {
  auto p = pattern({"echo", "{arg}", "{arg}"});
  EXPECT_TRUE(match_argv(p, {"echo", "hello world", "x"}));
  expect_refused(p, {"echo", "x", ""}, "COMMAND argument 2 ''");
  expect_refused(p, {"echo", "x", "-e"}, "COMMAND argument 2 '-e'");
  expect_refused(p, {"echo", "--", "x"}, "COMMAND argument 1 '--'");
}

TEST(ArgvPattern, PatternItselfIsChecked) {
  auto unknown = parse_argv_pattern(words({"git", "{branch}"}));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().cls, ErrorClass::invalid_policy);
  EXPECT_EQ(unknown.error().input, "p.toml:3:7 exec.run {branch}");
  auto first = parse_argv_pattern(words({"{arg}", "x"}));
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().input, "p.toml:3:7 exec.run {arg}");
  // Braces inside a word are a literal, not a placeholder.
  auto p = pattern({"find", ".", "-exec", "x{}y"});
  EXPECT_TRUE(match_argv(p, {"find", ".", "-exec", "x{}y"}));
}

PolicyInput run(std::vector<std::string> argv) {
  PolicyInput in;
  in.argv = std::move(argv);
  return in;
}

TEST(ValidateExec, PathsAreAbsoluteAndGlobsRefused) {
  auto in = run({"git"});
  in.exec = {Value{"bin/tool", "--exec", "/w"}, Value{"~/x", "--exec", "/w"}, Value{"/w/bin/tool", "--exec", "/w"}};
  auto p = validate(in, Context{"/w", "/home/ann", {}});
  ASSERT_TRUE(p) << p.error().reason;
  ASSERT_EQ(p->exec.size(), 2u);  // the same path twice is one allowance
  EXPECT_EQ(p->exec[0].path, "/w/bin/tool");
  EXPECT_EQ(p->exec[1].path, "/home/ann/x");
  in.exec = {Value{"/usr/lib/jvm/*/bin", "--exec", "/w"}};
  auto g = validate(in, Context{"/w", "/home/ann", {}});
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().cls, ErrorClass::invalid_policy);
  EXPECT_EQ(g.error().input, "--exec /usr/lib/jvm/*/bin");
}

TEST(ValidateExec, PinnedCommandLineIsMatched) {
  auto in = run({"git", "clone", "https://example.com/r.git"});
  in.exec_run = words({"git", "clone", "{url}"});
  auto p = validate(in, Context{"/w", "/home/ann", {}});
  ASSERT_TRUE(p) << p.error().reason;
  ASSERT_TRUE(p->argv_pattern);
  EXPECT_EQ(p->argv_pattern->words.size(), 3u);
  in.argv = {"git", "clone", "file:///etc"};
  auto bad = validate(in, Context{"/w", "/home/ann", {}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().cls, ErrorClass::usage_error);
  EXPECT_EQ(bad.error().input, "COMMAND argument 2 'file:///etc'");
}

}  // namespace
}  // namespace cage::policy
