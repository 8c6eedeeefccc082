// The loopback-exemption list edit of `cage --install-windows-network` and its undoing (see
// loopback.h). Only the SIDs of cage's containers are ever added or removed; everything else is passed
// back as it was.
#include "windows/loopback.h"

#include <algorithm>
#include <cctype>

#include "windows/compile.h"
#include "windows/net_slots.h"

namespace cage::win {

namespace {

// SIDs in text are "S-1-..."; Windows writes the S upper-case, but a SID is the same SID either way.
bool same_sid(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

}  // namespace

LoopbackEdit edit_loopback_list(const std::vector<std::string>& current, const std::vector<std::string>& add,
                                const std::vector<std::string>& remove) {
  LoopbackEdit e;
  auto in = [](const std::vector<std::string>& set, const std::string& sid) {
    return !sid.empty() &&
           std::any_of(set.begin(), set.end(), [&](const std::string& s) { return same_sid(s, sid); });
  };
  for (size_t i = 0; i < current.size(); ++i) {
    if (in(remove, current[i])) {
      ++e.removed;
      continue;
    }
    if (!in(add, current[i])) ++e.others;
    e.entries.push_back(static_cast<int>(i));  // duplicates of ours stay as they were
  }
  for (size_t j = 0; j < add.size(); ++j)
    if (!loopback_listed(current, add[j])) {
      e.entries.push_back(LoopbackEdit::added(j));
      ++e.appended;
    }
  e.changed = e.appended > 0 || e.removed > 0;
  return e;
}

LoopbackEdit network_list_edit(const std::vector<std::string>& current, bool install) {
  const std::vector<std::string> slots = net_slot_sids();
  const std::string legacy = package_sid_of(kLegacyNetContainerName);
  if (install) return edit_loopback_list(current, slots, {legacy});
  std::vector<std::string> all = slots;
  all.push_back(legacy);
  return edit_loopback_list(current, {}, all);
}

bool loopback_listed(const std::vector<std::string>& current, const std::string& ours) {
  return std::any_of(current.begin(), current.end(),
                     [&](const std::string& s) { return !s.empty() && same_sid(s, ours); });
}

std::string describe_loopback_edit(const LoopbackEdit& edit, bool install) {
  const std::string kept =
      std::to_string(edit.others) + " other entr" + (edit.others == 1 ? "y" : "ies") + " kept";
  if (!edit.changed)
    return install ? "loopback-exemption list: the " + std::to_string(kNetSlots) +
                         " slot containers were already listed"
                   : "loopback-exemption list: no entry of cage's was listed";
  std::string out = "loopback-exemption list: ";
  if (edit.appended)
    out += std::to_string(edit.appended) + " slot container" + (edit.appended == 1 ? "" : "s") + " added";
  if (edit.removed)
    out += std::string(edit.appended ? ", " : "") + std::to_string(edit.removed) + " entr" +
           (edit.removed == 1 ? "y" : "ies") + " of cage's removed";
  return out + " (" + kept + ")";
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
