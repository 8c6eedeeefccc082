// The curated /etc of the default view: which host entries are copied into cage's tmpfs, recreated as
// links, or bound read-only (a pure function of what HostView says), and the same walk started early
// on a second thread, so that reading /etc overlaps cage's parsing of its command line and policy.
// Pinned by tests/integration/etc_view.sh (the view inside against the host) and the compile goldens.
#pragma once
#include <vector>

#include "linux/host_view.h"
#include "linux/plan.h"

namespace cage::lx {

// The steps below /etc (not /etc's own tmpfs, not the generated passwd and group), in order.
std::vector<MountStep> curated_etc(const HostView& host);

// Starts curated_etc on the real host on a thread of its own (all signals blocked), once. Only for a
// run or a dry run: the thread must be joined before cage forks or clones (compile joins it).
void start_etc_prefetch();
// Joins that thread: its steps, or nullptr when none was started. Later calls return the same steps.
const std::vector<MountStep>* join_etc_prefetch();

}  // namespace cage::lx
