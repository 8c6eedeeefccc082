// cage: parse -> validate -> compile -> dry-run | execute; render the error; choose the exit status.
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/options.h"
#include "cli/profile.h"
#include "common/json.h"
#include "linux/compile.h"
#include "linux/execute.h"
#include "linux/report.h"
#include "macos/compile.h"
#include "windows/compile.h"
#include "shim/shim.h"

extern char** environ;

namespace {

using namespace cage;

std::vector<std::pair<std::string, std::string>> caller_environment() {
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) env.emplace_back(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return env;
}

std::string current_dir() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? std::string(buf) : std::string();
}

int fail(const Error& e, bool json) {
  if (auto* session = lx::report::Session::active()) return session->fail(e, json);  // --audit, --result
  std::cerr << (json ? render_error_json(e) : render_error_text(e)) << std::endl;
  return exit_status_of(e);
}

int run(const std::vector<std::string>& args) {
  const bool json_errors = cli::wants_json_errors(args);
  const std::string cwd = current_dir();
  if (cwd.empty())
    return fail(invalid("cwd", "the current directory is gone", "cd to an existing directory"), json_errors);
  auto inv = cli::parse(args, cwd);
  if (!inv) return fail(inv.error(), json_errors);
  switch (inv->mode) {
    case cli::Mode::help: std::cout << inv->help_text; return 0;
    case cli::Mode::version: std::cout << "cage " CAGE_VERSION "\n"; return 0;
    case cli::Mode::check: return lx::check_host(inv->json);
    case cli::Mode::print_profile:
    case cli::Mode::dry_run:
    case cli::Mode::run: break;
  }
  // Profiles first: their [audit] settles where the report session writes.
  auto env = caller_environment();
  if (auto s = cli::apply_profiles(*inv, cli::make_profile_context(cwd, env)); !s)
    return fail(s.error(), inv->json_errors);
  std::unique_ptr<lx::report::Session> session;
  if (inv->mode == cli::Mode::run) {
    auto s = lx::report::Session::open(inv->report);
    if (!s) return fail(s.error(), inv->json_errors);
    session = std::move(*s);
  }
  policy::Context ctx{cwd, "", env};
  for (const auto& [k, v] : env)
    if (k == "HOME") ctx.home = v;
  if (inv->mode == cli::Mode::print_profile) {  // validated as a run would be, then printed
    auto probe = inv->input;
    if (probe.argv.empty()) probe.argv = {"true"};
    if (auto p = policy::validate(probe, ctx); !p) return fail(p.error(), inv->json_errors);
    std::cout << cli::print_profile(inv->input, ctx.home);
    return 0;
  }
  auto pol = policy::validate(inv->input, ctx);
  if (!pol) return fail(pol.error(), inv->json_errors);
  if (session) session->set_policy(*pol);
  if (inv->target == "macos" || inv->target == "windows") {  // another OS's plan, printed only
    auto text = inv->target == "macos" ? macos::render_dry_run(*pol, env, inv->json)
                                       : win::render_dry_run(*pol, env, inv->json);
    if (!text) return fail(text.error(), inv->json_errors);
    std::cout << *text;
    return 0;
  }
  if (!inv->target.empty() && inv->target != "linux")
    return fail(unavailable("--target " + inv->target, "this build has no " + inv->target + " backend yet",
                            "use --target linux"),
                inv->json_errors);
  auto host = lx::make_real_host_view();
  auto plan = lx::compile(*pol, *host, env);
  if (!plan) return fail(plan.error(), inv->json_errors);
  if (inv->mode == cli::Mode::dry_run) {
    std::cout << (inv->json ? to_json(lx::render_table(*plan)) + "\n" : lx::render_text(*plan));
    return 0;
  }
  return session->run(*plan, *pol, inv->json_errors);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--spawn-shim") == 0) return cage::shim::main(argc, argv);
  std::vector<std::string> args(argv, argv + argc);
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::cerr << "cage: internal_error: " << e.what() << std::endl;
    return 125;
  }
}
