// The macOS backend behind src/main.cc: sandbox-exec with the SBPL profile from macos::compile
// (src/macos/execute.cc carries a run out), with the report session (--result, --audit) around it.
#include <stdlib.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "backend/backend.h"
#include "common/exit_status.h"
#include "common/json.h"
#include "macos/compile.h"
#include "macos/execute.h"
#include "macos/session.h"

namespace cage::backend {

namespace {
std::unique_ptr<macos::Session> g_session;  // open for a run, from before validation to the end
}  // namespace

const char* host_os() { return "macos"; }

Status open_report(const ReportOptions& opts, bool for_run) {
  if (!for_run) return Ok{};
  auto s = macos::Session::open(opts);
  if (!s) return s.error();
  g_session = std::move(*s);
  return Ok{};
}

void report_policy(const policy::Policy& pol) {
  if (g_session) g_session->set_policy(pol);
}

int fail(const Error& e, bool json) {
  if (auto* session = macos::Session::active()) return session->fail(e, json);
  std::cerr << (json ? render_error_json(e) : render_error_text(e)) << std::endl;
  return exit_status_of(e);
}

int internal_entry(int, char**) { return -1; }

// --check on macOS: sandbox-exec is run, not only looked for (macos::check_probes): that it starts a
// program, that a deny-default profile denies, and that cage's profile for these flags parses and
// starts one. Whether grants and denials hold as meant is --self-test's question.
int check(bool json, const Result<policy::Policy>& pol, const Environ&) {
  const bool present = ::access(macos::kSandboxExec, X_OK) == 0;
  std::string cage_profile;
  if (pol)
    if (auto sbpl = macos::compile_sbpl(*pol, macos::make_real_mac_facts(true))) cage_profile = *sbpl;
  auto probes = macos::check_probes(cage_profile);
  bool ok = present;
  for (auto& p : probes) {
    if (present) p.status = macos::run_probe(macos::kSandboxExec, p.profile);
    ok = ok && macos::probe_passed(p);
  }
  if (json) {
    toml::table t;
    t.insert("platform", "macos");
    t.insert("sandbox_exec", present);
    t.insert("path", macos::kSandboxExec);
    toml::array results;
    for (const auto& p : probes)
      results.push_back(
          toml::table{{"probe", p.name}, {"status", p.status}, {"passed", macos::probe_passed(p)}});
    t.insert("probes", std::move(results));
    t.insert("ok", ok);
    std::cout << to_json(t) << std::endl;
  } else {
    std::cout << "sandbox-exec: " << (present ? "available" : "missing") << " (" << macos::kSandboxExec
              << ")\n";
    for (const auto& p : probes)
      std::cout << (macos::probe_passed(p) ? "ok:     " : "FAILED: ") << p.name << " (exit "
                << (p.status < 0 ? std::string("-, not started") : std::to_string(p.status)) << ")\n";
    if (cage_profile.empty()) std::cout << "not probed: cage's profile (the flags given do not compile)\n";
    std::cout << "enforcement of grants and denials: run cage --self-test\n";
  }
  return ok ? 0 : exit_status::kCageError;
}

int self_test(const std::vector<std::string>&, bool json) { return posix_self_test(json); }

int dry_run(const policy::Policy& pol, const Environ& env, bool json, bool verbose, bool json_errors) {
  auto text = macos::render_dry_run(pol, env, json, verbose);
  if (!text) return fail(text.error(), json_errors);
  std::cout << *text;
  return 0;
}

int run(const policy::Policy& pol, const Environ& env, bool json_errors) {
  if (g_session) return g_session->run(pol, env, json_errors);
  auto status = macos::execute(pol, env);
  if (!status) return fail(status.error(), json_errors);
  return *status;
}

std::string new_run_id() { return audit::new_run_id(); }

// --scratch is refused by macos::compile too: no scratch directory exists to list or remove.
int scratch_command(const std::string&, const std::string& name, bool, bool json_errors) {
  return fail(unavailable(name.empty() ? "--scratch-list" : "--scratch-remove " + name,
                          "scratch directories are not implemented on macOS yet", "keep state in a --rw directory"),
              json_errors);
}

}  // namespace cage::backend
