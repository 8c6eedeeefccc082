// cage: parse -> validate -> compile -> dry-run | execute; render the error; choose the exit status.
// Everything OS-specific sits behind backend/backend.h (one backend linked per platform).
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "cli/options.h"
#include "cli/profile.h"
#include "common/exit_status.h"
#include "selftest/checks.h"
#include "macos/compile.h"
#include "windows/compile.h"

namespace {

using namespace cage;

// --dry-run --target macos|windows: another OS's plan, printed on any host.
int foreign_dry_run(const std::string& target, const policy::Policy& pol, const backend::Environ& env,
                    const cli::Invocation& inv) {
  if (target != "macos" && target != "windows")
    return backend::fail(unavailable("--target " + target,
                                     std::string("a ") + backend::host_os() + " build cannot plan a " + target +
                                         " run",
                                     "run cage --dry-run on " + target + " itself"),
                         inv.json_errors);
  auto text = target == "macos" ? macos::render_dry_run(pol, env, inv.json, inv.verbose)
                                : win::render_dry_run(pol, env, inv.json, inv.verbose);
  if (!text) return backend::fail(text.error(), inv.json_errors);
  std::cout << *text;
  return 0;
}

// --check and --print-profile without a command plan `true`: a pinned command line ([exec] run) is
// then checked on its own, not against that stand-in.
Status drop_pin_for_stand_in(policy::PolicyInput& in) {
  if (in.exec_run.empty()) return Ok{};
  auto pattern = policy::parse_argv_pattern(in.exec_run);
  in.exec_run.clear();
  if (!pattern) return pattern.error();
  return Ok{};
}

// --check with the flags of the run the user means (a command defaults to `true`): that run is
// validated and planned as it would be, so a capability it needs and the host lacks fails the check.
int check(cli::Invocation& inv, const std::string& cwd) {
  auto env = backend::environment();
  policy::Context ctx{cwd, "", env};
  ctx.home = policy::home_of(env);
  const bool stand_in = inv.input.argv.empty();
  if (stand_in) inv.input.argv = {"true"};
  auto applied = cli::apply_profiles(inv, cli::make_profile_context(cwd, env));
  if (applied && stand_in) applied = drop_pin_for_stand_in(inv.input);
  backend::adapt_input(inv.input, ctx);
  Result<policy::Policy> pol = applied ? policy::validate(inv.input, ctx) : Result<policy::Policy>(applied.error());
  return backend::check(inv.json, pol, env);
}

// --scratch-list, --scratch-remove NAME: the caller's scratch directories, where a run would keep them.
int scratch(const cli::Invocation& inv, const std::string& cwd) {
  auto env = backend::environment();
  policy::Context ctx{cwd, "", env};
  ctx.home = policy::home_of(env);
  backend::adapt_input(const_cast<policy::PolicyInput&>(inv.input), ctx);
  if (inv.mode == cli::Mode::scratch_remove && !policy::valid_scratch_name(inv.scratch_name))
    return backend::fail(usage("--scratch-remove " + inv.scratch_name, "not a scratch name",
                               "name one that --scratch-list shows"),
                         inv.json_errors);
  const std::string root = policy::scratch_root(ctx);
  if (root.empty())
    return backend::fail(invalid("--scratch-list", "no directory keeps scratch state ($HOME and $XDG_STATE_HOME are unset)",
                                 "set HOME"),
                         inv.json_errors);
  return backend::scratch_command(root, inv.mode == cli::Mode::scratch_list ? "" : inv.scratch_name, inv.json,
                                  inv.json_errors);
}

int run(const std::vector<std::string>& args) {
  const bool json_errors = cli::wants_json_errors(args);
  // A current directory that is gone (deleted, or unreachable) is needed only to resolve relative
  // paths: a run or --dry-run goes ahead with an empty one, and validate() refuses it unless an
  // absolute --chdir names the start directory (the implicit read-only grant is then of that).
  const std::string cwd = backend::current_dir();
  auto inv = cli::parse(args, cwd);
  if (!inv) return backend::fail(inv.error(), json_errors);
  if (cwd.empty() && inv->mode != cli::Mode::run && inv->mode != cli::Mode::dry_run &&
      inv->mode != cli::Mode::help && inv->mode != cli::Mode::version)
    return backend::fail(invalid("cwd", "the current directory is gone (deleted, or not reachable)",
                                 "cd to an existing directory"),
                         json_errors);
  switch (inv->mode) {
    case cli::Mode::help: std::cout << inv->help_text; return 0;
    case cli::Mode::version: std::cout << "cage " CAGE_VERSION "\n"; return 0;
    case cli::Mode::check: return check(*inv, cwd);
    case cli::Mode::self_test: return backend::self_test(args, inv->json);
    case cli::Mode::install_windows_network: return backend::windows_network(true, inv->json_errors);
    case cli::Mode::uninstall_windows_network: return backend::windows_network(false, inv->json_errors);
    case cli::Mode::scratch_list:
    case cli::Mode::scratch_remove: return scratch(*inv, cwd);
    case cli::Mode::print_profile:
    case cli::Mode::dry_run:
    case cli::Mode::run: break;
  }
  // Profiles first: their [audit] settles where the report session writes.
  auto env = backend::environment();
  auto profile_ctx = cli::make_profile_context(cwd, env);
  profile_ctx.keep_missing_optional = inv->mode == cli::Mode::print_profile;
  if (auto s = cli::apply_profiles(*inv, profile_ctx); !s)
    return backend::fail(s.error(), inv->json_errors);
  // The run id exists before the report session opens: its every event carries it.
  if (inv->mode == cli::Mode::run && !inv->input.run_id)
    inv->input.run_id = policy::Value{backend::new_run_id(), "generated run id", ""};
  if (inv->input.run_id) {
    inv->report.run_id = inv->input.run_id->text;
    set_error_context(inv->report.run_id);
  }
  if (auto s = backend::open_report(inv->report, inv->mode == cli::Mode::run); !s)
    return backend::fail(s.error(), inv->json_errors);
  policy::Context ctx{cwd, "", env};
  ctx.home = policy::home_of(env);
  backend::adapt_input(inv->input, ctx);
  if (inv->mode == cli::Mode::print_profile) {  // validated as a run would be, then printed
    auto probe = inv->input;
    if (probe.argv.empty()) probe.argv = {"true"};
    if (auto st = inv->input.argv.empty() ? drop_pin_for_stand_in(probe) : Status(Ok{}); !st)
      return backend::fail(st.error(), inv->json_errors);
    if (auto p = policy::validate(probe, ctx); !p) return backend::fail(p.error(), inv->json_errors);
    std::cout << cli::print_profile(inv->input, ctx.home, cwd);
    return 0;
  }
  auto pol = policy::validate(inv->input, ctx);
  if (!pol) return backend::fail(pol.error(), inv->json_errors);
  set_error_context(pol->run_id, pol->labels);
  backend::report_policy(*pol);
  if (!inv->target.empty() && inv->target != backend::host_os()) return foreign_dry_run(inv->target, *pol, env, *inv);
  if (inv->mode == cli::Mode::dry_run) return backend::dry_run(*pol, env, inv->json, inv->verbose, inv->json_errors);
  return backend::run(*pol, env, inv->json_errors);
}

}  // namespace

int main(int argc, char** argv) {
  // `--self-test-probe`: the confined side of --self-test, on every platform.
  if (argc > 1 && std::string_view(argv[1]) == cage::selftest::kProbeFlag)
    return cage::selftest::probe_main(cage::backend::arguments(argc, argv));
  if (int status = cage::backend::internal_entry(argc, argv); status >= 0) return status;
  try {
    int status = run(cage::backend::arguments(argc, argv));
#ifndef _WIN32
    std::cout.flush();
    std::cerr.flush();
    status = cage::exit_status::finish(status);
#endif
    return status;
  } catch (const std::exception& e) {
    std::cerr << "cage: internal_error: " << e.what() << std::endl;
    return cage::exit_status::kCageError;
  }
}
