// The backend of a build for an OS cage has no sandbox for (FreeBSD, OpenBSD, illumos, ...): the
// portable front still parses, validates and plans (`--dry-run --target linux|macos|windows`), and
// every run, --check and --self-test is refused as spawn_sandbox_unavailable (exit 125), never an
// unconfined run. The design asks for a refusal at run time, not a failed build (spawn-sandbox ADR).
// CMakeLists.txt links it for any CMAKE_SYSTEM_NAME without a backend, with posix.cc and no_report.cc;
// tests build it on Linux as cage_unsupported (tests/integration/unsupported_os.sh).
#include <cerrno>
#include <random>

#include "backend/backend.h"
#include "selftest/checks.h"

#ifndef CAGE_UNSUPPORTED_OS
#define CAGE_UNSUPPORTED_OS "this OS"
#endif

namespace cage::backend {

const char* host_os() { return CAGE_UNSUPPORTED_OS; }

int internal_entry(int, char**) { return -1; }

namespace {

Error no_sandbox(const std::string& input) {
  return unavailable(input, std::string("cage has no sandbox mechanism for ") + host_os(),
                     "run the command under cage on Linux, macOS or Windows (`--dry-run --target macos` or "
                     "`--target windows` prints those plans here)");
}

}  // namespace

int check(bool json, const Result<policy::Policy>&, const Environ&) { return fail(no_sandbox("--check"), json); }

int self_test(const std::vector<std::string>&, bool json) { return fail(no_sandbox("--self-test"), json); }

int dry_run(const policy::Policy&, const Environ&, bool, bool, bool json_errors) {
  return fail(no_sandbox("--dry-run"), json_errors);
}

int run(const policy::Policy&, const Environ&, bool json_errors) { return fail(no_sandbox("the run"), json_errors); }

// The run id of the refusal's --json-errors line.
std::string new_run_id() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 8; ++i)
    for (unsigned v = rd(), k = 0; k < 4; ++k, v >>= 8) s += {hex[(v >> 4) & 15], hex[v & 15]};
  return s;
}

int scratch_command(const std::string&, const std::string& name, bool, bool json_errors) {
  return fail(no_sandbox(name.empty() ? "--scratch-list" : "--scratch-remove " + name), json_errors);
}

}  // namespace cage::backend

namespace cage::selftest {

// The self-test's confined probe never runs here (there is no sandbox to run it in).
int probe_tcp(const std::string&, uint16_t, const std::string&, const std::string&, std::string&) { return ENOSYS; }

}  // namespace cage::selftest
