// The Linux backend behind src/main.cc: namespaces, Landlock and seccomp (src/linux/), with the report
// session (--result, --audit) around the run.
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>

#include "backend/backend.h"
#include "common/json.h"
#include "linux/compile.h"
#include "linux/execute.h"
#include "linux/host_view.h"
#include "linux/learn.h"
#include "linux/report.h"
#include "linux/scratch.h"

namespace cage::backend {

namespace {
std::unique_ptr<lx::report::Session> g_session;  // open for a run, from before validation to the end
}  // namespace

const char* host_os() { return "linux"; }

int internal_entry(int, char**) { return -1; }  // the --net shim is forked by init, not re-executed

Status open_report(const ReportOptions& opts, bool for_run) {
  if (!for_run) return Ok{};
  // From here to the end of the run a termination signal waits, blocked, for the supervisor: its
  // signalfd (linux/execute.cc) reads one sent during start-up too, forwards it and writes the
  // result. Before, a SIGTERM or Ctrl-C in start-up killed cage by default action between creating
  // the --result file (left empty) and the first moment it handled signals. Every thread cage starts
  // blocks all signals, and its children set their own masks (init, the sentinel).
  sigset_t term;
  sigemptyset(&term);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&term, sig);
  sigprocmask(SIG_BLOCK, &term, nullptr);
  auto s = lx::report::Session::open(opts);
  if (!s) return s.error();
  g_session = std::move(*s);
  return Ok{};
}

void report_policy(const policy::Policy& pol) {
  if (g_session) g_session->set_policy(pol);
}

int fail(const Error& e, bool json) {
  if (auto* session = lx::report::Session::active()) return session->fail(e, json);
  std::cerr << (json ? render_error_json(e) : render_error_text(e)) << std::endl;
  return exit_status_of(e);
}

int check(bool json, const Result<policy::Policy>& intended, const Environ& env) {
  return lx::check_host(json, intended, env);
}

int self_test(const std::vector<std::string>&, bool json) { return posix_self_test(json); }

int dry_run(const policy::Policy& pol, const Environ& env, bool json, bool verbose, bool json_errors) {
  auto host = lx::make_real_host_view();
  // --learn: the plan printed is the learning view's, the one the run is carried out under.
  auto view = pol.learn.empty() ? Result<policy::Policy>(pol)
                                : lx::learn::learning_view(pol, lx::learn::present_secrets(pol.home));
  if (!view) return fail(view.error(), json_errors);
  auto plan = lx::compile(*view, *host, env);
  if (!plan) return fail(plan.error(), json_errors);
  // A run finds a script's missing #! interpreter when its exec fails; the dry run says it now.
  if (auto why = lx::interpreter_problem(*plan, *host)) return fail(*why, json_errors);
  std::cout << (json ? to_json(lx::render_table(*plan)) + "\n" : verbose ? lx::render_text(*plan) : lx::render_summary(*plan));
  return 0;
}

namespace {
// --learn FILE: the profile's file is checked and its directory opened first, the user's own plan
// kept as the baseline the observations are judged against, and the learning view run (learn.h).
int learn(const policy::Policy& pol, const Environ& env, bool json_errors) {
  auto target = lx::learn::open_target(pol.learn, pol.learn_origin);
  if (!target) return fail(target.error(), json_errors);
  auto host = lx::make_real_host_view();
  auto baseline = lx::compile(pol, *host, env);
  if (!baseline) return fail(baseline.error(), json_errors);
  auto view = lx::learn::learning_view(pol, lx::learn::present_secrets(pol.home));
  if (!view) return fail(view.error(), json_errors);
  auto plan = lx::compile(*view, *host, env);
  if (!plan) return fail(plan.error(), json_errors);
  // Landlock alone cannot hide the secret locations beneath a readable host (a rule only adds).
  if (plan->mechanism == lx::Mechanism::landlock_only)
    return fail(unavailable(pol.learn_origin,
                            "learning needs the namespaces mechanism: Landlock alone cannot show the host "
                            "read-only with its credential stores hidden",
                            "learn on a host that allows unprivileged user namespaces"),
                json_errors);
  plan->explain = true;  // observed as --explain observes; the session reports a profile instead
  g_session->set_learning({std::move(*baseline), std::move(*target), pol});
  return g_session->run(*plan, *view, json_errors);
}
}  // namespace

int run(const policy::Policy& pol, const Environ& env, bool json_errors) {
  if (!pol.learn.empty()) return learn(pol, env, json_errors);
  auto host = lx::make_real_host_view();
  auto plan = lx::compile(pol, *host, env);
  if (!plan) return fail(plan.error(), json_errors);
  return g_session->run(*plan, pol, json_errors);
}

std::string new_run_id() { return audit::new_run_id(); }

int scratch_command(const std::string& root, const std::string& name, bool json, bool json_errors) {
  auto out = name.empty() ? lx::scratch_list(root, json) : lx::scratch_remove(root, name);
  if (!out) return fail(out.error(), json_errors);
  std::cout << *out;
  return 0;
}

}  // namespace cage::backend
