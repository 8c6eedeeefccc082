// The reporting side of a macOS run (--result, --audit, --audit-required): opens the destinations,
// records the spawn, net, killed, error and exit events, runs macos::run with the hooks that feed
// them, and writes the result. The records are macos/report.h's; the log and its writer thread are
// Linux's (common/audit.h). Proved on Linux with the sandbox-exec stand-in
// (tests/unit/macos_execute_test.cc: records checked against docs/schema).
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/audit.h"
#include "common/report_options.h"
#include "macos/execute.h"
#include "macos/report.h"

namespace cage::macos {

class Session {
 public:
  // Opens --result and --audit. An audit log that cannot be opened is a warning, or with
  // --audit-required an error; a result destination that cannot be opened is always an error.
  static Result<std::unique_ptr<Session>> open(const ReportOptions& opts);
  ~Session();
  static Session* active();  // the session main.cc's error path reports to, while it lives
  void set_policy(const policy::Policy& p);
  // Prints the error as main would, records it (audit "error" event, result) and returns the exit status.
  int fail(const Error& e, bool json);
  // Runs the policy under sandbox-exec with the records around it. Returns cage's exit status.
  int run(const policy::Policy& pol, const std::vector<std::pair<std::string, std::string>>& env,
          bool json_errors, const std::string& sandbox_exec = kSandboxExec);

 private:
  Session() = default;
  void emit(const std::string& type, toml::table fields);
  Status record_spawn(const policy::Policy& pol, const MacPlan& plan);
  RunHooks make_hooks();
  void record_exit(const MacOutcome& out);
  void finish();
  ReportOptions opts_;
  std::unique_ptr<audit::Log> log_;
  UniqueFd result_fd_;
  report::RunFacts facts_;
  std::mutex net_mu_;
  bool finished_ = false;
};

}  // namespace cage::macos
