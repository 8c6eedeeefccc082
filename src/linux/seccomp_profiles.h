// The seccomp profiles as BPF, generated at build time from seccomp/*.txt by seccomp/gen_profiles.cc
// (the generated seccomp_profiles.cc lives in the build directory). Building the filter costs
// nothing at start-up: see seccomp/README.md for the measurement.
#pragma once
#include <linux/filter.h>

#include <span>
#include <string_view>

#include "policy/policy.h"

namespace cage::lx::seccomp {

// The filter for a profile; empty for SeccompProfile::none.
std::span<const sock_filter> embedded_filter(policy::SeccompProfile p);
// The architecture the filters were generated for ("x86_64", "aarch64").
std::string_view embedded_arch();
// The calls the profile's filter kills (SIGSYS) rather than refuses, comma-separated, from
// seccomp/*.txt ("iopl, ioperm, ..., any 32-bit or x32 entry point"); empty if it kills none.
std::string_view killing_calls(policy::SeccompProfile p);
// The name of a native call number that one of the profiles names ("ptrace"); "" for any other.
std::string_view call_name(int nr);
// The supplement of Mechanism::landlock_only (seccomp/landlock_only.txt) for a run with the host's
// network (--share-net) or not, and with --allow-degraded=metadata or not.
std::span<const sock_filter> embedded_landlock_only(bool share_net, bool allow_metadata);

}  // namespace cage::lx::seccomp
