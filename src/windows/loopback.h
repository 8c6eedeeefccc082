// `cage --install-windows-network` / `--uninstall-windows-network`, the decisions (pure, portable;
// tests/unit/windows_loopback_test.cc): how the machine's loopback-exemption list changes so that the
// cage.net AppContainer (the one every --net run uses) may reach cage's proxy on 127.0.0.1, keeping
// every other entry as it was. The Win32 calls: network_setup.cc. Design: docs/windows.md.
#pragma once
#include <string>
#include <vector>

#include "common/error.h"

namespace cage::win {

inline constexpr const char* kInstallNetworkFlag = "--install-windows-network";
inline constexpr const char* kUninstallNetworkFlag = "--uninstall-windows-network";

// The list NetworkIsolationSetAppContainerConfig is to be given, as positions in the list
// NetworkIsolationGetAppContainerConfig returned (each kept entry is passed back as it came, SID and
// attributes), with kOurs for the cage.net SID. Microsoft's page on the Set call: "it is the calling
// program's responsibility to first call NetworkIsolationGetAppContainerConfig ... to retrieve and
// preserve the app container SIDs already configured" -- the call replaces the whole list.
struct LoopbackEdit {
  static constexpr int kOurs = -1;
  std::vector<int> entries;
  bool changed = false;    // false: the list is already as wanted; no Set call is made (idempotent)
  size_t ours_before = 0;  // entries naming the cage.net SID before the edit
  size_t others = 0;       // entries naming any other SID (all kept, in their order)
};

// `current`: the listed SIDs as text ("" for one that could not be converted: never ours, so kept).
// install: ours is appended when absent; uninstall: every entry naming ours is removed, nothing else.
LoopbackEdit edit_loopback_list(const std::vector<std::string>& current, const std::string& ours,
                                bool install);
bool loopback_listed(const std::vector<std::string>& current, const std::string& ours);
// What the command says when it is done.
std::string describe_loopback_edit(const LoopbackEdit& edit, const std::string& ours, bool install);
// The refusal when the caller is not elevated: the list is machine-wide firewall configuration.
Error network_setup_needs_elevation(bool install);
// The refusal of a --net run while cage.net is not exempt (container.cc, and --check's detail).
Error net_needs_exemption(const std::string& container, const std::string& sid);

}  // namespace cage::win
