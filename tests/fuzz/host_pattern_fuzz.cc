// libFuzzer: --net pattern parser and matcher. Input: "<pattern>\n<host>"; a pattern that parses
// must match the host it names (for exact names and IPs) and never crash on any host.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "policy/host_pattern.h"
#include "proxy/allowlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t nl = in.find('\n');
  std::string_view pat = in.substr(0, nl), host = nl == std::string_view::npos ? pat : in.substr(nl + 1);
  cage::policy::HostPattern p;
  if (!cage::policy::parse_host_pattern(pat, p).empty()) return 0;
  if (p.ports.empty()) __builtin_trap();
  for (auto port : {p.ports[0].lo, p.ports[0].hi}) {
    cage::policy::host_pattern_matches(p, host, port);
    if (p.kind == cage::policy::HostPattern::Kind::exact_name && !cage::policy::host_pattern_matches(p, p.name, port))
      __builtin_trap();
  }
  cage::proxy::is_special_address(p.addr);
  return 0;
}
