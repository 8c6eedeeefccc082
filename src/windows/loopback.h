// `cage --install-windows-network` / `--uninstall-windows-network`, the decisions (pure, portable;
// tests/unit/windows_loopback_test.cc): how the machine's loopback-exemption list changes so that the
// slot AppContainers cage.net.0 .. (net_slots.h) may reach cage's proxy on 127.0.0.1, keeping every
// other entry as it was. The Win32 calls: network_setup.cc. Design: docs/windows.md.
#pragma once
#include <string>
#include <vector>

#include "common/error.h"

namespace cage::win {

inline constexpr const char* kInstallNetworkFlag = "--install-windows-network";
inline constexpr const char* kUninstallNetworkFlag = "--uninstall-windows-network";

// The list NetworkIsolationSetAppContainerConfig is to be given, as positions in the list
// NetworkIsolationGetAppContainerConfig returned (each kept entry is passed back as it came, SID and
// attributes), with added(j) for the j-th SID of `add`. Microsoft's page on the Set call: "it is the
// calling program's responsibility to first call NetworkIsolationGetAppContainerConfig ... to retrieve
// and preserve the app container SIDs already configured" -- the call replaces the whole list.
struct LoopbackEdit {
  static constexpr int added(size_t j) { return -1 - static_cast<int>(j); }
  std::vector<int> entries;
  bool changed = false;  // false: the list is already as wanted; no Set call is made (idempotent)
  size_t appended = 0;   // SIDs of `add` that were not listed
  size_t removed = 0;    // entries dropped (every entry naming a SID of `remove`)
  size_t others = 0;     // entries naming any other SID (all kept, in their order)
};

// `current`: the listed SIDs as text ("" for one that could not be converted: never ours, so kept).
// Each SID of `add` is appended when absent; every entry naming a SID of `remove` is dropped (a list
// edited by hand may hold one twice); nothing else changes.
LoopbackEdit edit_loopback_list(const std::vector<std::string>& current, const std::vector<std::string>& add,
                                const std::vector<std::string>& remove);
// cage's own edit: install adds the slot containers (cage.net.0 ..) and drops the old shared cage.net;
// uninstall drops both.
LoopbackEdit network_list_edit(const std::vector<std::string>& current, bool install);
bool loopback_listed(const std::vector<std::string>& current, const std::string& sid);
// What the command says about the list when it is done.
std::string describe_loopback_edit(const LoopbackEdit& edit, bool install);
// The refusal when the caller is not elevated: the list is machine-wide firewall configuration.
Error network_setup_needs_elevation(bool install);
// The refusal of a --net run whose slot container is not exempt (container.cc's last check).
Error net_needs_exemption(const std::string& container, const std::string& sid);

}  // namespace cage::win
