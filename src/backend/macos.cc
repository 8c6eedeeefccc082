// The macOS backend behind src/main.cc: sandbox-exec with the SBPL profile from macos::compile
// (src/macos/execute.cc carries a run out).
#include <iostream>

#include "backend/backend.h"
#include "macos/compile.h"
#include "macos/execute.h"

namespace cage::backend {

const char* host_os() { return "macos"; }

int internal_entry(int, char**) { return -1; }

int check(bool) {
  return fail(unavailable("--check", "not implemented on macOS yet", "use --self-test"), false);
}

int self_test(const std::vector<std::string>&, bool json) { return posix_self_test(json); }

int dry_run(const policy::Policy& pol, const Environ& env, bool json, bool json_errors) {
  auto text = macos::render_dry_run(pol, env, json);
  if (!text) return fail(text.error(), json_errors);
  std::cout << *text;
  return 0;
}

int run(const policy::Policy& pol, const Environ& env, bool json_errors) {
  auto status = macos::execute(pol, env);
  if (!status) return fail(status.error(), json_errors);
  return *status;
}

}  // namespace cage::backend
