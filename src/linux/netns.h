// Transparent egress, child side (cage's init, inside the sandbox's new network namespace, with the
// capabilities its user namespace gives it over that namespace only): see netns.cc.
#pragma once
#include "linux/plan.h"

namespace cage::lx::net {

// Puts plan.lo_address on lo; adds plan.transparent's `local` routes on lo (netlink), binds a TCP listener on 0.0.0.0:PORT for
// each of its ports and the UDP DNS socket, and passes each to the supervisor over `channel`. Runs
// after `lo` is up and before the workload exists, so no connect can race it. Returns 0 or an
// errno. Does not allocate.
int setup_transparent(const NetPlan& plan, int channel);

// Without --net: binds UDP plan.offline_resolver:53 and passes it over `channel` to the supervisor's
// OfflineResolver (offline_resolver.h). Returns 0 or an errno. Does not allocate.
int setup_offline_resolver(const NetPlan& plan, int channel);

}  // namespace cage::lx::net
