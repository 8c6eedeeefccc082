// Goldens of everything an option is described by outside validate(): the values a profile with
// every key loads to (text, origin, base, as written, optional), every type and unknown-key error in
// full, the merge of two sources that set every field, `--print-profile` byte for byte, and
// `cage --help`. They pin the option table (src/cli/option_table.cc): a change to one of them is a
// change users see, so review the golden's diff.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/profile.h"
#include "golden.h"

namespace cage::testing {
namespace {

using policy::PolicyInput;
using policy::Value;

cli::ProfileContext ctx() {
  cli::ProfileContext c;
  c.cwd = "/work/proj";
  c.home = "/home/ann";
  c.environ = {{"HOME", "/home/ann"}, {"DATA", "/srv/data"}, {"N", "7"}};
  c.user_dir = "";
  c.system_dir = "/nonexistent/cage/profiles";
  c.keep_missing_optional = true;
  return c;
}

// Every field of PolicyInput, written out by hand (not from the table the code under test uses).
std::string dump(const PolicyInput& in) {
  std::ostringstream out;
  auto value = [&](const char* name, const Value& v) {
    out << name << " = " << v.text << " | " << v.origin << " | " << v.base << " | " << v.written
        << (v.optional ? " | optional" : "") << "\n";
  };
  auto list = [&](const char* name, const std::vector<Value>& vs) {
    for (const auto& v : vs) value(name, v);
  };
  auto one = [&](const char* name, const std::optional<Value>& v) {
    if (v) value(name, *v);
  };
  list("ro", in.ro), list("rw", in.rw), list("tmpfs", in.tmpfs), list("hide", in.hide);
  list("env_pass", in.env_pass), list("env_set", in.env_set), list("env_unset", in.env_unset);
  list("env_secret", in.env_secret), list("net", in.net), one("net_mode", in.net_mode);
  list("rlimits", in.rlimits), one("memory", in.memory), one("pids", in.pids), one("cpu", in.cpu);
  one("timeout", in.timeout), one("seccomp", in.seccomp), one("chdir", in.chdir);
  one("hostname", in.hostname), one("max_output", in.max_output), one("max_stdout", in.max_stdout);
  one("max_stderr", in.max_stderr), one("tmpfs_size", in.tmpfs_size), one("limits_preset", in.limits_preset);
  one("no_system", in.no_system), one("no_cwd", in.no_cwd), one("share_net", in.share_net);
  one("strict_limits", in.strict_limits), one("mechanism", in.mechanism);
  list("allow_degraded", in.allow_degraded), one("audit_file", in.audit_file);
  one("audit_required", in.audit_required), list("labels", in.labels), one("run_id", in.run_id);
  one("scratch", in.scratch), one("uid", in.uid), list("exec", in.exec), list("exec_run", in.exec_run);
  for (const auto& a : in.argv) out << "argv = " << a << "\n";
  return out.str();
}

const char* const kEveryKey = R"(version = 1
run = ["python3", "-u"]
hostname = "box-${N}"
mechanism = "landlock"
uid = 1000
allow_degraded = ["pid", "hide"]
[fs]
ro = ["src", "/usr/share", "${DATA}/in", { path = "~/.cfg", optional = true }]
rw = ["./out", { path = "gone", optional = false }]
tmpfs = ["/tmp/x:size=1M"]
hide = ["src/.env"]
no_system = true
no_cwd = false
chdir = "src"
scratch = "cache"
[env]
pass = ["LC_*", "TERM"]
set = { A = "1", B = "$$ and ${N}" }
unset = ["TZ"]
secret = { TOKEN = "@~/.token" }
[net]
allow = ["example.org:443", "**.example.com:80"]
mode = "proxy"
share_net = false
[limits]
preset = "default"
memory = "512M"
pids = 64
cpu = 1.5
timeout = 30
tmpfs_size = "1G"
strict = true
max_output = 1024
max_stdout = "1M"
max_stderr = "2M"
rlimits = { nofile = 1024, fsize = "1G:2G" }
[seccomp]
profile = "relaxed"
[audit]
file = "audit.jsonl"
required = true
labels = { team = "infra", job = "${N}" }
[exec]
allow = ["/usr/bin/git", { path = "/opt/tools", optional = true }]
run = ["git", "clone", "{url}"]
)";

TEST(ProfileGolden, EveryKeyLoadsTo) {
  auto r = cli::load_profile_text(kEveryKey, "/p/cage.toml", "/p", ctx());
  ASSERT_TRUE(r) << r.error().input << ": " << r.error().reason;
  std::string got = dump(r->input);
  for (const auto& w : *r->run) got += "run = " + w + "\n";
  expect_golden(got, "profile_every_key.txt");
}

// Each error in full: class, input, reason and remedy.
TEST(ProfileGolden, Errors) {
  const char* const cases[] = {
      "[fs]\nro = \"src\"\n", "[fs]\nro = [1]\n", "[fs]\nrw = [{ optional = true }]\n",
      "[fs]\nrw = [{ path = \"x\", opt = true }]\n", "[fs]\nrw = [{ path = \"x\", optional = 1 }]\n",
      "[fs]\nrw = [{ path = 1 }]\n", "[fs]\ntmpfs = [true]\n", "[fs]\nhide = {}\n",
      "[fs]\nno_system = \"yes\"\n", "[fs]\nno_cwd = 1\n", "[fs]\nchdir = [\"x\"]\n", "[fs]\nscratch = 1\n",
      "[fs]\nrox = []\n", "[env]\npass = \"A\"\n", "[env]\nset = [\"A=1\"]\n", "[env]\nset = { A = 1 }\n",
      "[env]\nunset = [1]\n", "[env]\nsecret = \"x\"\n", "[env]\nsecret = { A = 1 }\n", "[env]\npas = []\n",
      "[net]\nallow = \"x:1\"\n", "[net]\nshare_net = 1\n", "[net]\nmode = 1\n", "[net]\nallowed = []\n",
      "[limits]\nmemory = true\n", "[limits]\npids = 1.5\n", "[limits]\ncpu = true\n",
      "[limits]\ntimeout = []\n", "[limits]\nstrict = \"true\"\n", "[limits]\npreset = 1\n",
      "[limits]\ntmpfs_size = 1.5\n", "[limits]\nmax_output = false\n", "[limits]\nmax_stdout = 1.5\n",
      "[limits]\nmax_stderr = []\n", "[limits]\nrlimits = [\"nofile=1\"]\n",
      "[limits.rlimits]\nnofile = true\n", "[limits]\nmem = 1\n", "[seccomp]\nprofile = 1\n",
      "[seccomp]\nprofiles = \"x\"\n", "seccomp = \"relaxed\"\n", "[audit]\nfile = 1\n",
      "[audit]\nrequired = \"yes\"\n", "[audit]\nlabels = [1]\n", "[audit]\nlabels = { a = 1 }\n",
      "[audit]\npath = \"x\"\n", "[exec]\nallow = \"x\"\n", "[exec]\nallow = [{ optional = true }]\n",
      "[exec]\nrun = []\n", "[exec]\nrun = \"git\"\n", "[exec]\nruns = []\n", "hostname = 5\n",
      "mechanism = 1\n", "uid = 1.5\n", "allow_degraded = \"pid\"\n", "allow_degraded = [1]\n",
      "run = \"python3\"\n", "run = []\n", "run = [\"\"]\n", "include = \"x\"\n", "version = \"1\"\n",
      "version = 2\n", "fs = 1\n", "env = []\n", "net = 1\n", "limits = 1\n", "audit = 1\n", "exec = 1\n",
      "verison = 1\n", "[fsx]\n", "[fs]\nro = [\"${NOPE}\"]\n", "hostname = \"${1X}\"\n",
      "[fs]\nro = [\"a\",\n", "\"\" = 1\n", "[fs]\n\"\" = 1\n",
  };
  std::string got;
  for (const char* text : cases) {
    auto r = cli::load_profile_text(text, "/p/cage.toml", "/p", ctx());
    std::string shown = text;
    shown.pop_back();
    for (size_t at; (at = shown.find('\n')) != std::string::npos;) shown.replace(at, 1, "\\n");
    got += "# " + shown + "\n";
    if (r) {
      got += "(loads)\n";
      continue;
    }
    const Error& e = r.error();
    got += std::string(to_string(e.cls)) + " | " + e.input + " | " + e.reason + " | " + e.remedy + "\n";
  }
  expect_golden(got, "profile_errors.txt");
}

// Two sources that each set every field: what the later one replaces, extends or cancels.
TEST(ProfileGolden, MergeOfEveryField) {
  auto c = ctx();
  auto a = cli::load_profile_text(kEveryKey, "/p/a.toml", "/p", c);
  ASSERT_TRUE(a) << a.error().reason;
  auto b = cli::load_profile_text(R"(run = ["sh"]
hostname = "b"
mechanism = "namespaces"
uid = "nobody"
allow_degraded = ["tmpfs"]
[fs]
ro = ["/p/out", "other"]
rw = ["/p/src"]
tmpfs = ["/p/src/.env"]
hide = ["/tmp/x"]
no_system = false
no_cwd = true
chdir = "."
scratch = "b"
[env]
pass = ["TZ"]
set = { A = "2" }
unset = ["A", "LC_*"]
secret = { K = "env:K" }
[net]
allow = ["b.org:1"]
mode = "both"
share_net = true
[limits]
preset = "none"
memory = "1G"
pids = 1
cpu = 2
timeout = "1m"
tmpfs_size = "2G"
strict = false
max_output = 1
max_stdout = 2
max_stderr = 3
rlimits = { nofile = 8 }
[seccomp]
profile = "none"
[audit]
file = "fd:3"
required = false
labels = { team = "web", new = "1" }
[exec]
allow = ["/usr/bin/git", "/bin/sh"]
run = ["sh", "{arg}"]
)",
                                  "/q/b.toml", "/q", c);
  ASSERT_TRUE(b) << b.error().input << ": " << b.error().reason;
  PolicyInput flags;
  flags.rw = {{"src", "--rw", "/p"}};
  flags.run_id = Value{"run-1", "--run-id", "/w"};
  flags.argv = {"make", "-j2"};
  PolicyInput acc = a->input;
  cli::merge_into(acc, b->input, c.home);
  std::string got = "# a, then b\n" + dump(acc);
  cli::merge_into(acc, flags, c.home);
  got += "# a, b, then the flags\n" + dump(acc);
  expect_golden(got, "profile_merge.txt");
}

TEST(ProfileGolden, PrintProfile) {
  auto c = ctx();
  std::string got;
  // Every key of a profile, printed where it lies, in a directory above it and in another tree.
  auto every = cli::load_profile_text(kEveryKey, "/p/sub/cage.toml", "/p/sub", c);
  ASSERT_TRUE(every) << every.error().reason;
  every->input.argv = *every->run;
  for (const char* cwd : {"/p/sub", "/p", "/home/ann/x", "/elsewhere"})
    got += "## loaded from /p/sub, printed in " + std::string(cwd) + "\n" +
           cli::print_profile(every->input, c.home, cwd);
  // Every field from flags: '$' doubled, relative paths as given, --run-id never printed.
  PolicyInput in;
  auto f = [](const char* text, const char* flag) { return Value{text, flag, "/w"}; };
  in.ro = {f("src", "--ro"), f("/abs", "--ro"), f("~/h", "--ro"), f("$x", "--ro")};
  in.rw = {f("out", "--rw")};
  in.tmpfs = {f("/t:size=1M", "--tmpfs")};
  in.hide = {f("src/.env", "--hide")};
  in.env_pass = {f("LC_*", "--env")};
  in.env_set = {f("A=$HOME", "--setenv"), f("EMPTY=", "--setenv"), f("NOEQ", "--setenv")};
  in.env_unset = {f("TZ", "--unsetenv")};
  in.env_secret = {f("T=@~/.t", "--secret")};
  in.net = {f("a.org:443", "--net")};
  in.net_mode = f("proxy", "--net-mode");
  in.rlimits = {f("nofile=64", "--rlimit"), f("fsize=1G:2G", "--rlimit")};
  in.memory = f("1G", "--memory"), in.pids = f("9", "--pids"), in.cpu = f("0.5", "--cpu");
  in.timeout = f("3s", "--timeout"), in.seccomp = f("none", "--seccomp"), in.chdir = f("sub", "--chdir");
  in.hostname = f("h$", "--hostname"), in.max_output = f("1", "--max-output");
  in.max_stdout = f("2", "--max-stdout"), in.max_stderr = f("3", "--max-stderr");
  in.tmpfs_size = f("4M", "--tmpfs-size"), in.limits_preset = f("default", "--limits");
  in.no_system = f("true", "--no-system"), in.no_cwd = f("true", "--no-cwd");
  in.share_net = f("true", "--share-net"), in.strict_limits = f("true", "--strict-limits");
  in.mechanism = f("auto", "--mechanism"), in.allow_degraded = {f("pid,hide", "--allow-degraded")};
  in.audit_file = f("fd:3", "--audit"), in.audit_required = f("true", "--audit-required");
  in.labels = {f("k=v", "--label")}, in.run_id = f("r1", "--run-id"), in.scratch = f("s", "--scratch");
  in.uid = f("1:2", "--uid"), in.exec = {f("/bin/sh", "--exec")};
  in.argv = {"sh", "-c", "echo $HOME"};
  got += "## flags, printed in /w\n" + cli::print_profile(in, c.home, "/w");
  in.audit_file = f("log", "--audit");
  got += "## --audit log, printed in /x\n" + cli::print_profile(in, c.home, "/x");
  got += "## nothing\n" + cli::print_profile(PolicyInput{}, c.home, "/w");
  expect_golden(got, "print_profile.txt");
}

TEST(ProfileGolden, Help) {
  auto inv = cli::parse({"cage", "--help"}, "/w");
  ASSERT_TRUE(inv);
  std::string text = inv->help_text;
  const std::string version = CAGE_VERSION;
  for (size_t at; (at = text.find(version)) != std::string::npos;) text.replace(at, version.size(), "@VERSION@");
  expect_golden(text, "help.txt");
}

}  // namespace
}  // namespace cage::testing
