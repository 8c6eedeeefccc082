// Transparent egress on Linux, decided (pure, cage_core): which local routes, listeners and DNS
// address the namespace gets, which exact names own which synthetic address, the TCP ports Landlock
// lets the workload connect to, and the generated /etc/resolv.conf and /etc/hosts. Proven by
// tests/unit/linux_transparent_test.cc; carried out by netns.cc in cage's init.
#pragma once
#include <string>

#include "common/error.h"
#include "common/toml.h"
#include "linux/plan.h"

namespace cage::lx {

inline constexpr uint32_t kResolverAddress = 0x7F000035;  // 127.0.0.53
inline constexpr size_t kMaxTransparentPorts = 256;        // one listener (fd) each

// Fills plan.net.transparent when the policy's --net-mode includes transparent; plan.net.mode,
// shim_port and allow must already be set. Adds the listener ports to plan.landlock.connect_tcp.
Status compile_transparent(const policy::Policy& p, Plan& plan);

// --dry-run: the network section's transparent lines, the Landlock note, and the JSON table.
std::string render_transparent(const NetPlan& net);
toml::table transparent_table(const NetPlan& net);

}  // namespace cage::lx
