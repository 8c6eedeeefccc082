// The canonical form of a Policy: one toml::table (keys sorted) that the audit log records in full and
// whose compact JSON the policy hash is taken over. Values given with --setenv are redacted (their
// names stay): the log must not become a place secrets leak to.
#pragma once
#include <string>

#include "common/toml.h"
#include "policy/policy.h"

namespace cage::policy {

toml::table canonical_table(const Policy& p);
std::string policy_hash(const Policy& p);  // "sha256:<64 hex>" of audit::to_json_line(canonical_table(p))

}  // namespace cage::policy
