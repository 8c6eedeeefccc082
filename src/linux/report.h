// The reporting side of a run (--result, --audit, --audit-required, limit warnings): opens the
// destinations, records the spawn, network, kill, error and exit events, runs lx::execute with the
// hooks that feed them, and writes the result. See result.h for the formats.
#pragma once
#include <memory>
#include <mutex>
#include <set>

#include "common/report_options.h"
#include "common/audit.h"
#include "linux/learn.h"
#include "linux/learn_file.h"
#include "linux/result.h"

namespace cage::lx::report {

class Session {
 public:
  // Opens --result and --audit. An audit log that cannot be opened is a warning, or with
  // --audit-required an error; a result destination that cannot be opened is always an error.
  static Result<std::unique_ptr<Session>> open(const ReportOptions& opts);
  ~Session();
  // The session main.cc's error path reports to (one per process, while it lives).
  static Session* active();
  void set_policy(const policy::Policy& p);
  // Prints the error as main would, records it (audit "error" event, result) and returns the exit status.
  int fail(const Error& e, bool json);
  // Warns about unenforced limits, records the spawn, runs the plan, records the end. Returns the exit status.
  int run(const Plan& plan, const policy::Policy& pol, bool json_errors);
  // --learn: the run that follows is judged against baseline (the plan of the user's own flags) and
  // its profile written to target (learn.h).
  struct Learning {
    Plan baseline;
    learn::Target target;
    policy::Policy user;  // the user's own policy (the run's is the learning view)
  };
  void set_learning(Learning l) { learning_ = std::make_unique<Learning>(std::move(l)); }

 private:
  Session() = default;
  void emit(const std::string& type, toml::table fields);
  void finish(bool json_errors);  // closes the log, writes the result
  std::string record_inside_grant(const policy::Policy& pol) const;
  // The steps of run(), in order.
  Status refuse_writable_records(const policy::Policy& pol) const;  // --audit, --result, capped output
  void announce_plan(const Plan& plan);             // the cwd note and the limits no cgroup enforces
  Status record_spawn(const Plan& plan, const policy::Policy& pol);  // fsynced under --audit-required
  RunHooks make_hooks();
  Result<RunOutcome> execute_timed(const Plan& plan, const RunHooks& hooks);  // wall and CPU time
  // --explain: judged, printed, recorded.
  void explain_run(const Plan& plan, const policy::Policy& pol, const RunOutcome& out);
  Status learn_run(const Plan& plan, const RunOutcome& out);  // --learn: judged, written
  RunClass record_exit(const RunOutcome& out);      // the killed, offline_lookups and exit events
  void tell_outcome(RunClass cls, const policy::Policy& pol, const RunOutcome& out);  // death note, hints
  ReportOptions opts_;
  std::unique_ptr<audit::Log> log_;
  UniqueFd result_fd_;
  RunFacts facts_;
  std::mutex net_mu_;
  bool explain_ = false;
  explain::Accesses net_refused_;  // --explain: the proxy's denials (under net_mu_)
  uint64_t net_dropped_ = 0;       // and those past explain::kMaxDistinct
  bool finished_ = false;
  std::unique_ptr<Learning> learning_;
  std::set<std::string> net_used_;  // --learn: "host:port" the proxy let through (under net_mu_)
};

}  // namespace cage::lx::report
