#include <gtest/gtest.h>

#include <sstream>

#include "cli/options.h"
#include "fake_host_view.h"

namespace cage::testing {

policy::Policy policy_of(std::vector<std::string> words) {
  words.insert(words.begin(), "cage");
  auto inv = cli::parse(words, "/home/ann/proj");
  EXPECT_TRUE(inv) << inv.error().reason;
  policy::Context ctx{"/home/ann/proj", "/home/ann", {}};
  auto p = policy::validate(inv->input, ctx);
  EXPECT_TRUE(p) << p.error().input << ": " << p.error().reason;
  return p ? *p : policy::Policy{};
}

namespace {

Result<cli::Invocation> parse(std::vector<std::string> words) {
  words.insert(words.begin(), "cage");
  return cli::parse(words, "/w");
}

TEST(Cli, CommandAfterDoubleDashKeepsItsOwnFlags) {
  auto inv = parse({"--ro", "src", "--", "ls", "-la", "--ro"});
  ASSERT_TRUE(inv);
  EXPECT_EQ(inv->input.argv, (std::vector<std::string>{"ls", "-la", "--ro"}));
  ASSERT_EQ(inv->input.ro.size(), 1u);
  EXPECT_EQ(inv->input.ro[0].text, "src");
  EXPECT_EQ(inv->input.ro[0].origin, "--ro");
  EXPECT_EQ(inv->input.ro[0].base, "/w");
}

TEST(Cli, CommandWithoutDoubleDashStopsOptionParsing) {
  auto inv = parse({"--rw", "out", "make", "-j4"});
  ASSERT_TRUE(inv);
  EXPECT_EQ(inv->input.argv, (std::vector<std::string>{"make", "-j4"}));
  // cage's flags after the command's first word are the command's (CLI11 alone took them as cage's).
  auto later = parse({"--dry-run", "make", "--rw", "/tmp"});
  ASSERT_TRUE(later);
  EXPECT_EQ(later->input.argv, (std::vector<std::string>{"make", "--rw", "/tmp"}));
  EXPECT_TRUE(later->input.rw.empty());
}

// A "--" after the command's first word is the command's (`cage ./x a -- b`, `sh -c CODE x -- y`).
TEST(Cli, DoubleDashAfterTheCommandIsTheCommands) {
  auto inv = parse({"--rw", "out", "./x", "a", "--", "b"});
  ASSERT_TRUE(inv) << inv.error().reason;
  EXPECT_EQ(inv->input.argv, (std::vector<std::string>{"./x", "a", "--", "b"}));
  auto sh = parse({"sh", "-c", "echo \"$@\"", "x", "--", "--rw"});
  ASSERT_TRUE(sh) << sh.error().reason;
  EXPECT_EQ(sh->input.argv, (std::vector<std::string>{"sh", "-c", "echo \"$@\"", "x", "--", "--rw"}));
  EXPECT_TRUE(sh->input.rw.empty());
}

// Shebang use is known only from --script (never from a file's content): the options after it are
// the script line's, based on the script's directory; those before it stay the caller's.
TEST(Cli, ScriptOptionsAreTheScriptsAndCallerOptionsStayTheCallers) {
  auto inv = parse({"--rw", "build", "--script", "--profile", "./p.toml", "--ro", ".", "--", "python3",
                    "tools/x.py", "--rw", "a"});
  ASSERT_TRUE(inv) << inv.error().reason;
  EXPECT_EQ(inv->script, "tools/x.py");
  EXPECT_EQ(inv->script_interpreter, "python3");
  EXPECT_EQ(inv->script_args, (std::vector<std::string>{"--rw", "a"}));
  ASSERT_EQ(inv->input.rw.size(), 1u);
  EXPECT_EQ(inv->input.rw[0].base, "/w");
  ASSERT_EQ(inv->script_line.ro.size(), 1u);
  EXPECT_EQ(inv->script_line.ro[0].base, "/w/tools");
  ASSERT_EQ(inv->profiles.size(), 1u);
  EXPECT_EQ(inv->profiles[0].base, "/w/tools");
  EXPECT_TRUE(inv->input.argv.empty());
}

TEST(Cli, WithoutScriptEveryRelativePathIsTheCallers) {
  auto inv = parse({"--profile", "./cage.toml", "--rw", "./build", "--", "python3", "third_party/build.py"});
  ASSERT_TRUE(inv);
  EXPECT_TRUE(inv->script.empty());
  EXPECT_EQ(inv->profiles[0].base, "/w");
  EXPECT_EQ(inv->input.rw[0].base, "/w");
}

TEST(Cli, KernelShebangArgumentIsSplitOnlyAfterScript) {
  // #!/usr/bin/cage --script --rw out -- sh: the kernel passes the line as one word.
  auto inv = parse({"--script --rw out -- sh", "/s/t.sh", "a b"});
  ASSERT_TRUE(inv) << inv.error().reason;
  EXPECT_EQ(inv->script, "/s/t.sh");
  EXPECT_EQ(inv->script_interpreter, "sh");
  EXPECT_EQ(inv->script_args, (std::vector<std::string>{"a b"}));
  EXPECT_EQ(inv->script_line.rw[0].base, "/s");
  auto other = parse({"--rw out -- sh", "/s/t.sh"});  // only a word starting with --script is split
  EXPECT_TRUE(!other || (other->script.empty() && other->input.rw.empty()));
  auto plain = parse({"--script", "/s/t.sh", "--help"});  // words after FILE go to the script
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->mode, cli::Mode::run);
  EXPECT_EQ(plain->script_args, (std::vector<std::string>{"--help"}));
  EXPECT_FALSE(parse({"--script", "--rw", "out"}));      // no FILE
  EXPECT_FALSE(parse({"--script", "--script", "x"}));    // twice
  EXPECT_FALSE(parse({"--script", "--", "sh"}));         // interpreter without FILE
  auto cmd = parse({"--rw", "out", "make", "--script", "x"});  // the command's own word
  ASSERT_TRUE(cmd);
  EXPECT_TRUE(cmd->script.empty());
  EXPECT_EQ(cmd->input.argv, (std::vector<std::string>{"make", "--script", "x"}));
}

// The kernel's form: the script is the kernel's next argument whatever the #! line ends with. A line
// ending in an option that takes a value took the script's path as that value and made the caller's
// first argument the script (found by review); it is an error naming the option.
TEST(Cli, KernelShebangLineNeverTakesTheScriptAsAValue) {
  auto attack = parse({"--script --rw out --ro", "/s/tool.sh", "/u/arg.sh"});
  ASSERT_FALSE(attack);
  EXPECT_EQ(attack.error().cls, ErrorClass::usage_error);
  EXPECT_EQ(attack.error().input, "--ro");
  EXPECT_NE(attack.error().reason.find("value"), std::string::npos) << attack.error().reason;
  auto before_dash = parse({"--script --rw -- sh", "/s/tool.sh"});
  ASSERT_FALSE(before_dash);
  EXPECT_EQ(before_dash.error().input, "--rw");
  // Twins: the value on the line; a flag (no value) last; the interpreter form.
  auto twin = parse({"--script --ro /data --rw out", "/s/tool.sh", "/u/arg.sh"});
  ASSERT_TRUE(twin) << twin.error().reason;
  EXPECT_EQ(twin->script, "/s/tool.sh");
  EXPECT_EQ(twin->script_args, (std::vector<std::string>{"/u/arg.sh"}));
  ASSERT_EQ(twin->script_line.rw.size(), 1u);
  EXPECT_EQ(twin->script_line.rw[0].base, "/s");
  auto flag = parse({"--script --rw out --no-cwd", "/s/tool.sh", "x"});
  ASSERT_TRUE(flag) << flag.error().reason;
  EXPECT_EQ(flag->script, "/s/tool.sh");
  auto interp = parse({"--script  --rw=out\t-- sh", "/s/tool.sh"});
  ASSERT_TRUE(interp) << interp.error().reason;
  EXPECT_EQ(interp->script_interpreter, "sh");
  EXPECT_EQ(interp->script, "/s/tool.sh");
  // The line has no say over which file is the script: no path word, no --script=FILE, one interpreter word.
  EXPECT_FALSE(parse({"--script --rw out other.sh", "/s/tool.sh"}));
  EXPECT_FALSE(parse({"--script=other.sh --rw out", "/s/tool.sh"}));
  EXPECT_FALSE(parse({"--script -- python3 -u", "/s/tool.py"}));
  EXPECT_FALSE(parse({"--script --ro .", }));  // no script path from the kernel
}

TEST(Cli, UnknownFlagIsAUsageErrorNamingIt) {
  auto inv = parse({"--rox", "x", "--", "true"});
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().cls, ErrorClass::usage_error);
  EXPECT_NE(inv.error().input.find("rox") == std::string::npos ? inv.error().reason.find("rox")
                                                                  : inv.error().input.find("rox"),
            std::string::npos);
}

TEST(Cli, MissingValueIsAUsageError) {
  auto inv = parse({"--ro"});
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().cls, ErrorClass::usage_error);
  EXPECT_EQ(inv.error().input, "--ro");
  EXPECT_EQ(inv.error().reason, "needs a value (PATH)");  // not CLI11's "ArgumentMismatch: ..."
}

// A flag from bwrap, firejail or docker run gets cage's way of doing it; a near miss "did you mean".
TEST(Cli, UnknownFlagGetsCagesEquivalentOrANearMiss) {
  auto remedy = [](std::vector<std::string> words) {
    auto inv = parse(std::move(words));
    EXPECT_FALSE(inv);
    return inv ? std::string() : inv.error().input + " | " + inv.error().remedy;
  };
  EXPECT_EQ(remedy({"--ro-bind", "/a", "/a", "--", "true"}).rfind("--ro-bind | cage grants a path at the same path", 0), 0u);
  EXPECT_NE(remedy({"--unshare-net", "--", "true"}).find("no network by default"), std::string::npos);
  EXPECT_NE(remedy({"--private=/tmp/x", "--", "true"}).find("--private | not needed: the home directory is private"),
            std::string::npos);
  EXPECT_EQ(remedy({"--blacklist=/x", "true"}), "--blacklist | --hide PATH");
  EXPECT_EQ(remedy({"--timout", "5", "--", "true"}), "--timout | did you mean --timeout?");
  EXPECT_EQ(remedy({"--net-mod", "proxy", "--", "true"}), "--net-mod | did you mean --net-mode?");
  EXPECT_EQ(remedy({"--mem", "1G", "--", "true"}), "--mem | did you mean --memory?");
  EXPECT_EQ(remedy({"--frobnicate", "--", "true"}), "--frobnicate | see cage --help");
}

TEST(Cli, HelpFitsOneHundredColumns) {
  auto inv = parse({"--help"});
  ASSERT_TRUE(inv);
  std::istringstream lines(inv->help_text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_NE(inv->help_text.find("--allow-degraded"), std::string::npos);
}

TEST(Cli, ModesAreRecognised) {
  EXPECT_EQ(parse({"--version"})->mode, cli::Mode::version);
  EXPECT_EQ(parse({"--check", "--json"})->mode, cli::Mode::check);
  EXPECT_EQ(parse({"--dry-run", "--", "true"})->mode, cli::Mode::dry_run);
  EXPECT_EQ(parse({"--help"})->mode, cli::Mode::help);
  EXPECT_FALSE(parse({"--target", "macos", "--", "true"}));  // --target needs --dry-run
}

// --verbose (-v) chooses the whole plan over --dry-run's summary; alone it would do nothing: refused.
TEST(Cli, VerboseGoesWithDryRun) {
  EXPECT_FALSE(parse({"--dry-run", "--", "true"})->verbose);
  EXPECT_TRUE(parse({"--dry-run", "--verbose", "--", "true"})->verbose);
  EXPECT_TRUE(parse({"-v", "--dry-run", "--", "true"})->verbose);
  auto alone = parse({"--verbose", "--", "true"});
  ASSERT_FALSE(alone);
  EXPECT_EQ(alone.error().cls, ErrorClass::usage_error);
  EXPECT_EQ(alone.error().input, "--verbose");
  // Without "--", -v is cage's option and the command starts after it.
  auto cmd = parse({"--dry-run", "-v", "make", "-v"});
  ASSERT_TRUE(cmd);
  EXPECT_TRUE(cmd->verbose);
  EXPECT_EQ(cmd->input.argv, (std::vector<std::string>{"make", "-v"}));
}

TEST(Cli, HelpListsEveryFlag) {
  auto inv = parse({"--help"});
  ASSERT_TRUE(inv);
  for (const char* f : {"--ro", "--rw", "--tmpfs", "--hide", "--no-system", "--no-cwd", "--env", "--setenv",
                        "--unsetenv", "--net", "--share-net", "--seccomp", "--timeout", "--rlimit", "--dry-run",
                        "--json", "--json-errors", "--check", "--version"})
    EXPECT_NE(inv->help_text.find(f), std::string::npos) << f;
}

TEST(Cli, JsonErrorsIsSeenBeforeParsing) {
  EXPECT_TRUE(cli::wants_json_errors({"cage", "--json-errors", "--bogus"}));
  EXPECT_FALSE(cli::wants_json_errors({"cage", "--", "prog", "--json-errors"}));
}

}  // namespace
}  // namespace cage::testing
