// The macOS command lookup (macos::visible_path, macos::resolve_command, readable_in): PATH entries
// the profile hides are left out of the workload's PATH (macOS's execvp stops at their EPERM), and the
// command is found outside the sandbox among what the profile shows, with Linux's error classes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "cli/options.h"
#include "macos/compile.h"

namespace cage::testing {
namespace {

Result<policy::Policy> mac_policy(std::vector<std::string> words) {
  words.insert(words.begin(), "cage");
  auto inv = cli::parse(words, "/Users/ann/proj");
  if (!inv) return inv.error();
  return policy::validate(inv->input, policy::Context{"/Users/ann/proj", "/Users/ann", {}});
}

macos::MacHostFacts facts() {
  macos::MacHostFacts f;
  f.kind = [](const std::string& p) {
    return p.rfind("/Users/ann/tools", 0) == 0 || p == "/Users/ann/proj" ? macos::PathKind::dir
                                                                         : macos::PathKind::missing;
  };
  return f;
}

std::string env_path(const macos::MacPlan& plan) {
  for (const auto& e : plan.env)
    if (e.rfind("PATH=", 0) == 0) return e.substr(5);
  return "<none>";
}

// pyenv's shims in the home come before /usr/bin: they are left out (the profile hides the home), the
// system's and a granted tool directory stay, as do relative entries (the workload's own).
TEST(MacosPath, HiddenEntriesAreLeftOutOfTheWorkloadsPath) {
  auto pol = mac_policy({"--ro", "/Users/ann/tools", "--", "python3"});
  ASSERT_TRUE(pol) << pol.error().reason;
  const std::string path =
      "/Users/ann/.pyenv/shims:/Users/ann/tools/bin:/usr/bin:bin:/opt/homebrew/bin:/Users/x";
  auto plan = macos::compile(*pol, facts(), {{"PATH", path}});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(env_path(*plan), "/Users/ann/tools/bin:/usr/bin:bin:/opt/homebrew/bin");
  const std::vector<std::string> dropped = {"/Users/ann/.pyenv/shims", "/Users/x"};
  EXPECT_EQ(plan->path_dropped, dropped);
  EXPECT_TRUE(macos::readable_in(*plan, "/usr/bin/python3"));
  EXPECT_TRUE(macos::readable_in(*plan, "/Users/ann/proj/Makefile"));  // the shown current directory
  EXPECT_FALSE(macos::readable_in(*plan, "/Users/ann/.pyenv/shims/python3"));
}

// A --hide beneath a grant hides a PATH entry there too.
TEST(MacosPath, AHiddenPathIsNotReadable) {
  auto pol = mac_policy({"--ro", "/Users/ann/tools", "--hide", "/Users/ann/tools/secret", "--", "x"});
  ASSERT_TRUE(pol) << pol.error().reason;
  auto plan = macos::compile(*pol, facts(), {{"PATH", "/Users/ann/tools/secret/bin:/usr/bin"}});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(env_path(*plan), "/usr/bin");
  EXPECT_FALSE(macos::readable_in(*plan, "/Users/ann/tools/secret/bin/x"));
}

struct Files {
  std::map<std::string, macos::CommandFile> table;
  void add(const std::string& path, uint32_t mode, const std::string& real = "") {
    table[path] = macos::CommandFile{true, S_ISDIR(mode), mode, real.empty() ? path : real};
  }
  std::function<macos::CommandFile(const std::string&)> lookup() const {
    return [t = table](const std::string& p) {
      auto it = t.find(p);
      return it == t.end() ? macos::CommandFile{} : it->second;
    };
  }
};

bool visible(const std::string& p) {
  return p.rfind("/Users/ann", 0) != 0 || p.rfind("/Users/ann/proj", 0) == 0;
}

Result<std::string> resolve(const Files& f, const std::string& cmd,
                            const std::string& path = "/usr/local/bin:/usr/bin") {
  return macos::resolve_command(cmd, path, "/Users/ann/proj", f.lookup(), visible);
}

TEST(MacosCommand, FoundInTheFirstEntryThatHasItAndIsShown) {
  Files f;
  f.add("/usr/bin/python3", S_IFREG | 0755);
  f.add("/usr/local/bin/python3", S_IFREG | 0755, "/Users/ann/.pyenv/versions/3.12/bin/python3");
  // /usr/local/bin/python3 links into the hidden home: skipped, as the profile would deny its exec.
  auto exe = resolve(f, "python3");
  ASSERT_TRUE(exe) << exe.error().reason;
  EXPECT_EQ(*exe, "/usr/bin/python3");
  f.add("/usr/local/bin/python3", S_IFREG | 0755);
  EXPECT_EQ(*resolve(f, "python3"), "/usr/local/bin/python3");
  f.add("/Users/ann/proj/run.sh", S_IFREG | 0755);
  EXPECT_EQ(*resolve(f, "./run.sh"), "/Users/ann/proj/run.sh");  // relative to the working directory
}

TEST(MacosCommand, NotFoundNotVisibleNotExecutableAndSetuidAreToldApart) {
  Files f;
  auto err = [&](const std::string& cmd) { return resolve(f, cmd).error(); };
  EXPECT_EQ(err("nope").cls, ErrorClass::not_found);
  EXPECT_EQ(err("nope").input, "COMMAND nope");
  f.add("/Users/ann/.local/bin/tool", S_IFREG | 0755);
  auto hidden = macos::resolve_command("tool", "/Users/ann/.local/bin:/usr/bin", "/Users/ann/proj",
                                       f.lookup(), visible);
  ASSERT_FALSE(hidden);
  EXPECT_EQ(hidden.error().cls, ErrorClass::not_found);
  EXPECT_NE(hidden.error().reason.find("found on the host at /Users/ann/.local/bin/tool"), std::string::npos);
  f.add("/usr/bin/data", S_IFREG | 0644);
  EXPECT_EQ(err("data").cls, ErrorClass::exec_failed);
  f.add("/usr/bin/dir", S_IFDIR | 0755);
  EXPECT_EQ(err("dir").cls, ErrorClass::exec_failed);
  f.add("/usr/bin/sudo", S_IFREG | S_ISUID | 0755);
  EXPECT_EQ(err("sudo").cls, ErrorClass::capability_denied);
  EXPECT_EQ(err("/usr/bin/sudo").cls, ErrorClass::capability_denied);
  EXPECT_EQ(exit_status_of(err("nope")), 127);
  EXPECT_EQ(exit_status_of(err("data")), 126);
}

// The xcrun shims run tools from the developer directory xcode-select picks: DEVELOPER_DIR, else its
// link's target, else its default search; an Xcode bundle is shown whole (Info.plist, version.plist).
TEST(MacosDeveloperDir, AsXcodeSelectPicksIt) {
  using V = std::vector<std::string>;
  EXPECT_EQ(macos::developer_dirs("/Applications/Xcode-15.4.app/Contents/Developer/", std::nullopt),
            V{"/Applications/Xcode-15.4.app"});
  EXPECT_EQ(macos::developer_dirs("/Applications/Xcode-beta.app/Contents/Developer",
                                  "/Library/Developer/CommandLineTools"),
            V{"/Applications/Xcode-beta.app"});
  EXPECT_EQ(macos::developer_dirs("", "/Library/Developer/CommandLineTools"),
            V{"/Library/Developer/CommandLineTools"});
  EXPECT_EQ(macos::developer_dirs("relative", std::nullopt),
            (V{"/Applications/Xcode.app", "/Library/Developer/CommandLineTools"}));
}

// In the profile: the selected directory (not a fixed Xcode.app), the select links, dirhelper for
// confstr(_CS_DARWIN_USER_TEMP_DIR); the caller's DEVELOPER_DIR reaches the workload with it.
TEST(MacosDeveloperDir, ProfileShowsTheSelectedOneAndItsLinks) {
  auto pol = mac_policy({"--", "git", "status"});
  ASSERT_TRUE(pol) << pol.error().reason;
  auto f = facts();
  f.developer_dirs = macos::developer_dirs("/Applications/Xcode-15.4.app/Contents/Developer", std::nullopt);
  auto plan = macos::compile(*pol, f, {{"DEVELOPER_DIR", "/Applications/Xcode-15.4.app/Contents/Developer"}});
  ASSERT_TRUE(plan) << plan.error().reason;
  const std::string& sbpl = plan->sbpl;
  EXPECT_NE(sbpl.find("(allow file-read* (subpath \"/Applications/Xcode-15.4.app\"))"), std::string::npos)
      << sbpl;
  EXPECT_EQ(sbpl.find("\"/Applications/Xcode.app\""), std::string::npos);
  EXPECT_EQ(sbpl.find("CommandLineTools"), std::string::npos);
  EXPECT_NE(sbpl.find("(literal \"/private/var/db/xcode_select_link\")"), std::string::npos);
  EXPECT_NE(sbpl.find("(literal \"/private/var/select/developer_dir\")"), std::string::npos);
  EXPECT_NE(sbpl.find("(global-name \"com.apple.bsd.dirhelper\")"), std::string::npos);
  EXPECT_EQ(sbpl.find("/private/var/folders"), std::string::npos) << "the real per-user temp stays closed";
  EXPECT_NE(std::find(plan->env.begin(), plan->env.end(),
                      "DEVELOPER_DIR=/Applications/Xcode-15.4.app/Contents/Developer"),
            plan->env.end());
  auto bare = mac_policy({"--no-system", "--", "true"});
  ASSERT_TRUE(bare);
  auto none = macos::compile(*bare, f, {{"DEVELOPER_DIR", "/x"}});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->sbpl.find("Xcode"), std::string::npos) << "--no-system drops the developer directory";
}

}  // namespace
}  // namespace cage::testing
