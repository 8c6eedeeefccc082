// The pure parts of --result and --audit: SHA-256, compact JSON, the policy hash and the class
// decision. (Every real result and event is validated against docs/schema by tests/integration/limits_*.sh.)
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <iterator>

#include "common/audit.h"
#include "common/json.h"
#include "common/sha256.h"
#include "fake_host_view.h"
#include "linux/result.h"
#include "policy/canonical.h"

namespace cage::testing {
namespace {

using lx::report::RunClass;

void expect_fips_vectors() {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Both block functions (the x86-64 SHA extensions where this CPU has them, and the portable one)
// give the standard's digests, and the same digests on random input of every length in pieces.
TEST(Sha256, FipsVectors) {
  const bool had = sha256_accelerated();
  expect_fips_vectors();
  sha256_set_accelerated(false);
  expect_fips_vectors();
  std::string data;
  uint32_t x = 12345;
  for (int i = 0; i < 5000; ++i) data += static_cast<char>((x = x * 1103515245 + 12345) >> 16);
  std::vector<std::string> portable;
  for (size_t len = 0; len <= data.size(); len += 37) portable.push_back(sha256_hex(data.substr(0, len)));
  sha256_set_accelerated(true);
  if (!sha256_accelerated()) GTEST_SKIP() << "this CPU has no SHA extensions: only the portable code was checked";
  expect_fips_vectors();
  size_t k = 0;
  for (size_t len = 0; len <= data.size(); len += 37, ++k) {
    Sha256 h;
    for (size_t off = 0; off < len; off += 1 + off % 97) h.update(data.data() + off, std::min(len - off, 1 + off % 97));
    ASSERT_EQ(h.hex(), portable[k]) << "length " << len;
  }
  sha256_set_accelerated(had);
}

TEST(AuditJson, CompactSortedAndEscaped) {
  toml::table t{{"b", "x\"\n\x01"}, {"a", 1}, {"c", toml::array{true, 1.5}}};
  EXPECT_EQ(audit::to_json_line(t), R"({"a":1,"b":"x\"\n\u0001","c":[true,1.5]})");
}

// A DNS name or path need not be UTF-8: an audit line stays valid JSON (each invalid byte is U+FFFD)
// and carries no raw terminal control; --json output likewise; stderr text shows them escaped.
TEST(AuditJson, InvalidUtf8AndTerminalControlsAreEscaped) {
  toml::table t{{"host", "a\xff\x1b[31mb\xc2\x9b\xc0\xaf\xed\xa0\x80\xc3\xa9\xf0\x9f\x98\x80"}};
  EXPECT_EQ(audit::to_json_line(t),
            "{\"host\":\"a\\ufffd\\u001b[31mb\\u009b\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\xc3\xa9\xf0\x9f\x98\x80\"}");
  EXPECT_EQ(valid_utf8("ok\xff\xe2\x82"), "ok\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  std::string j = to_json(toml::table{{"input", "x\xff\x1b\xf0\x9f\x98\x80\xc2\x9b"}});
  for (unsigned char c : j) EXPECT_TRUE(c < 0x80 && (c >= 0x20 || c == '\n' || c == '\t')) << j;
  EXPECT_EQ(j.find("\\U"), std::string::npos) << j;  // JSON has no \U escape: a surrogate pair instead
  EXPECT_NE(j.find("\\uD83D\\uDE00"), std::string::npos) << j;
}

TEST(Printable, TerminalControlsAndInvalidBytesShowEscaped) {
  EXPECT_EQ(printable("a\x1b]0;t\x07\xff\xc3\xa9\xe2\x80\xae\xc2\x9b\n"),
            "a\\x1b]0;t\\x07\\xff\xc3\xa9\\u{202e}\\x9b\\x0a");
  Error e{ErrorClass::invalid_policy, "no such host \x1b[2J", "", "--net \xff:443", 0};
  std::string text = render_error_text(e);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("--net \\xff:443: no such host \\x1b[2J"), std::string::npos) << text;
}

TEST(AuditJson, TimestampAndRunId) {
  EXPECT_EQ(audit::timestamp_now().size(), 24u);
  EXPECT_EQ(audit::new_run_id().size(), 32u);
  EXPECT_NE(audit::new_run_id(), audit::new_run_id());
}

TEST(PolicyHash, StableAndSensitiveAndRedacted) {
  auto a = policy_of({"--setenv", "TOKEN=secret", "--", "true"});
  auto b = policy_of({"--setenv", "TOKEN=secret", "--", "true"});
  auto c = policy_of({"--memory", "32M", "--", "true"});
  EXPECT_EQ(policy::policy_hash(a), policy::policy_hash(b));
  EXPECT_NE(policy::policy_hash(a), policy::policy_hash(c));
  EXPECT_EQ(policy::policy_hash(a).rfind("sha256:", 0), 0u);
  EXPECT_EQ(audit::to_json_line(policy::canonical_table(a)).find("secret"), std::string::npos);
}

TEST(PolicyHash, SecretsByNameAndSource) {
  auto a = policy_of({"--secret", "TOKEN=fd:3", "--", "true"});
  auto b = policy_of({"--secret", "TOKEN=fd:4", "--", "true"});
  EXPECT_NE(policy::policy_hash(a), policy::policy_hash(b));
  auto line = audit::to_json_line(policy::canonical_table(a));
  EXPECT_NE(line.find("TOKEN from fd:3"), std::string::npos) << line;
}

// What the workload may execute changes the sandbox: --exec is hashed and recorded in the audit's policy.
TEST(PolicyHash, CoversTheExecAllowlist) {
  auto none = policy_of({"--", "true"});
  auto id = policy_of({"--exec", "/usr/bin/id", "--", "true"});
  auto env = policy_of({"--exec", "/usr/bin/env", "--", "true"});
  EXPECT_NE(policy::policy_hash(none), policy::policy_hash(id));
  EXPECT_NE(policy::policy_hash(id), policy::policy_hash(env));
  auto line = audit::to_json_line(policy::canonical_table(id));
  EXPECT_NE(line.find("\"exec\":[\"/usr/bin/id\"]"), std::string::npos) << line;
  EXPECT_EQ(audit::to_json_line(policy::canonical_table(none)).find("\"exec\""), std::string::npos);
}

// A degraded run must not share a full run's hash: the mechanism used, the accepted losses and what
// was asked for (--mechanism, --allow-degraded) are all hashed.
TEST(PolicyHash, CoversTheMechanismUsedAndTheAcceptedLosses) {
  auto full = policy_of({"--", "true"});
  auto asked = policy_of({"--mechanism", "landlock", "--allow-degraded", "pid", "--", "true"});
  EXPECT_NE(policy::policy_hash(full), policy::policy_hash(asked));
  policy::Enforcement ns{"namespaces", {}}, ll{"landlock", {"pid"}}, ll_meta{"landlock", {"pid", "metadata"}};
  EXPECT_NE(policy::policy_hash(full, &ns), policy::policy_hash(full, &ll));
  EXPECT_NE(policy::policy_hash(full, &ll), policy::policy_hash(full, &ll_meta));
  EXPECT_EQ(policy::policy_hash(full, &ll), policy::policy_hash(full, &ll));
  auto line = audit::to_json_line(policy::canonical_table(asked, &ll));
  EXPECT_NE(line.find(R"("enforced":{"degraded":["pid"],"mechanism":"landlock"})"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("mechanism":"landlock")"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("allow_degraded":["pid"])"), std::string::npos) << line;
}

TEST(SpawnFields, LandlockOnlyListsNoNamespaces) {
  auto p = policy_of({"--", "true"});
  lx::Plan plan;  // as compile makes it for each mechanism (its Plan::init; linux_compile_test: InitPerMechanism)
  plan.mechanism = lx::Mechanism::landlock_only;
  plan.degraded = {"pid: no pid namespace", "metadata: chmod works"};
  auto ll = audit::to_json_line(lx::report::spawn_fields(p, plan, "h", "k", "a"));
  EXPECT_NE(ll.find(R"("namespaces":[])"), std::string::npos) << ll;
  EXPECT_NE(ll.find(R"("mechanism":"landlock")"), std::string::npos) << ll;
  EXPECT_NE(ll.find(R"("degraded":["pid","metadata"])"), std::string::npos) << ll;
  plan.mechanism = lx::Mechanism::namespaces;
  plan.init.namespaces = {"user", "mount", "pid", "ipc", "uts", "cgroup", "net"};
  plan.degraded.clear();
  auto ns = audit::to_json_line(lx::report::spawn_fields(p, plan, "h", "k", "a"));
  EXPECT_NE(ns.find(R"("namespaces":["user","mount","pid","ipc","uts","cgroup")"), std::string::npos) << ns;
  EXPECT_NE(ns.find(R"("mechanism":"namespaces")"), std::string::npos) << ns;
}

lx::report::RunFacts ran(int wait_status) {
  lx::report::RunFacts f;
  f.outcome = lx::RunOutcome{};
  f.outcome->wait_status = wait_status;
  f.outcome->have_wait_status = true;
  return f;
}

int exited(int code) { return code << 8; }

TEST(ResultClass, EachClass) {
  EXPECT_EQ(classify(ran(exited(0))), RunClass::completed);
  EXPECT_EQ(classify(ran(exited(3))), RunClass::completed);
  EXPECT_EQ(classify(ran(SIGTERM)), RunClass::signaled);
  EXPECT_EQ(classify(ran(SIGSYS)), RunClass::seccomp_killed);
  auto oom = ran(SIGKILL);
  oom.outcome->cgroup.oom_kills = 1;
  EXPECT_EQ(classify(oom), RunClass::oom_killed);
  auto pids = ran(exited(2));
  pids.outcome->cgroup.pids_refused = 5;
  EXPECT_EQ(classify(pids), RunClass::pids_exhausted);
  auto pids_ok = ran(exited(0));  // forks were refused but the workload coped: completed
  pids_ok.outcome->cgroup.pids_refused = 5;
  EXPECT_EQ(classify(pids_ok), RunClass::completed);
  auto to = ran(SIGTERM);
  to.outcome->timed_out = true;
  to.outcome->cgroup.oom_kills = 1;
  EXPECT_EQ(classify(to), RunClass::timed_out);
  auto aborted = ran(SIGKILL);
  aborted.outcome->aborted = true;
  EXPECT_EQ(classify(aborted), RunClass::sandbox_unavailable);
}

// Each of cage's errors keeps its own class in the result (issue 22, point 4): a missing --rw path
// is invalid_policy and a refused setuid program capability_denied, not sandbox_unavailable.
TEST(ResultClass, EachErrorClassHasItsOwn) {
  const std::pair<ErrorClass, const char*> cases[] = {
      {ErrorClass::usage_error, "usage_error"},
      {ErrorClass::invalid_policy, "invalid_policy"},
      {ErrorClass::spawn_sandbox_unavailable, "sandbox_unavailable"},
      {ErrorClass::capability_denied, "capability_denied"},
      {ErrorClass::exec_failed, "exec_failed"},
      {ErrorClass::not_found, "not_found"},
      {ErrorClass::internal_error, "internal_error"},
  };
  for (const auto& [cls, name] : cases) {
    lx::report::RunFacts err;
    err.error = Error{cls, "x", "", "y", 0};
    EXPECT_EQ(lx::report::to_string(classify(err)), name) << name;
  }
}

// Denials and a full private tmpfs explain a failure, never a success; a signal death stays signaled.
TEST(ResultClass, DiskFullAndNetworkDeniedOnlyForAFailedWorkload) {
  auto full = [](int status) {
    auto f = ran(status);
    f.outcome->tmpfs = {{"/tmp", 8 << 20, 8 << 20, true}, {"/run", 8 << 20, 0, false}};
    return f;
  };
  EXPECT_EQ(classify(full(exited(1))), RunClass::disk_quota_exceeded);
  EXPECT_EQ(classify(full(exited(0))), RunClass::completed);
  EXPECT_EQ(classify(full(SIGPIPE)), RunClass::signaled);
  auto roomy = ran(exited(1));
  roomy.outcome->tmpfs = {{"/tmp", 8 << 20, 1 << 20, false}};
  EXPECT_EQ(classify(roomy), RunClass::completed);
  auto denied = ran(exited(22));
  denied.net.denied = 1;
  EXPECT_EQ(classify(denied), RunClass::network_denied);
  auto both = full(exited(1));
  both.net.denied = 2;
  EXPECT_EQ(classify(both), RunClass::disk_quota_exceeded);
  auto coped = ran(exited(0));
  coped.net.denied = 3;
  EXPECT_EQ(classify(coped), RunClass::completed);
  auto oom = full(SIGKILL);
  oom.outcome->cgroup.oom_kills = 1;
  EXPECT_EQ(classify(oom), RunClass::oom_killed);
}

// Every class cage can write is in the published schemas' enums (result, and the audit exit event).
TEST(ResultClass, EveryClassIsInTheSchemas) {
  for (const char* file : {"/docs/schema/result.schema.json", "/docs/schema/audit-event.schema.json"}) {
    std::ifstream in(std::string(CAGE_SOURCE_DIR) + file);
    std::string schema((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(schema.empty()) << file;
    for (int c = 0; c <= static_cast<int>(RunClass::internal_error); ++c) {
      std::string name(lx::report::to_string(static_cast<RunClass>(c)));
      EXPECT_NE(schema.find('"' + name + '"'), std::string::npos) << name << " missing from " << file;
    }
  }
}

TEST(ResultTable, SizedTmpfsUsage) {
  auto f = ran(exited(1));
  f.outcome->tmpfs = {{"/scratch", 8 << 20, 8 << 20, true}};
  auto line = audit::to_json_line(lx::report::result_table(f));
  EXPECT_NE(line.find(R"("class":"disk_quota_exceeded")"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("tmpfs":[{"full":true,"path":"/scratch","size_bytes":8388608,"used_bytes":8388608}])"),
            std::string::npos) << line;
}

TEST(ResultTable, CarriesTheRequiredFields) {
  auto f = ran(SIGSYS);
  f.run_id = std::string(32, 'a');
  f.outcome->exit_status = 159;
  auto line = audit::to_json_line(lx::report::result_table(f));
  for (const char* want : {R"("schema":"cage.result/2")", R"("class":"seccomp_killed")", R"("exit_code":159)",
                           R"("signal_name":"SIGSYS")", R"("network":{)", R"("not_enforced":[])"})
    EXPECT_NE(line.find(want), std::string::npos) << want << " in " << line;
  f.enforced = {"landlock", {"pid"}};
  line = audit::to_json_line(lx::report::result_table(f));
  EXPECT_NE(line.find(R"("degraded":["pid"])"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("mechanism":"landlock")"), std::string::npos) << line;
}

}  // namespace
}  // namespace cage::testing

// Issue 20, point 4: one line for each death cage can explain, naming the cause and the remedy;
// nothing for the others.
TEST(DeathNote, NamesCauseAndRemedyForItsClassesOnly) {
  using cage::lx::report::death_note;
  using cage::lx::report::RunClass;
  cage::policy::Policy p;
  p.limits.timeout_ms = 90000;
  p.limits.memory_bytes = 32ull << 20;
  std::string sys = death_note(RunClass::seccomp_killed, p, "iopl, settimeofday");
  EXPECT_NE(sys.find("seccomp filter (SIGSYS, exit 159)"), std::string::npos) << sys;
  EXPECT_NE(sys.find("one of iopl, settimeofday"), std::string::npos) << sys;
  EXPECT_NE(sys.find("--seccomp relaxed"), std::string::npos) << sys;
  EXPECT_NE(death_note(RunClass::seccomp_killed, p, "").find("forbids"), std::string::npos);
  std::string to = death_note(RunClass::timed_out, p, "");
  EXPECT_NE(to.find("--timeout 90s (exit 124)"), std::string::npos) << to;
  std::string oom = death_note(RunClass::oom_killed, p, "");
  EXPECT_NE(oom.find("--memory 32M"), std::string::npos) << oom;
  EXPECT_NE(oom.find("raise --memory"), std::string::npos) << oom;
  for (auto c : {RunClass::completed, RunClass::signaled, RunClass::pids_exhausted, RunClass::exec_failed,
                 RunClass::sandbox_unavailable, RunClass::invalid_policy})
    EXPECT_EQ(death_note(c, p, "iopl"), "");
  cage::lx::report::RunFacts f;
  f.outcome = cage::lx::RunOutcome{};
  f.outcome->tmpfs = {{"/tmp", 8 << 20, 8 << 20, true}};
  f.net.denied = 2;
  std::string disk = death_note(RunClass::disk_quota_exceeded, p, "", &f);
  EXPECT_NE(disk.find("full: /tmp (size 8M)"), std::string::npos) << disk;
  EXPECT_NE(disk.find("--tmpfs-size"), std::string::npos) << disk;
  std::string net = death_note(RunClass::network_denied, p, "", &f);
  EXPECT_NE(net.find("denied 2 connections or lookups"), std::string::npos) << net;
  for (const auto& s : {sys, to, oom}) EXPECT_EQ(s.find('\n'), std::string::npos);
}
