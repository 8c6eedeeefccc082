// The seam between the portable front (src/main.cc: parse, profiles, validate, --dry-run --target)
// and the one backend this binary was built with. Exactly one of linux.cc, macos.cc, windows.cc or
// unsupported.cc (any other OS: every run refused) is linked (CMakeLists.txt chooses by
// CMAKE_SYSTEM_NAME); posix.cc supplies the process facts on POSIX hosts. Nothing here decides policy: each backend compiles the Policy and carries it out.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/report_options.h"
#include "policy/policy.h"

namespace cage::backend {

using Environ = std::vector<std::pair<std::string, std::string>>;

// The OS this binary runs on, spelled as --target spells it: "linux", "macos" or "windows".
const char* host_os();

// cage re-executing itself for a helper role (none at present: Linux's --net shim is forked by
// init): its exit status, or -1 when argv is an ordinary command line. Called before any parsing.
int internal_entry(int argc, char** argv);

// Process facts, in UTF-8 (Windows converts from its wide-character originals).
std::vector<std::string> arguments(int argc, char** argv);
Environ environment();
std::string current_dir();  // empty if it cannot be known
// The parsed input and the context in the Policy layer's path form, before validation. Windows:
// "C:\\x" and "c:/x" become "/C:/x", the home is %USERPROFILE%. POSIX hosts: nothing to do.
void adapt_input(policy::PolicyInput& in, policy::Context& ctx);

// --result / --audit: opened before validation (a failing run is still reported). A backend without
// reporting refuses these options rather than drop them silently.
Status open_report(const ReportOptions& opts, bool for_run);
void report_policy(const policy::Policy& pol);
// Renders an error (through the report session if one is open) and returns the exit status.
int fail(const Error& e, bool json);

// --check: the host's probes, and the run the other flags describe (its policy, or why it is invalid).
int check(bool json, const Result<policy::Policy>& intended, const Environ& env);
int self_test(const std::vector<std::string>& args, bool json);     // --self-test
// --install-windows-network (install) / --uninstall-windows-network: Windows builds change the
// machine's loopback-exemption list; every other build refuses with a usage_error (posix.cc).
int windows_network(bool install, bool json_errors);
// This OS's plan: --dry-run without --target (or with --target host_os()).
// The POSIX runner of the self-test (self_test_posix.cc), for the Linux and macOS backends.
int posix_self_test(bool json);
// json: the whole plan as JSON; else verbose: the whole plan as text; else a summary.
int dry_run(const policy::Policy& pol, const Environ& env, bool json, bool verbose, bool json_errors);
int run(const policy::Policy& pol, const Environ& env, bool json_errors);
// A fresh run id: 32 hex digits from the OS's random source.
std::string new_run_id();
// --scratch-list (name empty) or --scratch-remove NAME, over the scratch directories beneath root.
int scratch_command(const std::string& root, const std::string& name, bool json, bool json_errors);

}  // namespace cage::backend
