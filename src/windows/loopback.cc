// The loopback-exemption list edit of `cage --install-windows-network` and its undoing (see
// loopback.h). Only cage.net's SID is ever added or removed; everything else is passed back as it was.
#include "windows/loopback.h"

#include <algorithm>
#include <cctype>

namespace cage::win {

namespace {

// SIDs in text are "S-1-..."; Windows writes the S upper-case, but a SID is the same SID either way.
bool same_sid(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

}  // namespace

LoopbackEdit edit_loopback_list(const std::vector<std::string>& current, const std::string& ours,
                                bool install) {
  LoopbackEdit e;
  for (size_t i = 0; i < current.size(); ++i) {
    const bool is_ours = !current[i].empty() && same_sid(current[i], ours);
    is_ours ? ++e.ours_before : ++e.others;
    // Uninstall drops every entry naming ours (a list edited by hand may hold it twice); install
    // keeps the list exactly, duplicates included.
    if (!is_ours || install) e.entries.push_back(static_cast<int>(i));
  }
  if (install && e.ours_before == 0) e.entries.push_back(LoopbackEdit::kOurs);
  e.changed = install ? e.ours_before == 0 : e.ours_before > 0;
  return e;
}

bool loopback_listed(const std::vector<std::string>& current, const std::string& ours) {
  return std::any_of(current.begin(), current.end(),
                     [&](const std::string& s) { return !s.empty() && same_sid(s, ours); });
}

std::string describe_loopback_edit(const LoopbackEdit& edit, const std::string& ours, bool install) {
  const std::string who = "the cage.net AppContainer (" + ours + ")";
  const std::string kept = std::to_string(edit.others) + " other entr" + (edit.others == 1 ? "y" : "ies");
  if (install)
    return edit.changed ? who + " is now on this machine's loopback-exemption list (" + kept +
                              " kept); --net runs can reach cage's proxy"
                        : who + " was already on this machine's loopback-exemption list; nothing changed";
  return edit.changed ? who + " is no longer on this machine's loopback-exemption list (" + kept +
                            " kept); --net runs are refused until it is installed again"
                      : who + " was not on this machine's loopback-exemption list; nothing changed";
}

Error network_setup_needs_elevation(bool install) {
  const std::string flag = install ? kInstallNetworkFlag : kUninstallNetworkFlag;
  return Error{ErrorClass::capability_denied,
               "changing the loopback-exemption list needs an administrator: it is firewall configuration "
               "for the whole machine",
               "run `cage " + flag + "` once from an elevated prompt (Run as administrator)", flag, 0};
}

Error net_needs_exemption(const std::string& container, const std::string& sid) {
  return Error{ErrorClass::spawn_sandbox_unavailable,
               "--net needs the AppContainer " + container + " (" + sid +
                   ") on this machine's loopback-exemption list, to reach cage's proxy on 127.0.0.1",
               "run `cage " + std::string(kInstallNetworkFlag) +
                   "` once from an elevated prompt (`cage --check` says whether it is done); or run without "
                   "--net",
               "--net", 0};
}

}  // namespace cage::win
