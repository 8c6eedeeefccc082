// Reporting around macos::run (see session.h): the audit events in the order they happen and the
// result once the run is over, on every path main.cc takes after parsing, as Linux's report.cc does.
#include "macos/session.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include <cstring>
#include <iostream>

#include "common/exit_status.h"
#include "common/json.h"
#include "proxy/loopback.h"

namespace cage::macos {

namespace {

Session* g_active = nullptr;
constexpr int kSpawnSyncMs = 5000;  // how long --audit-required waits for the spawn event to be on disk

int64_t mono_ms() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

report::Ended ended_of(const MacOutcome& out) {
  report::Ended e;
  if (WIFEXITED(out.wait_status)) e.exit_code = WEXITSTATUS(out.wait_status);
  if (WIFSIGNALED(out.wait_status)) e.signal = WTERMSIG(out.wait_status);
  e.timed_out = out.timed_out;
  e.aborted = out.aborted;
  e.exit_status = out.exit_status;
  return e;
}

}  // namespace

Result<std::unique_ptr<Session>> Session::open(const ReportOptions& opts) {
  std::unique_ptr<Session> s(new Session());
  s->opts_ = opts;
  s->facts_.run_id = opts.run_id.empty() ? audit::new_run_id() : opts.run_id;
  s->facts_.audit_requested = !opts.audit.empty();
  auto sinks = audit::open_sinks(opts, s->facts_.run_id);
  if (!sinks) return sinks.error();
  s->result_fd_ = std::move(sinks->result);
  s->log_ = std::move(sinks->log);
  s->facts_.audit_ok = sinks->audit_ok;
  s->facts_.audit_error = std::move(sinks->audit_error);
  g_active = s.get();
  return s;
}

Session::~Session() {
  if (g_active == this) g_active = nullptr;
  if (log_ && !log_->close(2000)) (void)log_.release();  // its writer is stuck in write(2): keep it alive
}

Session* Session::active() {
  return g_active;
}

void Session::set_policy(const policy::Policy& p) {
  facts_.policy_hash = policy::policy_hash(p);
  for (const auto& [k, v] : p.labels) facts_.labels.insert_or_assign(k, v);
  if (log_) log_->set_labels(facts_.labels);
}

void Session::emit(const std::string& type, toml::table fields) {
  if (log_) log_->emit(type, std::move(fields));
}

int Session::fail(const Error& e, bool json) {
  std::cerr << (json ? render_error_json(e) : render_error_text(e)) << std::endl;
  emit("error", toml::table{{"error", record::error_fields(e)}});
  if (!facts_.error) facts_.error = e;
  finish();
  return exit_status_of(e);
}

Status Session::record_spawn(const policy::Policy& pol, const MacPlan& plan) {
  // The hash at validation could not know the mechanism; now it is seatbelt (Linux does the same).
  const policy::Enforcement used = report::enforcement();
  facts_.policy_hash = policy::policy_hash(pol, &used);
  facts_.compiled = true;
  facts_.unenforced = report::unenforced_fields(pol, plan.unenforced);
  for (const auto& u : facts_.unenforced) emit("limits_not_enforced", u);
  struct utsname un {};
  ::uname(&un);
  emit("spawn", report::spawn_fields(pol, plan, facts_.policy_hash, un.release, un.machine));
  // --audit-required: the spawn record is on disk before the command exists.
  if (opts_.audit_required && log_) log_->sync(kSpawnSyncMs);
  if (opts_.audit_required && (!log_ || log_->failed()))
    return unavailable("--audit " + opts_.audit,
                       "the audit log cannot be written: " + (log_ ? log_->failure() : facts_.audit_error),
                       "fix the destination, or drop --audit-required");
  return Ok{};
}

RunHooks Session::make_hooks() {
  RunHooks hooks;
  hooks.net = [this](const proxy::NetEvent& e) {
    {
      std::lock_guard<std::mutex> lock(net_mu_);
      facts_.net.count(e);
    }
    // A refusal or failure may be retried in a loop: coalesced (audit_coalesce.h), as on Linux.
    if (e.decision == proxy::Decision::allowed) {
      emit("net", record::net_fields(e));
    } else if (log_) {
      log_->emit_coalesced("net", record::net_identity(e), record::net_fields(e));
    }
    proxy::print_denials(e);  // what the default sink prints, kept with the audit log
  };
  hooks.killed = [this](const char* reason, int sig) {
    emit("killed", toml::table{{"reason", reason}, {"signal", record::signal_name(sig)}});
  };
  if (opts_.audit_required && log_) hooks.abort_fd = log_->failure_fd();
  return hooks;
}

void Session::record_exit(const MacOutcome& out) {
  facts_.ended = ended_of(out);
  if (out.aborted)
    facts_.error = unavailable("--audit " + opts_.audit,
                               "the audit log failed during the run: " + (log_ ? log_->failure() : "") +
                                   "; the command was killed (--audit-required)",
                               "fix the destination, or drop --audit-required");
  emit("exit", report::exit_fields(facts_));
}

int Session::run(const policy::Policy& pol, const std::vector<std::pair<std::string, std::string>>& env,
                 bool json_errors, const std::string& sandbox_exec) {
  audit::Grants rw;
  for (const auto& r : pol.rw) rw.emplace_back(r.path, r.origin);
  if (auto where = audit::record_inside(rw, opts_.audit, opts_.result); !where.empty())
    return fail(invalid(where, "the sandbox could rewrite or truncate this record",
                        "write it outside the --rw grants, or to fd:N"),
                json_errors);
  const int64_t t0 = mono_ms();
  RunHooks hooks = make_hooks();
  hooks.spawning = [this, &pol](const MacPlan& plan) { return record_spawn(pol, plan); };
  auto out = macos::run(pol, env, hooks, sandbox_exec);
  facts_.wall_ms = mono_ms() - t0;
  if (log_) log_->flush_repeats();  // the proxy has stopped: held counts precede the last events
  proxy::print_denials_held();
  struct rusage ru {};
  if (::getrusage(RUSAGE_CHILDREN, &ru) == 0) {
    facts_.user_ms = static_cast<int64_t>(ru.ru_utime.tv_sec) * 1000 + ru.ru_utime.tv_usec / 1000;
    facts_.system_ms = static_cast<int64_t>(ru.ru_stime.tv_sec) * 1000 + ru.ru_stime.tv_usec / 1000;
#if defined(__APPLE__)
    facts_.maxrss_bytes = static_cast<int64_t>(ru.ru_maxrss);  // bytes on macOS
#else
    facts_.maxrss_bytes = static_cast<int64_t>(ru.ru_maxrss) * 1024;  // KiB on Linux (the tests' host)
#endif
  }
  if (!out) return fail(out.error(), json_errors);
  record_exit(*out);
  if (facts_.error) std::cerr << render_error_text(*facts_.error) << std::endl;
  finish();
  if (facts_.error) return exit_status_of(*facts_.error);
  if (opts_.audit_required && !facts_.audit_ok) return exit_status::kCageError;
  // Died of signal N: main ends cage by N too (exit_status::finish). No SIGTERM escalation here yet:
  // the Mac's supervisor only forwards (macos/execute.cc).
  if (WIFSIGNALED(out->wait_status) && !out->timed_out && !out->aborted)
    exit_status::set_died_of(WTERMSIG(out->wait_status));
  return out->exit_status;
}

void Session::finish() {
  if (finished_) return;
  finished_ = true;
  if (log_) {
    if (!log_->close(2000)) (void)log_.release();
    if (log_ && log_->failed()) {
      facts_.audit_ok = false;
      facts_.audit_error = log_->failure();
    } else if (!log_) {
      facts_.audit_ok = false;
      facts_.audit_error = "the destination did not take the last events in time";
    }
    if (!facts_.audit_ok)
      std::cerr << "cage: warning: audit log incomplete: " << printable(facts_.audit_error) << "\n";
    if (!facts_.audit_ok && opts_.audit_required && !facts_.error)
      facts_.error = unavailable("--audit " + opts_.audit, "the audit log failed: " + facts_.audit_error,
                                 "fix the destination, or drop --audit-required");
  }
  if (result_fd_.valid()) {
    if (int e = audit::write_all(result_fd_.get(), audit::to_json_line(report::result_table(facts_)) + "\n"))
      std::cerr << "cage: warning: cannot write the result (--result " << printable(opts_.result)
                << "): " << std::strerror(e) << "\n";
  }
}

}  // namespace cage::macos
