// The curated /etc of the default view: which host entries are copied into cage's tmpfs, recreated as
// links, or bound read-only, a pure function of what HostView says. (Walking it on a second thread
// while cage parses its command line was tried and measured slower: the thread's own heap and stack
// cost ~180 page faults, more than the walk it overlapped; bench/README.)
// Pinned by tests/integration/etc_view.sh (the view inside against the host) and the compile goldens.
#pragma once
#include <vector>

#include "linux/host_view.h"
#include "linux/plan.h"

namespace cage::lx {

// The steps below /etc (not /etc's own tmpfs, not the generated passwd and group), in order.
std::vector<MountStep> curated_etc(const HostView& host);

}  // namespace cage::lx
