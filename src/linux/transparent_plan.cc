// compile_transparent: --net rules -> TransparentPlan. The namespace confines the addresses: it
// holds nothing except `lo`, where every routed address lands on one of cage's listeners (or on a
// server of the workload's own) and the supervisor checks the original destination against the
// allowlist. Landlock's TCP rules are not used: they name ports only and add nothing here.
#include "linux/transparent_plan.h"

#include "linux/generated_file.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "proxy/synthetic.h"

namespace cage::lx {

namespace {

using Kind = policy::HostPattern::Kind;

uint32_t v4_of(const std::array<uint8_t, 16>& a) {
  return static_cast<uint32_t>(a[12]) << 24 | static_cast<uint32_t>(a[13]) << 16 | static_cast<uint32_t>(a[14]) << 8 |
         a[15];
}
uint32_t mask_of(int prefix) { return prefix == 0 ? 0 : ~0u << (32 - prefix); }

bool overlaps(uint32_t a, int pa, uint32_t b, int pb) {
  int p = std::min(pa, pb);
  return (a & mask_of(p)) == (b & mask_of(p));
}

// The generated files: names resolve through cage's resolver only (a host /etc/hosts entry for an
// allowed name would hand out a real address the namespace cannot reach).
std::string resolv_conf() {
  return "# cage: transparent --net; allowed names resolve to synthetic addresses (see cage(1))\n"
         "nameserver " + proxy::ipv4_text(kResolverAddress) + "\noptions timeout:2 attempts:2\n";
}
std::string hosts_file(const std::string& hostname) {
  return "127.0.0.1\tlocalhost\n::1\tip6-localhost ip6-loopback\n127.0.1.1\t" + hostname + "\n";
}

}  // namespace

Status compile_transparent(const policy::Policy& p, const HostView& host, Plan& plan) {
  if (p.net_mode == policy::Policy::NetMode::proxy || plan.net.mode != NetPlan::Mode::proxy) return Ok{};
  auto& t = plan.net.transparent;
  t.enabled = true;
  t.resolver = kResolverAddress;
  t.synthetic_base = proxy::kSyntheticBase;
  t.synthetic_prefix = proxy::kSyntheticPrefix;
  t.routes.push_back({t.synthetic_base, t.synthetic_prefix, "synthetic addresses of allowed names"});
  std::set<uint16_t> ports;
  proxy::SyntheticMap names(t.synthetic_base, t.synthetic_prefix);
  for (const auto& r : p.net) {
    const auto& pat = r.pattern;
    bool ipv4 = (pat.kind == Kind::ip || pat.kind == Kind::cidr) && pat.v4;
    if ((pat.kind == Kind::ip || pat.kind == Kind::cidr) && !pat.v4) {
      t.notes.push_back(r.origin + ": IPv6, reached through the proxy only");
      continue;
    }
    if (ipv4) {
      uint32_t addr = v4_of(pat.addr);
      int prefix = pat.kind == Kind::cidr ? pat.prefix - 96 : 32;
      if (overlaps(addr, prefix, t.synthetic_base, t.synthetic_prefix))
        return invalid(r.origin, "overlaps cage's synthetic range " + proxy::ipv4_text(t.synthetic_base) + "/" +
                                     std::to_string(t.synthetic_prefix),
                       "use --net-mode proxy for this rule's addresses");
      // 127.0.0.0/8 is local in every namespace already: connects there reach the listeners as is.
      if (!overlaps(addr, prefix, 0x7F000000, 8) || prefix < 8)
        t.routes.push_back({addr & mask_of(prefix), prefix, r.origin});
    } else if (pat.kind == Kind::exact_name) {
      if (auto a = names.assign(pat.name); a && names.size() > t.names.size()) t.names.emplace_back(pat.name, *a);
    }
    for (const auto& range : pat.ports)
      for (uint32_t port = range.lo; port <= range.hi && ports.size() <= kMaxTransparentPorts; ++port)
        ports.insert(static_cast<uint16_t>(port));
  }
  if (ports.size() > kMaxTransparentPorts)
    return invalid("--net", "transparent egress listens on each allowed port, and the rules name more than " +
                                std::to_string(kMaxTransparentPorts),
                   "narrow the port ranges, or use --net-mode proxy");
  if (plan.net.shim_port != 0 && ports.count(plan.net.shim_port))
    return invalid("--net", "port " + std::to_string(plan.net.shim_port) +
                                " is the proxy's own port inside the sandbox and cannot also be carried transparently",
                   "use --net-mode proxy or --net-mode transparent");
  t.ports.assign(ports.begin(), ports.end());
  // The workload's IPv4 TCP connects get a socket of the host connected by the supervisor (cage
  // moves no bytes) where the kernel lets the supervisor tell the sandbox's sockets from the host's,
  // and only under the profile that kills the 32-bit and x32 entry points (the default): under relaxed
  // and none a 32-bit connect(), bind() or listen() is not a notification and would re-aim a handed-off
  // host socket (an attack review of issue 25 did it with int 0x80); those runs keep the relay.
  t.handoff = host.socket_netns_cookie() && p.seccomp == policy::SeccompProfile::default_profile;
  // Never written into a granted /etc: mounted over the host's file there (generated_file.h).
  for (const auto& [file, content, why] :
       {std::tuple<const char*, std::string, const char*>{"/etc/resolv.conf", resolv_conf(), "--net (transparent): cage's resolver"},
        {"/etc/hosts", hosts_file(plan.hostname), "--net (transparent): loopback names only"}})
    if (auto not_placed = place_generated_file(plan, host, file, content, why); !not_placed.empty())
      t.notes.push_back(not_placed + ": names may not resolve");
  return Ok{};
}

bool carries_every_rule(const NetPlan& net) {
  return net.transparent.enabled && std::none_of(net.allow.begin(), net.allow.end(), [](const policy::NetRule& r) {
           return (r.pattern.kind == Kind::ip || r.pattern.kind == Kind::cidr) && !r.pattern.v4;
         });
}

namespace {
std::string ports_text(const std::vector<uint16_t>& ports) {
  std::string s;
  for (size_t i = 0; i < ports.size(); ++i) {
    size_t j = i;
    while (j + 1 < ports.size() && ports[j + 1] == ports[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(ports[i]);
    if (j > i) s += "-" + std::to_string(ports[j]);
    i = j;
  }
  return s;
}
std::string cidr_text(uint32_t a, int prefix) { return proxy::ipv4_text(a) + "/" + std::to_string(prefix); }
}  // namespace

std::string render_transparent(const NetPlan& net) {
  const auto& t = net.transparent;
  std::string o = "  transparent: cage's DNS at " + proxy::ipv4_text(t.resolver) +
                  ":53 answers allowed names from " + cidr_text(t.synthetic_base, t.synthetic_prefix) +
                  " (AAAA: no records; PTR: a synthetic address's name; other names: NXDOMAIN)\n";
  for (const auto& [name, addr] : t.names) o += "    " + name + " -> " + proxy::ipv4_text(addr) + "\n";
  o += "    wildcard names: an address from the range on first query\n";
  for (const auto& r : t.routes) o += "    local route " + cidr_text(r.addr, r.prefix) + " dev lo    # " + r.why + "\n";
  o += "    listeners: 0.0.0.0:" + ports_text(t.ports) + " -> the supervisor (original destination by getsockname)\n";
  if (t.handoff)
    o += "    hand-off: IPv4 TCP connects there get a socket the supervisor connected to the checked destination\n";
  for (const auto& n : t.notes) o += "    note: " + n + "\n";
  return o;
}

toml::table transparent_table(const NetPlan& net) {
  const auto& t = net.transparent;
  if (!t.enabled) return toml::table{{"enabled", false}};
  toml::array names, routes, ports, notes;
  for (const auto& [name, addr] : t.names) names.push_back(toml::table{{"name", name}, {"address", proxy::ipv4_text(addr)}});
  for (const auto& r : t.routes) routes.push_back(cidr_text(r.addr, r.prefix));
  for (uint16_t p : t.ports) ports.push_back(static_cast<int64_t>(p));
  for (const auto& n : t.notes) notes.push_back(n);
  toml::table out{{"enabled", true},
                  {"resolver", proxy::ipv4_text(t.resolver) + ":53"},
                  {"synthetic_range", cidr_text(t.synthetic_base, t.synthetic_prefix)},
                  {"names", std::move(names)},
                  {"local_routes", std::move(routes)},
                  {"ports", std::move(ports)},
                  {"notes", std::move(notes)}};
  if (t.handoff) out.insert("handoff", true);
  return out;
}

}  // namespace cage::lx
