// A file cage writes into the view itself (the transparent resolver's resolv.conf and hosts): where
// it can go without writing into anything the user granted. Pure (cage_core); decided in compile,
// carried out by mount.cc. Proven by tests/unit/linux_transparent_test.cc and
// tests/integration/net_etc_grant.sh.
#pragma once
#include <string>

#include "linux/host_view.h"
#include "linux/plan.h"

namespace cage::lx {

// Puts `content` at `target` inside the view, read-only: in place of the /etc snapshot's copy, as a
// new file in a tmpfs of cage's (the curated /etc, /run, the bare root of --no-system), or, beneath
// a --ro/--rw grant, as a file mounted over the host's one (MountKind::over_file: the host's file is
// neither written nor visible, and stays as it was). A link there (resolv.conf -> /run/...) is
// followed once, into cage's own tmpfs or onto a host file. Returns "" when placed, else why not
// (for --dry-run and the start-up notice). Call after the mounts are merged and sorted.
std::string place_generated_file(Plan& plan, const HostView& host, const std::string& target,
                                 const std::string& content, const std::string& why);

}  // namespace cage::lx
