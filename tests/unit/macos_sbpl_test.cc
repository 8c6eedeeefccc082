// macos::compile_sbpl: golden profiles (tests/golden/macos_*.sbpl) and invariants: the profile reads
// as balanced s-expressions, grants appear as escaped literals at their /private paths, hidden paths
// are denied after the grants, nothing of the home is allowed beyond grants, only the proxy is reachable.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/options.h"
#include "macos/compile.h"
#include "golden.h"
#include "sbpl_parse.h"

namespace cage::testing {
namespace {

struct Mac {
  std::map<std::string, std::string> links;  // symbolic links of the user's: path -> target (absolute)
  std::map<std::string, macos::PathKind> kinds = {
      {"/Users/ann/proj", macos::PathKind::dir},      {"/Users/ann/proj/src", macos::PathKind::dir},
      {"/Users/ann/proj/out", macos::PathKind::dir},  {"/Users/ann/proj/.env", macos::PathKind::file},
      {"/Users/ann/proj/Makefile", macos::PathKind::file}, {"/tmp/build", macos::PathKind::dir},
      {"/etc/hosts", macos::PathKind::file},          {"/Users/ann", macos::PathKind::dir}};
  macos::MacHostFacts facts() const {
    macos::MacHostFacts f;
    f.kind = [k = kinds](const std::string& p) {
      auto it = k.find(policy::resolve_dot_dot(p));  // stat(2) resolves `..` (links aside)
      return it == k.end() ? macos::PathKind::missing : it->second;
    };
    f.proxy_port = 49152;
    // realpath(3): the user's links, then the system's /tmp, /var and /etc links.
    if (!links.empty())
      f.resolve = [l = links](const std::string& p) -> std::optional<std::string> {
        std::string r = p;
        for (const auto& [from, to] : l)
          if (policy::is_beneath(p, from)) r = to + p.substr(from.size());
        for (const char* fixed : {"/tmp", "/var", "/etc"})
          if (policy::is_beneath(r, fixed)) r = "/private" + r;
        return policy::resolve_dot_dot(r);
      };
    return f;
  }
};

Result<policy::Policy> mac_policy(std::vector<std::string> words, const std::string& cwd = "/Users/ann/proj") {
  words.insert(words.begin(), "cage");
  auto inv = cli::parse(words, cwd);
  if (!inv) return inv.error();
  return policy::validate(inv->input, policy::Context{cwd, "/Users/ann", {}});
}

Result<std::string> sbpl(std::vector<std::string> words, const Mac& mac = Mac(),
                         const std::string& cwd = "/Users/ann/proj") {
  auto p = mac_policy(std::move(words), cwd);
  if (!p) return p.error();
  return macos::compile_sbpl(*p, mac.facts());
}

std::vector<PathFilter> filters(const std::string& profile) {
  SbplReader r(profile);
  auto forms = r.read_all();
  EXPECT_TRUE(forms) << "profile does not parse:\n" << profile;
  std::vector<PathFilter> out;
  if (forms) collect_filters(*forms, out);
  return out;
}

int index_of(const std::vector<PathFilter>& fs, const std::string& action, const std::string& path) {
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i].action == action && fs[i].path == path) return static_cast<int>(i);
  return -1;
}

TEST(MacosSbpl, GoldenGrantsHideAndNet) {
  auto p = sbpl({"--ro", "src", "--rw", "out", "--ro", "Makefile", "--hide", ".env", "--net", "api.github.com:443",
                 "--", "make"});
  ASSERT_TRUE(p) << p.error().reason;
  expect_golden(*p, "macos_ro_rw_hide.sbpl");
}

TEST(MacosSbpl, GoldenPrivateLinksNoSystemNoNet) {
  auto p = sbpl({"--rw", "/tmp/build", "--ro", "/etc/hosts", "--no-system", "--no-cwd", "--", "cc"});
  ASSERT_TRUE(p) << p.error().reason;
  expect_golden(*p, "macos_private_links.sbpl");
}

TEST(MacosSbpl, StartsClosedAndParses) {
  auto p = sbpl({"--", "true"});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rfind("(version 1)\n(deny default)\n", 0), 0u);
  SbplReader r(*p);
  EXPECT_TRUE(r.read_all());
}

TEST(MacosSbpl, FilesAreLiteralDirectoriesSubpath) {
  auto p = sbpl({"--ro", "Makefile", "--rw", "out", "--", "make"});
  ASSERT_TRUE(p);
  auto fs = filters(*p);
  int f = index_of(fs, "allow", "/Users/ann/proj/Makefile"), d = index_of(fs, "allow", "/Users/ann/proj/out");
  ASSERT_GE(f, 0);
  ASSERT_GE(d, 0);
  EXPECT_EQ(fs[f].head, "literal");
  EXPECT_EQ(fs[f].ops, "file-read*");
  EXPECT_EQ(fs[d].head, "subpath");
  EXPECT_EQ(fs[d].ops, "file-read* file-write*");
}

TEST(MacosSbpl, PathsResolveThroughPrivateLinks) {
  auto p = sbpl({"--rw", "/tmp/build", "--ro", "/etc/hosts", "--", "cc"});
  ASSERT_TRUE(p);
  auto fs = filters(*p);
  EXPECT_GE(index_of(fs, "allow", "/private/tmp/build"), 0);
  EXPECT_GE(index_of(fs, "allow", "/private/etc/hosts"), 0);
  EXPECT_LT(index_of(fs, "allow", "/tmp/build"), 0) << "sandbox rules match resolved paths only";
}

TEST(MacosSbpl, HiddenPathsAreDeniedAfterTheGrantsTheyMask) {
  auto p = sbpl({"--rw", ".", "--hide", ".env", "--", "make"});
  ASSERT_TRUE(p);
  auto fs = filters(*p);
  int grant = index_of(fs, "allow", "/Users/ann/proj"), hide = index_of(fs, "deny", "/Users/ann/proj/.env");
  ASSERT_GE(grant, 0);
  ASSERT_GE(hide, 0);
  EXPECT_LT(grant, hide);
  EXPECT_EQ(fs[hide].ops, "file-read* file-write*");
}

Mac nested_mac() {
  Mac mac;
  for (const char* d : {"/Users/ann/proj/.git", "/Users/ann/proj/.git/hooks", "/Users/ann/proj/config",
                        "/Users/ann/proj/deep", "/Users/ann/proj/deep/a", "/Users/ann/proj/deep/a/out"})
    mac.kinds[d] = macos::PathKind::dir;
  mac.kinds["/Users/ann/proj/config/.env"] = macos::PathKind::file;
  return mac;
}

// A --ro beneath --rw is denied writes after the --rw allow (the last matching rule wins), a --rw
// beneath it allowed again, and no directory between the --rw grant and a nested --ro or --hide can
// be renamed (file-write-unlink denied): renaming .git cannot move --ro .git/hooks out of its rule.
TEST(MacosSbpl, GoldenNestedGrantsArePinned) {
  auto p = sbpl({"--rw", ".", "--ro", ".git/hooks", "--hide", "config/.env", "--ro", "deep/a", "--rw", "deep/a/out",
                 "--no-system", "--", "make"},
                nested_mac());
  ASSERT_TRUE(p) << p.error().reason;
  expect_golden(*p, "macos_nested_pins.sbpl");
  auto fs = filters(*p);
  int rw = index_of(fs, "allow", "/Users/ann/proj"), ro = index_of(fs, "deny", "/Users/ann/proj/.git/hooks"),
      again = -1;
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i].action == "allow" && fs[i].path == "/Users/ann/proj/deep/a/out") again = static_cast<int>(i);
  ASSERT_GE(ro, 0);
  EXPECT_LT(rw, ro);
  EXPECT_EQ(fs[ro].ops, "file-write*");
  EXPECT_LT(index_of(fs, "deny", "/Users/ann/proj/deep/a"), again) << "the --rw beneath a nested --ro is allowed again";
  for (const char* d : {"/Users/ann/proj/.git", "/Users/ann/proj/config", "/Users/ann/proj/deep", "/Users/ann/proj"}) {
    int pin = index_of(fs, "deny", d);
    ASSERT_GE(pin, 0) << d;
    EXPECT_EQ(fs[pin].ops, "file-write-unlink") << d;
    EXPECT_EQ(fs[pin].head, "literal") << d;
  }
  EXPECT_LT(index_of(fs, "deny", "/Users/ann"), 0) << "above the --rw grant nothing is writable anyway";
}

// Without nesting only the --rw grant itself is pinned: its own allow would let it be moved out of
// the read-only current directory (into the private TMPDIR, removed after the run).
TEST(MacosSbpl, OnlyTheRwGrantIsPinnedWithoutNesting) {
  auto p = sbpl({"--ro", "src", "--rw", "out", "--hide", ".env", "--", "make"});
  ASSERT_TRUE(p);
  auto fs = filters(*p);
  int n = 0;
  for (const auto& f : fs) n += f.ops == "file-write-unlink";
  EXPECT_EQ(n, 1);
  EXPECT_EQ(fs[index_of(fs, "deny", "/Users/ann/proj/out")].ops, "file-write-unlink");
  EXPECT_EQ(p->find("(deny file-write* "), std::string::npos);
}

// TIOCSTI is denied by number after every rule that allows file-ioctl (the last match wins), and
// the terminals keep their other ioctls (termios, TIOCSPGRP for job control).
TEST(MacosSbpl, TiocstiIsDeniedByNumberAfterEveryIoctlAllow) {
  for (const auto& words :
       {std::vector<std::string>{"--", "sh"},
        std::vector<std::string>{"--rw", ".", "--hide", ".env", "--no-system", "--", "sh"}}) {
    auto p = sbpl(words);
    ASSERT_TRUE(p) << p.error().reason;
    const std::string deny = "(deny file-ioctl (ioctl-command 2147578994))";
    size_t at = p->find(deny);
    ASSERT_NE(at, std::string::npos) << *p;
    EXPECT_EQ(p->find(deny, at + 1), std::string::npos);
    EXPECT_LT(p->rfind("file-ioctl (literal \"/dev/ptmx\") (regex #\"^/dev/ttys[0-9]+$\")"), at);
    EXPECT_LT(p->rfind("(allow "), at) << "nothing allowed after it";
    EXPECT_EQ(p->find("TIOCSTI)"), std::string::npos) << "a symbolic name fails to parse on macOS 14.2";
    EXPECT_EQ(2147578994UL, (0x80000000UL | (1UL << 16) | ('t' << 8) | 114)) << "_IOW('t', 114, char)";
    SbplReader r(*p);
    EXPECT_TRUE(r.read_all());
  }
}

// A grant reached through a link inside a --rw grant is refused as on Linux (same class, input and
// remedy): whoever writes there chooses where the link points. The system's links are followed, and
// so is a link outside every --rw grant.
TEST(MacosSbpl, RefusesGrantsThroughLinksInsideReadWriteGrants) {
  Mac mac;
  mac.links["/Users/ann/proj/out"] = "/Users/ann/.ssh";
  mac.links["/Users/ann/proj/.env"] = "/Users/ann/secrets/env";
  mac.kinds["/Users/ann/proj/tmp"] = macos::PathKind::dir;
  using Words = std::vector<std::string>;
  for (const auto& words : {Words{"--rw", ".", "--rw", "out", "--", "make"},
                            Words{"--rw", ".", "--ro", "out", "--", "make"},
                            Words{"--rw", ".", "--hide", ".env", "--", "make"}}) {
    auto p = sbpl(words, mac);
    ASSERT_FALSE(p) << words[2] << " " << words[3];
    EXPECT_EQ(p.error().cls, ErrorClass::invalid_policy);
    EXPECT_EQ(p.error().input, words[2] + " " + words[3]);
    EXPECT_NE(p.error().reason.find("symbolic link inside --rw ."), std::string::npos) << p.error().reason;
    EXPECT_NE(p.error().remedy.find(mac.links["/Users/ann/proj/" + words[3]]), std::string::npos);
  }
  auto real = sbpl({"--rw", ".", "--ro", "src", "--rw", "tmp", "--", "make"}, mac);
  EXPECT_TRUE(real) << real.error().reason;
  auto dots = sbpl({"--rw", ".", "--ro", "tmp/../src", "--", "make"}, mac);  // `..` is no link
  EXPECT_TRUE(dots) << dots.error().reason;
  auto dots_link = sbpl({"--rw", ".", "--ro", "out/../src", "--", "make"}, mac);  // `..` of the link's target
  ASSERT_FALSE(dots_link);
  EXPECT_EQ(dots_link.error().input, "--ro out/../src");
  auto no_mac = sbpl({"--rw", ".", "--ro", "tmp/../src", "--", "make"});  // no realpath: no link is seen
  EXPECT_TRUE(no_mac) << no_mac.error().reason;
  mac.kinds["/tmp/build/src"] = macos::PathKind::dir;
  auto fixed = sbpl({"--rw", "/tmp/build", "--ro", "/tmp/build/src", "--", "cc"}, mac);
  EXPECT_TRUE(fixed) << fixed.error().reason;
  auto outside = sbpl({"--rw", "out", "--", "make"}, mac);  // as on Linux: a link outside any --rw
  ASSERT_TRUE(outside) << outside.error().reason;
  EXPECT_NE(outside->find("(subpath \"/Users/ann/.ssh\")"), std::string::npos) << "resolved paths only";
}

TEST(MacosSbpl, NothingOfTheHomeBeyondGrants) {
  for (const auto& cwd : {std::string("/Users/ann/proj"), std::string("/Users/ann")}) {
    auto p = sbpl({"--", "ls"}, Mac(), cwd);
    ASSERT_TRUE(p);
    for (const auto& f : filters(*p)) {
      if (f.path == "/Users/ann/proj" && cwd == "/Users/ann/proj") continue;  // the shown cwd
      if (f.ops == "file-read-metadata") continue;                            // path lookup only
      EXPECT_FALSE(policy::is_beneath(f.path, "/Users/ann")) << f.action << " " << f.ops << " " << f.path;
      EXPECT_FALSE((f.path == "/" && f.head != "literal") || f.path == "/Users") << f.path;  // "/": names
    }
  }
}

TEST(MacosSbpl, NetworkOnlyToTheProxy) {
  auto none = sbpl({"--", "curl"});
  ASSERT_TRUE(none);
  EXPECT_NE(none->find("(deny network*)"), std::string::npos);
  EXPECT_EQ(none->find("(allow network"), std::string::npos);
  auto net = sbpl({"--net", "example.com:443", "--", "curl"});
  ASSERT_TRUE(net);
  EXPECT_NE(net->find("(allow network-outbound (remote tcp \"localhost:49152\"))"), std::string::npos);
  EXPECT_EQ(std::count(net->begin(), net->end(), '\n') - std::count(none->begin(), none->end(), '\n'), 3)
      << "the proxy, and the TLS services with their comment";
  EXPECT_EQ(net->find("(allow network", net->find("(allow network-outbound") + 1), std::string::npos);
}

// The workload's own loopback servers (issue 23, point 4): sandbox-exec has one loopback, the host's,
// so binding, accepting and connecting there stay denied (a database on the host's 127.0.0.1:5432
// would be reachable too); only --share-net, an audited escape hatch as on Linux, opens it.
TEST(MacosSbpl, LoopbackIsClosedButForTheProxyUnlessShareNet) {
  for (const auto& words : {std::vector<std::string>{"--", "pytest"},
                            std::vector<std::string>{"--net", "localhost:5432", "--", "pytest"}}) {
    auto p = sbpl(words);
    ASSERT_TRUE(p) << p.error().reason;
    EXPECT_EQ(p->find("network-bind"), std::string::npos) << *p;
    EXPECT_EQ(p->find("network-inbound"), std::string::npos) << *p;
    EXPECT_EQ(p->find("localhost:5432"), std::string::npos) << "a host loopback service is the proxy's to grant";
    EXPECT_EQ(p->find("(allow network*)"), std::string::npos);
  }
  auto shared = sbpl({"--share-net", "--", "pytest"});
  ASSERT_TRUE(shared) << shared.error().reason;
  EXPECT_NE(shared->find("(allow network*)"), std::string::npos);
  EXPECT_EQ(shared->find("(deny network*)"), std::string::npos) << "the deny-default stays, no extra deny";
  EXPECT_NE(shared->find("com.apple.trustd"), std::string::npos) << "TLS through the host's network";
  expect_golden(*shared, "macos_share_net.sbpl");
  auto both = sbpl({"--share-net", "--net", "example.com:443", "--", "curl"});
  ASSERT_FALSE(both) << "--share-net and --net exclude each other, on every OS";
}

// The rules the peers' profiles give every program (Codex's platform defaults, Chromium's common.sb):
// the root's names, /dev's metadata, the /etc, /tmp and /var links, /dev/fd and /dev/std*, the shell
// /bin/sh execs, /Library/Frameworks; TLS trust services only with --net.
TEST(MacosSbpl, BaselineRulesThePeersNeed) {
  auto p = sbpl({"--", "sh", "-c", "cc -o /dev/null x.c"});
  ASSERT_TRUE(p) << p.error().reason;
  auto fs = filters(*p);
  auto rule = [&](const std::string& path) -> std::string {
    int i = index_of(fs, "allow", path);
    return i < 0 ? "" : fs[i].ops + " " + fs[i].head;
  };
  EXPECT_EQ(rule("/"), "file-read* literal") << "the root's names, not what is beneath";
  for (const char* m : {"/dev", "/etc", "/tmp", "/var", "/dev/stdin", "/dev/stdout", "/dev/stderr"})
    EXPECT_EQ(rule(m), "file-read-metadata literal") << m;
  EXPECT_EQ(rule("/dev/fd"), "file-read* file-write-data subpath");
  EXPECT_EQ(rule("/private/var/select/sh"), "file-read* literal");
  EXPECT_EQ(rule("/Library/Frameworks"), "file-read* subpath");
  EXPECT_NE(p->find("(literal \"/private/var/select\")"), std::string::npos) << "its directory's metadata";
  EXPECT_EQ(p->find("com.apple.SecurityServer"), std::string::npos) << "no TLS services without --net";
  auto bare = sbpl({"--no-system", "--", "/Users/ann/proj/tool"});
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->find("/private/var/select/sh"), std::string::npos) << "--no-system drops the default view";
  auto net = sbpl({"--net", "api.github.com:443", "--", "gh", "api", "user"});
  ASSERT_TRUE(net);
  const std::string tls = "(allow mach-lookup (global-name \"com.apple.trustd\") (global-name ";
  EXPECT_NE(net->find(tls + "\"com.apple.SecurityServer\")"), std::string::npos) << *net;
}

TEST(MacosSbpl, QuotesEveryPathAsOneLiteral) {
  Mac mac;
  const std::string nasty = "/Users/ann/proj/a \"b\" (c) \\d) (allow default) ;e \xc3\xa9\xe2\x82\xac";
  mac.kinds[nasty] = macos::PathKind::dir;
  auto p = sbpl({"--rw", nasty, "--hide", nasty + "/x\"", "--", "make"}, mac);
  ASSERT_TRUE(p) << p.error().reason;
  auto fs = filters(*p);
  int i = index_of(fs, "allow", nasty);
  ASSERT_GE(i, 0) << *p;
  EXPECT_EQ(fs[i].head, "subpath");
  EXPECT_GE(index_of(fs, "deny", nasty + "/x\""), 0);
  EXPECT_NE(p->find(macos::quote_sbpl(nasty)), std::string::npos);
  EXPECT_EQ(macos::quote_sbpl("a\"b\\c"), "\"a\\\"b\\\\c\"");
  for (const auto& f : fs) EXPECT_NE(f.path, "default");
}

TEST(MacosSbpl, RefusesWhatMacosCannotEnforce) {
  auto t = sbpl({"--tmpfs", "/Users/ann/proj/out", "--", "make"});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(t.error().input, "--tmpfs /Users/ann/proj/out");
  auto sized = sbpl({"--tmpfs-size", "1G", "--", "make"});  // refused, never silently dropped
  ASSERT_FALSE(sized);
  EXPECT_EQ(sized.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(sized.error().input, "--tmpfs-size");
  auto missing = sbpl({"--ro", "nope", "--", "make"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().cls, ErrorClass::invalid_policy);
}

TEST(MacosSbpl, NoSystemKeepsOnlyWhatStartsAProgram) {
  auto p = sbpl({"--no-system", "--", "/Users/ann/proj/tool"});
  ASSERT_TRUE(p);
  auto fs = filters(*p);
  EXPECT_GE(index_of(fs, "allow", "/usr/lib"), 0);
  EXPECT_LT(index_of(fs, "allow", "/usr/bin"), 0);
}

TEST(MacosCompile, EnvironmentAndLimits) {
  auto pol = mac_policy({"--net", "example.com:443", "--memory", "1G", "--", "make"});
  ASSERT_TRUE(pol) << pol.error().reason;
  Mac mac;
  auto f = mac.facts();
  f.private_tmp = "/private/tmp/cage.abc";
  auto plan = macos::compile(*pol, f, {{"PATH", "/usr/bin:/bin"}, {"AWS_SECRET_ACCESS_KEY", "x"}});
  ASSERT_TRUE(plan) << plan.error().reason;
  auto has = [&](const std::string& e) { return std::find(plan->env.begin(), plan->env.end(), e) != plan->env.end(); };
  EXPECT_TRUE(has("TMPDIR=/private/tmp/cage.abc"));
  EXPECT_TRUE(has("HTTPS_PROXY=http://127.0.0.1:49152"));
  for (const auto& e : plan->env) EXPECT_EQ(e.find("AWS_"), std::string::npos);
  ASSERT_EQ(plan->unenforced.size(), 1u);
  EXPECT_NE(plan->sbpl.find("(subpath \"/private/tmp/cage.abc\")"), std::string::npos);
}

Mac home_mac() {
  Mac mac;
  for (const char* d : {"/Users/ann/.config", "/Users/ann/.config/git", "/Users/ann/.config/git/hooks"})
    mac.kinds[d] = macos::PathKind::dir;
  mac.kinds["/Users/ann/.gitconfig"] = macos::PathKind::file;
  return mac;
}

// The run's HOME is its own empty directory (Seatbelt's EPERM in the real one is fatal to git, npm,
// pip, cargo), with a link to each grant beneath $HOME and to the shown current directory, where
// Linux mounts them; a grant beneath another is reached through the outer link, never linked itself.
TEST(MacosCompile, PrivateHomeLinksTheGrantsBeneathTheRealOne) {
  auto pol = mac_policy({"--ro", "/Users/ann/.gitconfig", "--ro", "/Users/ann/.config/git", "--rw",
                         "/Users/ann/.config/git/hooks", "--", "git", "status"});
  ASSERT_TRUE(pol) << pol.error().reason;
  auto f = home_mac().facts();
  f.private_home = "/private/tmp/cage-private.abc/home";
  auto plan = macos::compile(*pol, f, {});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(plan->private_home);
  EXPECT_NE(std::find(plan->env.begin(), plan->env.end(), "HOME=" + f.private_home), plan->env.end());
  std::vector<std::string> links;
  for (const auto& l : plan->home_links) links.push_back(l.name + " -> " + l.target);
  const std::vector<std::string> want = {".config/git -> /Users/ann/.config/git",
                                         ".gitconfig -> /Users/ann/.gitconfig", "proj -> /Users/ann/proj"};
  EXPECT_EQ(links, want);
  auto fs = filters(plan->sbpl);
  int home = index_of(fs, "allow", f.private_home);
  ASSERT_GE(home, 0) << plan->sbpl;
  EXPECT_EQ(fs[home].ops, "file-read* file-write*");
  for (const auto& x : fs)  // the real home stays closed: path lookup only
    if (x.path == "/Users/ann") {
      EXPECT_EQ(x.ops, "file-read-metadata");
    }
  expect_golden(plan->sbpl, "macos_private_home.sbpl");
}

// A grant that shows the real home keeps it as HOME (as on Linux); a dry-run names the private one.
TEST(MacosCompile, NoPrivateHomeWhenAGrantShowsTheRealOne) {
  auto pol = mac_policy({"--ro", "/Users/ann", "--", "git", "status"});
  ASSERT_TRUE(pol) << pol.error().reason;
  auto plan = macos::compile(*pol, Mac().facts(), {});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_FALSE(plan->private_home);
  EXPECT_TRUE(plan->home_links.empty());
  EXPECT_NE(std::find(plan->env.begin(), plan->env.end(), "HOME=/Users/ann"), plan->env.end());
  auto dry = mac_policy({"--", "git", "status"});
  ASSERT_TRUE(dry);
  auto shown = macos::compile(*dry, Mac().facts(), {});
  ASSERT_TRUE(shown);
  EXPECT_TRUE(shown->private_home);
  EXPECT_NE(std::find(shown->env.begin(), shown->env.end(), "HOME=<private HOME, made at run time>"),
            shown->env.end());
}

// --uid and --scratch are refused, never dropped: no user namespace, no scratch store here.
TEST(MacosCompile, RefusesUidAndScratch) {
  for (auto [flag, value] : {std::pair<const char*, const char*>{"--uid", "nobody"}, {"--scratch", "cache"}}) {
    auto pol = mac_policy({flag, value, "--", "make"});
    ASSERT_TRUE(pol) << pol.error().reason;
    auto plan = macos::compile(*pol, Mac().facts(), {});
    ASSERT_FALSE(plan) << flag;
    EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
    EXPECT_EQ(plan.error().input, std::string(flag) + " " + value);
  }
  auto pol = mac_policy({"--run-id", "r1", "--", "make"});
  ASSERT_TRUE(pol);
  auto plan = macos::compile(*pol, Mac().facts(), {});
  ASSERT_TRUE(plan);
  EXPECT_NE(std::find(plan->env.begin(), plan->env.end(), "CAGE_RUN_ID=r1"), plan->env.end());
}

// --secret is refused, never dropped, until the macOS executor reads it.
TEST(MacosCompile, RefusesSecrets) {
  auto pol = mac_policy({"--secret", "TOKEN=fd:3", "--", "make"});
  ASSERT_TRUE(pol) << pol.error().reason;
  auto plan = macos::compile(*pol, Mac().facts(), {});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(plan.error().input, "--secret TOKEN=fd:3");
}

// Output caps likewise: refused with the flag named, never dropped.
TEST(MacosCompile, RefusesOutputCaps) {
  auto pol = mac_policy({"--max-stderr", "1M", "--", "make"});
  ASSERT_TRUE(pol) << pol.error().reason;
  auto plan = macos::compile(*pol, Mac().facts(), {});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(plan.error().input, "--max-stderr 1M");
}

TEST(MacosCompile, RefusesLinuxOnlyRlimitsKeepsTheOthers) {
  auto pol = mac_policy({"--rlimit", "rtprio=0", "--", "make"});
  ASSERT_TRUE(pol) << pol.error().reason;
  auto plan = macos::compile(*pol, Mac().facts(), {});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(plan.error().input, "--rlimit rtprio=0");
  auto ok = mac_policy({"--rlimit", "nofile=256", "--", "make"});
  ASSERT_TRUE(ok);
  auto plan2 = macos::compile(*ok, Mac().facts(), {});
  ASSERT_TRUE(plan2) << plan2.error().reason;
  ASSERT_EQ(plan2->limits.rlimits.size(), 1u);
}

}  // namespace
}  // namespace cage::testing

namespace cage::testing {
namespace {

// --dry-run --target macos: a summary by default, the SBPL profile (usable as is) with --verbose.
TEST(MacosRender, SummaryByDefaultProfileWithVerbose) {
  policy::Policy p;
  p.cwd = "/usr";
  p.home = "/Users/ann";
  p.argv = {"true"};
  p.rw = {{"/tmp", "--rw /tmp"}};  // planned with this host's stat: a path that exists everywhere
  p.limits.pids = 64;
  auto summary = macos::render_dry_run(p, {{"PATH", "/usr/bin"}}, false, false);
  ASSERT_TRUE(summary) << summary.error().reason;
  EXPECT_NE(summary->find("read-write:\n  /tmp    # --rw /tmp\n"), std::string::npos) << *summary;
  EXPECT_NE(summary->find("not enforced: --pids"), std::string::npos) << *summary;
  EXPECT_EQ(summary->find("(deny default)"), std::string::npos) << *summary;
  auto full = macos::render_dry_run(p, {{"PATH", "/usr/bin"}}, false, true);
  ASSERT_TRUE(full) << full.error().reason;
  EXPECT_EQ(full->rfind("(version 1)\n(deny default)\n", 0), 0u);
}

}  // namespace
}  // namespace cage::testing
