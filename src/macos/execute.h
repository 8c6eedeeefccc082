// macos::execute: carries out a macOS run (the only code that acts on the Mac). See execute.cc.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "policy/policy.h"

namespace cage::macos {

inline constexpr const char* kSandboxExec = "/usr/bin/sandbox-exec";

// Runs the policy's command under sandbox-exec and returns its exit status (128+N for signal N, 124
// on --timeout), or an Error if the sandbox could not be set up. `sandbox_exec` is replaced only by
// tests: on Linux a stand-in that runs the command unconfined checks everything but the sandbox
// (tests/unit/macos_execute_test.cc).
Result<int> execute(const policy::Policy& policy, const std::vector<std::pair<std::string, std::string>>& caller_env,
                    const std::string& sandbox_exec = kSandboxExec);

}  // namespace cage::macos
