// The macOS records (--result, --audit): built from descriptions of macOS runs (no sandbox-exec) and
// checked against docs/schema with the repository's own validator (tests/integration/limits_schema.py,
// python3); the class decision; sandbox-exec's own failures told from the command's exit
// (macos::sandbox_exec_failure); and a whole report session through the sandbox-exec stand-in of
// macos_execute_test, whose result and audit log are validated the same way.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/options.h"
#include "common/audit.h"
#include "macos/execute.h"
#include "macos/report.h"
#include "macos/session.h"

namespace cage::testing {
namespace {

using macos::report::RunClass;
using macos::report::RunFacts;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class MacosReport : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/cage-macreport.XXXXXX";
    ASSERT_NE(mkdtemp(t), nullptr);
    dir_ = t;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<policy::Policy> policy_of(std::vector<std::string> words) {
    words.insert(words.begin(), "cage");
    auto inv = cli::parse(words, dir_);
    if (!inv) return inv.error();
    return policy::validate(inv->input, policy::Context{dir_, dir_, {}});
  }

  // Validates text (one document, or JSON lines) against docs/schema/NAME; "" when it matches.
  std::string schema_errors(const std::string& text, const std::string& schema, bool lines) {
    const std::string src = CAGE_SOURCE_DIR;
    const std::string file = dir_ + "/doc.json", err = dir_ + "/schema.err";
    std::ofstream(file) << text;
    const std::string cmd = "python3 " + src + "/tests/integration/limits_schema.py " + src +
                            "/docs/schema/" + schema + " " + file + (lines ? " --lines" : "") + " 2>" + err;
    int rc = std::system(cmd.c_str());
    return rc == 0 ? std::string() : "exit " + std::to_string(rc) + ": " + slurp(err);
  }

  void SkipWithoutPython() {
    if (std::system("python3 -c pass 2>/dev/null") != 0) GTEST_SKIP() << "no python3 to validate the schemas";
  }

  std::string dir_;
};

// A spawn event's fields with the common ones Log::emit adds, as one audit line.
std::string audit_line(const std::string& type, toml::table fields) {
  fields.insert_or_assign("schema", audit::kAuditSchema);
  fields.insert_or_assign("type", type);
  fields.insert_or_assign("time", "2026-11-27T07:00:00.000Z");
  fields.insert_or_assign("run_id", std::string(32, 'a'));
  return audit::to_json_line(fields) + "\n";
}

macos::MacPlan plan_for(const policy::Policy& p) {
  macos::MacPlan plan;
  plan.sbpl = "(version 1)(deny default)";
  plan.private_home = true;
  if (p.limits.memory_bytes) plan.unenforced.push_back("--memory: macOS has no per-run memory limit");
  if (p.limits.pids) plan.unenforced.push_back("--pids: macOS counts processes per user, not per run");
  return plan;
}

TEST_F(MacosReport, SpawnExitAndResultMatchTheSchemas) {
  SkipWithoutPython();
  auto p = policy_of({"--net", "example.org:443", "--memory", "512M", "--pids", "64", "--label", "job=ci",
                      "--", "make", "test"});
  ASSERT_TRUE(p) << p.error().reason;
  const auto plan = plan_for(*p);
  const policy::Enforcement used = macos::report::enforcement();
  const std::string hash = policy::policy_hash(*p, &used);
  auto spawn = macos::report::spawn_fields(*p, plan, hash, "23.1.0", "arm64");
  std::string line = audit::to_json_line(spawn);
  for (const char* want : {R"("os":"macos")", R"("mechanism":"seatbelt")", R"("network":"proxy")",
                           R"("limit":"--memory 512M")", R"("limit":"--pids 64")", R"("private_home":true)",
                           R"("enforced":{"degraded":[],"mechanism":"seatbelt"})"})
    EXPECT_NE(line.find(want), std::string::npos) << want << " in " << line;

  RunFacts f;
  f.run_id = std::string(32, 'a');
  f.policy_hash = hash;
  f.compiled = true;
  f.unenforced = macos::report::unenforced_fields(*p, plan.unenforced);
  f.ended = macos::report::Ended{3, 0, false, false, 3};
  f.net.denied = 1;
  f.wall_ms = 12;
  f.user_ms = f.system_ms = 1;
  f.maxrss_bytes = 1 << 20;
  proxy::NetEvent denied;
  denied.protocol = "connect";
  denied.host = "evil.example";
  denied.port = 443;
  denied.reason = "not in the allowlist";
  std::string log = audit_line("spawn", spawn) + audit_line("net", record::net_fields(denied));
  for (const auto& u : f.unenforced) log += audit_line("limits_not_enforced", u);
  log += audit_line("killed", toml::table{{"reason", "timeout"}, {"signal", record::signal_name(SIGTERM)}});
  log += audit_line("exit", macos::report::exit_fields(f));
  EXPECT_EQ(schema_errors(log, "audit-event.schema.json", true), "");
  const std::string result = audit::to_json_line(macos::report::result_table(f));
  EXPECT_NE(result.find(R"("class":"network_denied")"), std::string::npos) << result;
  EXPECT_NE(result.find(R"("workload_exit_code":3)"), std::string::npos) << result;
  EXPECT_NE(result.find(R"("source":"ru_maxrss")"), std::string::npos) << result;
  EXPECT_EQ(schema_errors(result, "result.schema.json", false), "");

  // A refused run: only the error, in both records.
  RunFacts refused;
  refused.run_id = "run-1";
  refused.error = Error{ErrorClass::not_found, "not found", "", "no-such-tool", 0};
  const std::string r2 = audit::to_json_line(macos::report::result_table(refused));
  EXPECT_NE(r2.find(R"("class":"not_found")"), std::string::npos) << r2;
  EXPECT_NE(r2.find(R"("exit_code":127)"), std::string::npos) << r2;
  EXPECT_EQ(schema_errors(r2, "result.schema.json", false), "");
  EXPECT_EQ(schema_errors(audit_line("error", toml::table{{"error", record::error_fields(*refused.error)}}),
                          "audit-event.schema.json", true),
            "");
}

// The schema's macOS branch is a check, not a pass: a Linux-only field in a macOS spawn is refused.
TEST_F(MacosReport, TheSchemaRefusesLinuxFieldsInAMacSpawn) {
  SkipWithoutPython();
  auto p = policy_of({"--", "true"});
  ASSERT_TRUE(p);
  auto spawn = macos::report::spawn_fields(*p, plan_for(*p), policy::policy_hash(*p), "23.1.0", "arm64");
  spawn["mechanisms"].as_table()->insert("landlock_abi", 4);
  EXPECT_NE(schema_errors(audit_line("spawn", spawn), "audit-event.schema.json", true), "");
}

TEST(MacosReportClass, EachEnd) {
  auto ended = [](std::optional<int> code, int sig, bool timed_out = false) {
    RunFacts f;
    f.ended = macos::report::Ended{code, sig, timed_out, false, 0};
    return f;
  };
  EXPECT_EQ(classify(ended(0, 0)), RunClass::completed);
  EXPECT_EQ(classify(ended(2, 0)), RunClass::completed);
  EXPECT_EQ(classify(ended(std::nullopt, SIGKILL)), RunClass::signaled);
  EXPECT_EQ(classify(ended(std::nullopt, SIGTERM, true)), RunClass::timed_out);
  auto denied = ended(1, 0);
  denied.net.denied = 2;
  EXPECT_EQ(classify(denied), RunClass::network_denied);
  auto coped = ended(0, 0);
  coped.net.denied = 2;
  EXPECT_EQ(classify(coped), RunClass::completed);
  auto aborted = ended(std::nullopt, SIGKILL);
  aborted.ended->aborted = true;
  EXPECT_EQ(classify(aborted), RunClass::sandbox_unavailable);
  RunFacts never;
  EXPECT_EQ(classify(never), RunClass::sandbox_unavailable);
  EXPECT_EQ(record::signal_name(SIGKILL), "SIGKILL");
}

// sandbox-exec's own 65 and 71 are errors only while the process still bears sandbox-exec's name;
// the command's own 65 or 71 (it exec'd: the name is its own) passes through.
TEST(MacosSandboxExecFailure, TheNameAtExitDecides) {
  auto e71 = macos::sandbox_exec_failure(71 << 8, "sandbox-exec", "/usr/bin/make");
  ASSERT_TRUE(e71);
  EXPECT_EQ(e71->cls, ErrorClass::exec_failed);
  EXPECT_EQ(exit_status_of(*e71), 126);
  EXPECT_EQ(e71->input, "/usr/bin/make");
  auto e65 = macos::sandbox_exec_failure(65 << 8, "sandbox-exec", "/usr/bin/make");
  ASSERT_TRUE(e65);
  EXPECT_EQ(e65->cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(exit_status_of(*e65), 125);
  EXPECT_FALSE(macos::sandbox_exec_failure(71 << 8, "make", "/usr/bin/make"));  // the command's own 71
  EXPECT_FALSE(macos::sandbox_exec_failure(65 << 8, "python3.12", "/usr/bin/python3"));
  EXPECT_FALSE(macos::sandbox_exec_failure(71 << 8, "", "/usr/bin/make"));  // unknown: passed through
  EXPECT_FALSE(
      macos::sandbox_exec_failure(SIGKILL, "sandbox-exec", "/usr/bin/make"));  // a death, not an exit
  EXPECT_FALSE(macos::sandbox_exec_failure(71 << 8, "sandbox-exec", "/opt/bin/sandbox-exec"));  // ambiguous
}

// The mechanism through the stand-in: a sandbox-exec that fails without exec'ing gives the
// structured error; a command that exits 71 itself keeps its status.
TEST_F(MacosReport, StandInFailureBeforeExecIsSandboxExecs) {
  const std::string fake = dir_ + "/sandbox-exec";
  std::ofstream(fake)
      << "#!/bin/sh\necho 'sandbox-exec: execvp() of x failed: Operation not permitted' >&2\nexit 71\n";
  chmod(fake.c_str(), 0755);
  const std::vector<std::pair<std::string, std::string>> env = {{"PATH", "/usr/bin:/bin"},
                                                                {"TMPDIR", "/tmp"}};
  auto p = policy_of({"--", "true"});
  ASSERT_TRUE(p);
  auto r = macos::execute(*p, env, fake);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().cls, ErrorClass::exec_failed);
  const std::string passes = dir_ + "/passes";
  std::ofstream(passes) << "#!/bin/sh\nshift 3\nexec \"$@\"\n";
  chmod(passes.c_str(), 0755);
  std::filesystem::rename(passes, dir_ + "/sandbox-exec");
  auto own = policy_of({"--", "sh", "-c", "exit 71"});
  ASSERT_TRUE(own);
  auto r2 = macos::execute(*own, env, fake);
  ASSERT_TRUE(r2) << r2.error().reason;
  EXPECT_EQ(*r2, 71);
}

// A whole session: --result and --audit files from a run through the stand-in, validated.
TEST_F(MacosReport, SessionWritesValidRecords) {
  SkipWithoutPython();
  const std::string fake = dir_ + "/sandbox-exec";
  std::ofstream(fake) << "#!/bin/sh\nshift 3\nexec \"$@\"\n";
  chmod(fake.c_str(), 0755);
  std::filesystem::create_directory(dir_ + "/out");
  ReportOptions opts;
  opts.result = dir_ + "/out/result.json";
  opts.audit = dir_ + "/out/audit.jsonl";
  opts.run_id = "mac-session-1";
  auto s = macos::Session::open(opts);
  ASSERT_TRUE(s) << s.error().reason;
  auto p = policy_of({"--label", "job=ci", "--", "sh", "-c", "exit 4"});
  ASSERT_TRUE(p);
  (*s)->set_policy(*p);
  const std::vector<std::pair<std::string, std::string>> env = {{"PATH", "/usr/bin:/bin"},
                                                                {"TMPDIR", "/tmp"}};
  EXPECT_EQ((*s)->run(*p, env, false, fake), 4);
  s->reset();
  const std::string result = slurp(opts.result), log = slurp(opts.audit);
  EXPECT_NE(result.find(R"("workload_exit_code":4)"), std::string::npos) << result;
  EXPECT_NE(result.find(R"("mechanism":"seatbelt")"), std::string::npos) << result;
  EXPECT_NE(log.find(R"("type":"spawn")"), std::string::npos) << log;
  EXPECT_NE(log.find(R"("type":"exit")"), std::string::npos) << log;
  EXPECT_NE(log.find(R"("labels":{"job":"ci"})"), std::string::npos) << log;
  EXPECT_EQ(schema_errors(result, "result.schema.json", false), "");
  EXPECT_EQ(schema_errors(log, "audit-event.schema.json", true), "");
}

// A record inside a --rw grant is refused before anything runs, as on Linux.
TEST_F(MacosReport, SessionRefusesARecordInsideARwGrant) {
  std::filesystem::create_directory(dir_ + "/out");
  ReportOptions opts;
  opts.result = dir_ + "/out/result.json";
  auto s = macos::Session::open(opts);
  ASSERT_TRUE(s);
  auto p = policy_of({"--rw", dir_ + "/out", "--", "true"});
  ASSERT_TRUE(p) << p.error().reason;
  EXPECT_EQ((*s)->run(*p, {{"PATH", "/usr/bin:/bin"}}, false, dir_ + "/never-run"), 125);
  s->reset();
  EXPECT_NE(slurp(opts.result).find(R"("class":"invalid_policy")"), std::string::npos);
}

}  // namespace
}  // namespace cage::testing
