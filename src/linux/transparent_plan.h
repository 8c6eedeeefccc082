// Transparent egress on Linux, decided (pure, cage_core): which local routes, listeners and DNS
// address the namespace gets, which exact names own which synthetic address, the TCP ports Landlock
// lets the workload connect to, and the generated /etc/resolv.conf and /etc/hosts. Proven by
// tests/unit/linux_transparent_test.cc; carried out by netns.cc in cage's init.
#pragma once
#include <string>

#include "common/error.h"
#include "common/toml.h"
#include "linux/host_view.h"
#include "linux/plan.h"

namespace cage::lx {

inline constexpr uint32_t kResolverAddress = 0x7F000035;  // 127.0.0.53
// RFC 7600's IPv4 dummy address, for a host with no IPv4 address of its own: put on lo with --net
// (netns.cc says why), it can never name a destination a rule allows.
inline constexpr uint32_t kLoAddress = 0xC0000008;  // 192.0.0.8
inline constexpr size_t kMaxTransparentPorts = 256;        // one listener (fd) each

// Fills plan.net.transparent when the policy's --net-mode includes transparent; plan.net.mode,
// shim_port and allow must already be set. Adds the listener ports to plan.landlock.connect_tcp.
Status compile_transparent(const policy::Policy& p, const HostView& host, Plan& plan);

// Whether transparent egress carries every --net rule (IPv6 literals are reached through the proxy
// only): then a client that ignores the proxy settings still reaches whatever the rules allow.
bool carries_every_rule(const NetPlan& net);

// --dry-run: the network section's transparent lines, the Landlock note, and the JSON table.
std::string render_transparent(const NetPlan& net);
toml::table transparent_table(const NetPlan& net);

}  // namespace cage::lx
