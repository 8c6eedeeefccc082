// The canonical form of a Policy: one toml::table (keys sorted) that the audit log records in full and
// whose compact JSON the policy hash is taken over. Values given with --setenv are redacted (their
// names stay): the log must not become a place secrets leak to.
#pragma once
#include <string>
#include <vector>

#include "common/toml.h"
#include "policy/policy.h"

namespace cage::policy {

// How the policy was actually enforced, known once the platform compiled it: the mechanism used
// ("namespaces", "landlock") and each loss accepted with --allow-degraded ("pid", "metadata").
// Part of the hash, so a degraded run never shares a full run's hash.
struct Enforcement {
  std::string mechanism;
  std::vector<std::string> degraded;
};

// `used` adds "enforced": {mechanism, degraded}; without it (the policy never compiled) it is absent.
toml::table canonical_table(const Policy& p, const Enforcement* used = nullptr);
// "sha256:<64 hex>" of audit::to_json_line(canonical_table(p, used))
std::string policy_hash(const Policy& p, const Enforcement* used = nullptr);

}  // namespace cage::policy
