// Process facts on POSIX hosts (Linux and macOS): argv is already bytes, environ and getcwd say the rest.
#include <unistd.h>

#include <cstring>

#include "backend/backend.h"

extern char** environ;

namespace cage::backend {

std::vector<std::string> arguments(int argc, char** argv) { return std::vector<std::string>(argv, argv + argc); }

Environ environment() {
  Environ env;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) env.emplace_back(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return env;
}

void adapt_input(policy::PolicyInput&, policy::Context&) {}

std::string current_dir() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? std::string(buf) : std::string();
}

// The loopback-exemption list is Windows' own: nothing here to install. Linux and macOS --net runs
// need no setup step.
int windows_network(bool install, bool json_errors) {
  const std::string flag = install ? "--install-windows-network" : "--uninstall-windows-network";
  return fail(usage(flag,
                    std::string("only the Windows build of cage has this (it changes Windows' "
                                "loopback-exemption list); this is a ") +
                        host_os() + " build",
                    "run it with cage.exe on Windows, from an elevated prompt; --net needs no setup here"),
              json_errors);
}

}  // namespace cage::backend
