// Reporting around lx::execute (see report.h): the audit events in the order they happen, the
// warning for each limit no cgroup enforces, and the result once the run is over, on every path
// main.cc takes after parsing. Proved by tests/integration/limits_audit.sh and limits_result.sh.
#include "linux/report.h"

#include "linux/compile.h"
#include "linux/host_lookup.h"
#include "linux/offline_resolver.h"
#include "linux/seccomp_profiles.h"
#include "proxy/allowlist.h"
#include "proxy/loopback.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>

#include "common/exit_status.h"
#include "common/json.h"
#include "policy/canonical.h"
#include "policy/policy.h"

namespace cage::lx::report {

namespace {

Session* g_active = nullptr;
// How long --audit-required waits for the spawn event to reach the disk before refusing the run.
constexpr int kSpawnSyncMs = 5000;

int64_t mono_ms() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

Session* Session::active() { return g_active; }

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
  emit("error", toml::table{{"error", error_fields(e)}});
  if (!facts_.error) facts_.error = e;
  finish(json);
  return exit_status_of(e);
}

namespace {

audit::Grants rw_grants(const policy::Policy& pol) {
  audit::Grants g;
  for (const auto& r : pol.rw) g.emplace_back(r.path, r.origin);
  return g;
}

}  // namespace

// A record the sandbox could rewrite is no record (audit::record_inside). Empty when neither is.
std::string Session::record_inside_grant(const policy::Policy& pol) const {
  return audit::record_inside(rw_grants(pol), opts_.audit, opts_.result);
}

namespace {

// A capped stream that is a file beneath a --rw grant: the command could write to it by its path,
// past the cap (the output cap's twin of record_inside_grant).
std::string capped_output_inside_grant(const policy::Policy& pol) {
  for (int fd = 1; fd <= 2; ++fd) {
    if (!(fd == 1 ? pol.limits.max_stdout : pol.limits.max_stderr)) continue;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (auto held = audit::held_by("/proc/self/fd/" + std::to_string(fd), rw_grants(pol)))
      return pol.limits.output_origin + ": " + (fd == 1 ? "stdout" : "stderr") + " is " + held->real +
             ", beneath " + held->origin;
  }
  return {};
}

}  // namespace

Status Session::refuse_writable_records(const policy::Policy& pol) const {
  if (auto where = record_inside_grant(pol); !where.empty())
    return invalid(where, "the sandbox could rewrite or truncate this record",
                   "write it outside the --rw grants, or to fd:N");
  if (auto where = capped_output_inside_grant(pol); !where.empty())
    return invalid(where, "the command could write to this file by its path, past the cap",
                   "redirect the capped stream outside the --rw grants (or into a pipe)");
  return Ok{};
}

void Session::announce_plan(const Plan& plan) {
  // Said to a person (stderr a terminal), not into a script's or an agent's captured stderr, where
  // --dry-run carries it.
  if (!plan.cwd_note.empty() && !opts_.quiet && ::isatty(STDERR_FILENO))
    std::cerr << "cage: note: " << printable(plan.cwd_note) << "\n";
  facts_.unenforced = plan.cgroup.unenforced;
  facts_.layers = layers_in_force(plan);
  for (const auto& u : plan.cgroup.unenforced) {
    std::cerr << "cage: warning: " << printable(u.limit + " is not enforced by a cgroup: " + u.why) << "\n";
    emit("limits_not_enforced", unenforced_fields(u));
  }
}

Status Session::record_spawn(const Plan& plan, const policy::Policy& pol) {
  // The hash set at validation could not know how the host enforces the policy: now it does.
  facts_.enforced = enforcement_of(plan);
  facts_.policy_hash = policy::policy_hash(pol, &facts_.enforced);
  struct utsname un {};
  ::uname(&un);
  emit("spawn", spawn_fields(pol, plan, facts_.policy_hash, un.release, un.machine));
  // --audit-required: the spawn record is on disk (written and fsynced) before the workload exists,
  // so a crash of the host right after the start cannot lose the record of what was started.
  if (opts_.audit_required && log_) log_->sync(kSpawnSyncMs);
  if (opts_.audit_required && (!log_ || log_->failed()))
    return unavailable("--audit " + opts_.audit,
                       "the audit log cannot be written: " + (log_ ? log_->failure() : facts_.audit_error),
                       "fix the destination, or drop --audit-required");
  return Ok{};
}

// What the executor reports while the workload runs: proxy decisions, limits that lost their
// cgroup at run time, and kills by cage; each becomes an audit event and a count in the result.
RunHooks Session::make_hooks() {
  RunHooks hooks;
  hooks.hash_output = !opts_.result.empty();
  hooks.net = [this](const proxy::NetEvent& e) {
    {
      std::lock_guard<std::mutex> lock(net_mu_);
      facts_.net.count(e);
    }
    if (learning_ && e.decision == proxy::Decision::allowed) {
      std::lock_guard<std::mutex> lock(net_mu_);
      if (net_used_.size() < explain::kMaxDistinct) net_used_.insert(proxy::host_port_text(e.host, e.port));
    }
    if (explain_ && e.decision == proxy::Decision::denied) {
      std::lock_guard<std::mutex> lock(net_mu_);
      const explain::Key key{explain::Op::connect, proxy::host_port_text(e.host, e.port)};
      if (net_refused_.size() >= explain::kMaxDistinct && !net_refused_.count(key)) {
        ++net_dropped_;  // bounded as the observer's path record is: the names are the workload's
      } else {
        auto& s = net_refused_[key];
        s.order = s.count++ ? s.order : net_refused_.size();
      }
    }
    // A refusal or failure may be retried in a loop: coalesced (audit_coalesce.h). Allowed
    // connections are each their own line.
    if (e.decision == proxy::Decision::allowed) {
      emit("net", net_fields(e));
    } else if (log_) {
      log_->emit_coalesced("net", record::net_identity(e), net_fields(e));
    }
    proxy::print_denials(e);  // what the default sink prints, kept with the audit log
  };
  hooks.limits_fallback = [this](const std::vector<Unenforced>& fallback, const std::string& reason) {
    for (auto u : fallback) {
      u.why.insert(std::min(u.why.find(';'), u.why.size()), " (" + reason + ")");
      std::cerr << "cage: warning: " << u.limit << " is not enforced by a cgroup: " << u.why << "\n";
      emit("limits_not_enforced", unenforced_fields(u));
      facts_.unenforced.push_back(std::move(u));
    }
  };
  hooks.killed = [this](const char* reason, int sig) {
    emit("killed", toml::table{{"reason", reason}, {"signal", signal_name(sig)}});
  };
  if (opts_.audit_required && log_) hooks.abort_fd = log_->failure_fd();
  return hooks;
}

Result<RunOutcome> Session::execute_timed(const Plan& plan, const RunHooks& hooks) {
  int64_t t0 = mono_ms();
  auto out = execute(plan, hooks);
  facts_.wall_ms = mono_ms() - t0;
  struct rusage ru {};
  if (::getrusage(RUSAGE_CHILDREN, &ru) == 0) {
    facts_.user_ms = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
    facts_.system_ms = ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
    facts_.maxrss_bytes = static_cast<int64_t>(ru.ru_maxrss) * 1024;
  }
  return out;
}

namespace {
// The host's answer for a path the workload named, found on the host's local filesystems only
// (host_lookup.h: no name of the workload's is asked of a file server, and no lookup can stall).
struct HostAnswers {
  host_lookup::Mounts mounts = host_lookup::Mounts::of_this_process();
  host_lookup::Fs fs = host_lookup::Fs::real();
  int kind(const std::string& path) const {
    switch (host_lookup::lookup(path, mounts, fs).kind) {
      case host_lookup::Kind::absent: return 0;
      case host_lookup::Kind::file: return 1;
      case host_lookup::Kind::dir: return 2;
      case host_lookup::Kind::unchecked: return -1;
    }
    return -1;
  }
  // The path with the host's links resolved; a name that does not exist keeps its own last parts.
  std::string canonical(const std::string& path) const {
    auto a = host_lookup::lookup(path, mounts, fs);
    return a.kind == host_lookup::Kind::unchecked ? path : a.canonical;
  }
};
}  // namespace

void Session::explain_run(const Plan& plan, const policy::Policy& pol, const RunOutcome& out) {
  if (!plan.explain || learning_) return;  // --learn observes as --explain does, and reports a profile
  explain::Accesses all = out.explained.seen;
  {
    std::lock_guard<std::mutex> lock(net_mu_);
    all.insert(net_refused_.begin(), net_refused_.end());
  }
  uint64_t net_dropped = 0;
  {
    std::lock_guard<std::mutex> lock(net_mu_);
    net_dropped = net_dropped_;
  }
  const HostAnswers host;
  // Under Landlock only the plan names the run's private HOME and TMPDIR "<private>": judged as the
  // directory they were, they are the workload's own (writable), not a refusal beneath /tmp.
  Plan judged = plan;
  if (!out.private_dir.empty())
    for (auto& r : judged.landlock.rules)
      if (is_private_dir_rule(r)) r.path = out.private_dir;
  auto found = explain::classify(
      judged, all, [&](const std::string& p) { return host.kind(p); },
      [&](const std::string& p) { return host.canonical(p); }, pol.home);
  // The profile's errno refusals and kills (seccomp_observe.h), first seen first, ahead of the paths.
  std::vector<explain::Finding> calls;
  for (const auto& [name, r] : out.explained.refused)
    calls.push_back({explain::Op::syscall, name, r.killed ? explain::Verdict::killed : explain::Verdict::refused,
                     r.remedy, r.seen.count, r.seen.pid, r.seen.comm, 1, r.seen.order});
  for (const auto& [key, s] : out.explained.direct)
    calls.push_back({key.first, key.second, explain::Verdict::direct, "", s.count, s.pid, s.comm, 1, s.order});
  std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  found.insert(found.begin(), calls.begin(), calls.end());
  if (out.have_wait_status && WIFSIGNALED(out.wait_status) && WTERMSIG(out.wait_status) == SIGSYS)
    found.insert(found.begin(), explain::seccomp_kill(policy::to_string(pol.seccomp),
                                                      seccomp::killing_calls(pol.seccomp)));
  for (const auto& f : found) emit("explain", explain::finding_fields(f));
  const uint64_t dropped = out.explained.dropped + net_dropped;
  std::cerr << explain::render_text(found, dropped) << std::flush;
  facts_.explained = std::move(found);
  facts_.explain_dropped = dropped;
}

Status Session::learn_run(const Plan& plan, const RunOutcome& out) {
  if (!learning_) return Ok{};
  explain::Accesses all = out.explained.seen;
  learn::Observed o;
  {
    std::lock_guard<std::mutex> lock(net_mu_);
    all.insert(net_refused_.begin(), net_refused_.end());
    o.net_used = net_used_;
    o.dropped = net_dropped_;
  }
  const auto& user = learning_->user;
  const HostAnswers host;
  o.findings = explain::classify(
      learn::with_root(learning_->baseline), all, [&](const std::string& p) { return host.kind(p); },
      [&](const std::string& p) { return host.canonical(p); }, user.home);
  // The seccomp profile is the same while learning and after: its refusals and a kill are named in
  // the profile's header, not granted.
  for (const auto& [name, r] : out.explained.refused)
    o.findings.push_back({explain::Op::syscall, name,
                          r.killed ? explain::Verdict::killed : explain::Verdict::refused, r.remedy, r.seen.count,
                          r.seen.pid, r.seen.comm, 1, r.seen.order});
  if (out.have_wait_status && WIFSIGNALED(out.wait_status) && WTERMSIG(out.wait_status) == SIGSYS)
    o.findings.push_back(explain::seccomp_kill(policy::to_string(user.seccomp), seccomp::killing_calls(user.seccomp)));
  o.argv = plan.argv;
  o.date = learn::utc_now();
  o.home = user.home;
  o.cwd = user.cwd;
  o.dropped += out.explained.dropped;
  o.exit_status = out.exit_status;
  o.writable = {user.cwd};
  for (const auto& g : user.rw) o.writable.push_back(g.path), o.user_rw.push_back(g.path);
  for (const auto& g : user.ro) o.user_ro.push_back(g.path);
  o.env_pass = user.env.pass;
  o.offline = user.net.empty() && !user.share_net;
  if (out.cgroup.memory_peak >= 0) {
    o.memory_peak = out.cgroup.memory_peak, o.memory_source = "the run's cgroup at its peak, all its processes";
  } else if (facts_.maxrss_bytes >= 0) {
    o.memory_peak = facts_.maxrss_bytes;
    o.memory_source = "the largest single process (ru_maxrss; no cgroup measured the sum)";
  }
  if (out.cgroup.pids_peak >= 0) {
    o.tasks_peak = out.cgroup.pids_peak, o.tasks_source = "processes and threads at once (the cgroup's pids.peak)";
  } else if (!out.explained.tasks.empty()) {
    o.tasks_peak = static_cast<int64_t>(out.explained.tasks.size());
    o.tasks_source = "processes and threads seen making file calls over the run (not at once; no cgroup counted)";
  }
  facts_.learned = RunFacts::Learned{learning_->target.path, false};
  if (auto s = learn::write_profile(learning_->target, learn::render_profile(o), user.learn_origin); !s)
    return s;
  facts_.learned->written = true;
  if (!opts_.quiet)
    std::cerr << "cage: learn: wrote " << printable(learning_->target.path)
              << (out.exit_status ? " (the command failed: the profile may be incomplete)" : "") << "\n";
  return Ok{};
}

RunClass Session::record_exit(const RunOutcome& out) {
  facts_.outcome = out;
  if (out.aborted)
    facts_.error = unavailable("--audit " + opts_.audit, "the audit log failed during the run: " + log_->failure() +
                                                             "; the sandbox was killed (--audit-required)",
                               "fix the destination, or drop --audit-required");
  RunClass cls = classify(facts_);
  if (cls == RunClass::oom_killed) emit("killed", toml::table{{"reason", "oom"}, {"signal", "SIGKILL"}});
  // The kernel tells only the dying process (si_syscall) and its own audit log which call it was.
  if (cls == RunClass::seccomp_killed)
    emit("killed", toml::table{{"reason", "seccomp"}, {"signal", "SIGSYS"}, {"syscall", "unknown"}});
  if (!out.offline_lookups.empty()) {
    toml::array names;
    for (const auto& n : out.offline_lookups) names.push_back(n);
    emit("offline_lookups", toml::table{{"names", std::move(names)}});
  }
  toml::table ex{{"class", std::string(to_string(cls))}, {"exit_code", out.exit_status}, {"wall_ms", facts_.wall_ms}};
  if (int sig = signal_of(facts_)) ex.insert("signal", signal_name(sig));
  emit("exit", std::move(ex));
  return cls;
}

void Session::tell_outcome(RunClass cls, const policy::Policy& pol, const RunOutcome& out) {
  if (std::string note = death_note(cls, pol, seccomp::killing_calls(pol.seccomp), &facts_);
      !note.empty() && !opts_.quiet)
    std::cerr << note << std::endl;
  // Said also into a script's or an agent's stderr: a run that failed offline is told why (issue 19).
  if (!out.offline_lookups.empty() && !opts_.quiet)
    std::cerr << printable(offline_hint(out.offline_lookups)) << std::endl;
  if (facts_.error) std::cerr << render_error_text(*facts_.error) << std::endl;
}

int Session::run(const Plan& plan, const policy::Policy& pol, bool json_errors) {
  if (auto s = refuse_writable_records(pol); !s) return fail(s.error(), json_errors);
  announce_plan(plan);
  if (auto s = record_spawn(plan, pol); !s) return fail(s.error(), json_errors);
  explain_ = plan.explain;
  auto out = execute_timed(plan, make_hooks());
  // The proxy has stopped: every count held back is written now, ahead of the run's last events.
  if (log_) log_->flush_repeats();
  proxy::print_denials_held();
  if (!out) return fail(out.error(), json_errors);
  explain_run(plan, pol, *out);
  auto learned = learn_run(plan, *out);
  if (!learned && !facts_.error) facts_.error = learned.error();
  RunClass cls = record_exit(*out);
  tell_outcome(cls, pol, *out);
  finish(json_errors);
  if (opts_.audit_required && !facts_.audit_ok) return exit_status::kCageError;
  if (!learned) return exit_status::kCageError;
  exit_status::set_died_of(out->died_of);
  return out->exit_status;
}

void Session::finish(bool json_errors) {
  if (finished_) return;
  finished_ = true;
  (void)json_errors;
  if (log_) {
    if (!log_->close(2000)) (void)log_.release();
    if (log_ && log_->failed()) {
      facts_.audit_ok = false;
      facts_.audit_error = log_->failure();
    } else if (!log_) {
      facts_.audit_ok = false;
      facts_.audit_error = "the destination did not take the last events in time";
    }
    if (!facts_.audit_ok) std::cerr << "cage: warning: audit log incomplete: " << printable(facts_.audit_error) << "\n";
    if (!facts_.audit_ok && opts_.audit_required && !facts_.error)
      facts_.error = unavailable("--audit " + opts_.audit, "the audit log failed: " + facts_.audit_error,
                                 "fix the destination, or drop --audit-required");
  }
  if (result_fd_.valid()) {
    if (int e = audit::write_all(result_fd_.get(), audit::to_json_line(result_table(facts_)) + "\n"))
      std::cerr << "cage: warning: cannot write the result (--result " << printable(opts_.result) << "): " << std::strerror(e)
                << "\n";
  }
}

}  // namespace cage::lx::report
