// SHA-256 (FIPS 180-4), small and dependency-free: the policy hash in the audit log and the result.
#pragma once
#include <string>
#include <string_view>

namespace cage {

std::string sha256_hex(std::string_view data);  // 64 lowercase hex digits

}  // namespace cage
