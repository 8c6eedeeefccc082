// Synthetic addresses for transparent egress (issue #9): cage's resolver answers an allowed name
// with an address of a private range (198.18.0.0/15 by default, RFC 2544's benchmarking block,
// which no real service uses), one per name and stable for the run, so that a connection to that
// address can be mapped back to the name it was for. Pure; proven by tests/unit/proxy_dns_test.cc.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "policy/policy.h"

namespace cage::proxy {

inline constexpr uint32_t kSyntheticBase = 0xC6120000;  // 198.18.0.0
inline constexpr int kSyntheticPrefix = 15;

class SyntheticMap {
 public:
  SyntheticMap(uint32_t base = kSyntheticBase, int prefix = kSyntheticPrefix);
  // The name's address (host byte order), assigned on first use; nullopt once the range is full.
  std::optional<uint32_t> assign(std::string_view name);
  // The name an address was assigned to, or nullptr.
  const std::string* name_of(uint32_t addr) const;
  bool contains(uint32_t addr) const { return (addr & mask_) == base_; }
  uint32_t base() const { return base_; }
  int prefix() const { return prefix_; }
  size_t size() const { return names_.size(); }

 private:
  uint32_t base_, mask_;
  int prefix_;
  std::vector<std::string> names_;  // names_[i] has base_ + 1 + i
  std::unordered_map<std::string, uint32_t> by_name_;
};

// Whether some name rule (exact or wildcard, any port) covers `name`: such a name gets a synthetic
// address; every other name gets NXDOMAIN.
bool name_listed(const std::vector<policy::NetRule>& rules, std::string_view name);

std::string ipv4_text(uint32_t addr);  // host byte order

// What a destination a client named as `host` stands for (issue 19 item 4): `host` itself, unless
// it is an address of the map's range (IPv4, or its IPv4-mapped IPv6 form), which stands for the
// name it was handed out for; nullopt for such an address handed out for no name. A client that
// resolves through cage's DNS and then names the address (socks5://, CONNECT 198.18.0.1:443, a
// plain-HTTP URL or a direct connect) thus reaches what it looked up, checked as that name.
std::optional<std::string> unsynthesize(const SyntheticMap& map, std::string_view host);

}  // namespace cage::proxy
