// --learn FILE, the host side (supervisor, before and after the run): which secret locations exist
// (the learning view hides them), and the profile's file: refused when it exists, its directory
// opened before the workload starts, and the text written under a temporary name and linked into
// place, which never replaces a name (a file or link the workload planted there fails the write).
// Proved by tests/integration/learn_*.sh.
#pragma once
#include <string>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"

namespace cage::lx::learn {

// home + each of secret_locations() that exists (not followed: a link is hidden as a link).
std::vector<std::string> present_secrets(const std::string& home);

struct Target {
  UniqueFd dir;      // the directory the profile goes in, opened before the run
  std::string name;  // its last component
  std::string path;  // as the user named it, for messages
};

// invalid_policy naming origin when path exists or its directory cannot be opened.
Result<Target> open_target(const std::string& path, const std::string& origin);

// Writes text as target (mode 0644), fsynced; fails (never replaces) when the name appeared meanwhile.
Status write_profile(const Target& target, const std::string& text, const std::string& origin);

// Now, as 2026-11-27T07:40:00Z.
std::string utc_now();

}  // namespace cage::lx::learn
