// SyntheticMap: sequential assignment from the range (the network address and the last one are
// never handed out), a vector for address -> name and a hash map for name -> address.
#include "proxy/synthetic.h"

#include <array>
#include <cstring>

#include "policy/host_pattern.h"

namespace cage::proxy {

SyntheticMap::SyntheticMap(uint32_t base, int prefix)
    : base_(base & (prefix == 0 ? 0 : ~0u << (32 - prefix))),
      mask_(prefix == 0 ? 0 : ~0u << (32 - prefix)),
      prefix_(prefix) {}

std::optional<uint32_t> SyntheticMap::assign(std::string_view name) {
  std::string key(name);
  if (auto it = by_name_.find(key); it != by_name_.end()) return it->second;
  uint64_t capacity = (uint64_t{1} << (32 - prefix_)) - 2;
  if (names_.size() >= capacity) return std::nullopt;
  uint32_t addr = base_ + 1 + static_cast<uint32_t>(names_.size());
  names_.push_back(key);
  by_name_.emplace(std::move(key), addr);
  return addr;
}

const std::string* SyntheticMap::name_of(uint32_t addr) const {
  if (!contains(addr) || addr == base_) return nullptr;
  uint32_t i = addr - base_ - 1;
  return i < names_.size() ? &names_[i] : nullptr;
}

bool name_listed(const std::vector<policy::NetRule>& rules, std::string_view name) {
  for (const auto& r : rules) {
    const auto& p = r.pattern;
    if (p.kind == policy::HostPattern::Kind::ip || p.kind == policy::HostPattern::Kind::cidr || p.ports.empty())
      continue;
    if (policy::host_pattern_matches(p, name, p.ports.front().lo)) return true;
  }
  return false;
}

std::optional<std::string> unsynthesize(const SyntheticMap& map, std::string_view host) {
  std::array<uint8_t, 16> a{};
  bool v4 = false;
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (!policy::parse_ip_literal(host, a, v4) || std::memcmp(a.data(), kMapped, 12) != 0) return std::string(host);
  uint32_t addr = static_cast<uint32_t>(a[12]) << 24 | static_cast<uint32_t>(a[13]) << 16 |
                  static_cast<uint32_t>(a[14]) << 8 | a[15];
  if (!map.contains(addr)) return std::string(host);
  if (const std::string* name = map.name_of(addr)) return *name;
  return std::nullopt;
}

std::string ipv4_text(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." + std::to_string((a >> 8) & 0xff) +
         "." + std::to_string(a & 0xff);
}

}  // namespace cage::proxy
