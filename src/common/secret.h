// --secret's values, read once when a run starts (policy.h, Secret): from a file, from a descriptor
// the caller opened, or from cage's own environment. The value goes into the workload's environment
// and nowhere else: callers wipe their copies (wipe) once the workload has its own.
#pragma once
#include <string>
#include <vector>

#include "common/error.h"
#include "policy/policy.h"

namespace cage {

// The largest value: the kernel refuses an environment string over 128 KiB (MAX_ARG_STRLEN).
inline constexpr size_t kMaxSecretBytes = 128 * 1024 - 256;

// "NAME=value" for each secret, or an error naming the --secret it came from. One trailing newline
// (as `echo` and editors leave) is dropped; fd:N is read to its end and closed; env:VAR's value is
// wiped from cage's own environment block (/proc/PID/environ) once read.
Result<std::vector<std::string>> read_secrets(const std::vector<policy::Secret>& secrets);

// Overwrites the bytes of each string (explicit_bzero: not optimised away) and empties it.
void wipe(std::vector<std::string>& values);

}  // namespace cage
