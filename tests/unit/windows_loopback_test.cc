// `cage --install-windows-network` / `--uninstall-windows-network` as a list edit (loopback.h):
// NetworkIsolationSetAppContainerConfig replaces the whole list, so every other entry must go back
// exactly (order, duplicates, entries whose SID could not even be read), cage's slot containers are
// added once and removed entirely (the old shared cage.net with them), and an edit that changes nothing
// makes no call.
#include <gtest/gtest.h>

#include "windows/compile.h"
#include "windows/loopback.h"
#include "windows/net_slots.h"

namespace cage::testing {
namespace {

using win::LoopbackEdit;

const std::string kOurs = win::net_slot_sid(0);
const std::string kLegacy = win::package_sid_of(win::kLegacyNetContainerName);
const std::string kApp =
    "S-1-15-2-3624051433-2125758914-1423191267-1740899205-1073925389-3782572162-737981194";
const std::string kOther = "S-1-15-2-1-2-3-4-5-6-7";

std::vector<int> appended_all(size_t from) {
  std::vector<int> out;
  for (size_t j = 0; j < static_cast<size_t>(win::kNetSlots); ++j)
    if (j >= from) out.push_back(LoopbackEdit::added(j));
  return out;
}

TEST(WindowsLoopback, InstallAppendsEverySlotAndKeepsEveryOtherEntryInOrder) {
  const std::vector<std::string> now = {kApp, "", kOther, kApp};
  LoopbackEdit e = win::network_list_edit(now, true);
  EXPECT_TRUE(e.changed);
  std::vector<int> want = {0, 1, 2, 3};
  for (int i : appended_all(0)) want.push_back(i);
  EXPECT_EQ(e.entries, want);
  EXPECT_EQ(e.others, 4u);
  EXPECT_EQ(e.appended, static_cast<size_t>(win::kNetSlots));
  EXPECT_NE(win::describe_loopback_edit(e, true).find("16 slot containers added (4 other entries kept)"),
            std::string::npos)
      << win::describe_loopback_edit(e, true);
}

TEST(WindowsLoopback, InstallIsIdempotentAndFillsOnlyWhatIsMissing) {
  std::vector<std::string> all = win::net_slot_sids();
  all.insert(all.begin(), kApp);
  LoopbackEdit e = win::network_list_edit(all, true);
  EXPECT_FALSE(e.changed) << "no Set call when every slot is listed";
  EXPECT_NE(win::describe_loopback_edit(e, true).find("already"), std::string::npos);
  // A half-done install (slot 0 listed): the others are appended, slot 0 stays where it was.
  LoopbackEdit half = win::network_list_edit({kOurs, kApp}, true);
  EXPECT_TRUE(half.changed);
  std::vector<int> want = {0, 1};
  for (int i : appended_all(1)) want.push_back(i);
  EXPECT_EQ(half.entries, want);
}

TEST(WindowsLoopback, InstallDropsTheOldSharedContainer) {
  LoopbackEdit e = win::network_list_edit({kLegacy, kApp}, true);
  EXPECT_EQ(e.removed, 1u);
  EXPECT_EQ(e.entries.front(), 1) << "kApp kept, the old cage.net dropped";
  EXPECT_NE(win::describe_loopback_edit(e, true).find("1 entry of cage's removed"), std::string::npos);
}

TEST(WindowsLoopback, UninstallRemovesOnlyOurs) {
  std::string lower = kOurs;
  lower[0] = 's';  // the same SID, spelled with a lower-case S
  const std::vector<std::string> now = {kOther, kOurs, kApp, lower, "", win::net_slot_sid(15), kLegacy};
  LoopbackEdit e = win::network_list_edit(now, false);
  EXPECT_TRUE(e.changed);
  EXPECT_EQ(e.removed, 4u);
  EXPECT_EQ(e.entries, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(e.others, 3u);
}

TEST(WindowsLoopback, UninstallWithoutOursChangesNothing) {
  LoopbackEdit e = win::network_list_edit({kOther, kApp}, false);
  EXPECT_FALSE(e.changed);
  EXPECT_EQ(e.entries, (std::vector<int>{0, 1}));
  EXPECT_NE(win::describe_loopback_edit(e, false).find("no entry of cage's"), std::string::npos);
  LoopbackEdit last = win::network_list_edit({kOurs}, false);
  EXPECT_TRUE(last.changed);
  EXPECT_TRUE(last.entries.empty()) << "the list may end up empty";
}

TEST(WindowsLoopback, ListedIsWhatCheckAndNetRunsAsk) {
  EXPECT_TRUE(win::loopback_listed({kApp, kOurs}, kOurs));
  EXPECT_FALSE(win::loopback_listed({kApp, ""}, kOurs));
  EXPECT_FALSE(win::loopback_listed({}, kOurs));
}

TEST(WindowsLoopback, RefusalsAreStructured) {
  Error e = win::network_setup_needs_elevation(true);
  EXPECT_EQ(e.cls, ErrorClass::capability_denied);
  EXPECT_EQ(e.input, "--install-windows-network");
  EXPECT_NE(e.reason.find("administrator"), std::string::npos);
  EXPECT_NE(e.remedy.find("elevated prompt"), std::string::npos);
  EXPECT_EQ(exit_status_of(e), 125);
  EXPECT_EQ(win::network_setup_needs_elevation(false).input, "--uninstall-windows-network");
  Error n = win::net_needs_exemption(win::net_slot_name(0), kOurs);
  EXPECT_EQ(n.cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(n.input, "--net");
  EXPECT_NE(n.remedy.find("cage --install-windows-network"), std::string::npos);
  EXPECT_EQ(n.remedy.find("not in"), std::string::npos) << "the command exists now";
  EXPECT_EQ(exit_status_of(n), 125);
}

}  // namespace
}  // namespace cage::testing
