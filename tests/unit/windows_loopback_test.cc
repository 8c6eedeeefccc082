// `cage --install-windows-network` / `--uninstall-windows-network` as a list edit (loopback.h):
// NetworkIsolationSetAppContainerConfig replaces the whole list, so every other entry must go back
// exactly (order, duplicates, entries whose SID could not even be read), cage.net's is added once
// and removed entirely, and an edit that changes nothing makes no call.
#include <gtest/gtest.h>

#include "windows/compile.h"
#include "windows/loopback.h"

namespace cage::testing {
namespace {

using win::LoopbackEdit;

const std::string kOurs = win::package_sid_of(win::kNetContainerName);
const std::string kApp =
    "S-1-15-2-3624051433-2125758914-1423191267-1740899205-1073925389-3782572162-737981194";
const std::string kOther = "S-1-15-2-1-2-3-4-5-6-7";

TEST(WindowsLoopback, InstallAppendsOursAndKeepsEveryOtherEntryInOrder) {
  const std::vector<std::string> now = {kApp, "", kOther, kApp};
  LoopbackEdit e = win::edit_loopback_list(now, kOurs, true);
  EXPECT_TRUE(e.changed);
  EXPECT_EQ(e.entries, (std::vector<int>{0, 1, 2, 3, LoopbackEdit::kOurs}));
  EXPECT_EQ(e.others, 4u);
  EXPECT_NE(win::describe_loopback_edit(e, kOurs, true).find("4 other entries kept"), std::string::npos);
}

TEST(WindowsLoopback, InstallIsIdempotent) {
  const std::vector<std::string> now = {kApp, kOurs};
  LoopbackEdit e = win::edit_loopback_list(now, kOurs, true);
  EXPECT_FALSE(e.changed) << "no Set call when cage.net is already listed";
  EXPECT_EQ(e.entries, (std::vector<int>{0, 1}));
  EXPECT_NE(win::describe_loopback_edit(e, kOurs, true).find("already"), std::string::npos);
  EXPECT_TRUE(win::edit_loopback_list({}, kOurs, true).changed);
  EXPECT_EQ(win::edit_loopback_list({}, kOurs, true).entries, (std::vector<int>{LoopbackEdit::kOurs}));
}

TEST(WindowsLoopback, UninstallRemovesOnlyOurs) {
  std::string lower = kOurs;
  lower[0] = 's';  // the same SID, spelled with a lower-case S
  const std::vector<std::string> now = {kOther, kOurs, kApp, lower, ""};
  LoopbackEdit e = win::edit_loopback_list(now, kOurs, false);
  EXPECT_TRUE(e.changed);
  EXPECT_EQ(e.ours_before, 2u);
  EXPECT_EQ(e.entries, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(e.others, 3u);
}

TEST(WindowsLoopback, UninstallWithoutOursChangesNothing) {
  LoopbackEdit e = win::edit_loopback_list({kOther, kApp}, kOurs, false);
  EXPECT_FALSE(e.changed);
  EXPECT_EQ(e.entries, (std::vector<int>{0, 1}));
  EXPECT_NE(win::describe_loopback_edit(e, kOurs, false).find("was not on"), std::string::npos);
  LoopbackEdit last = win::edit_loopback_list({kOurs}, kOurs, false);
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
  Error n = win::net_needs_exemption(win::kNetContainerName, kOurs);
  EXPECT_EQ(n.cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(n.input, "--net");
  EXPECT_NE(n.remedy.find("cage --install-windows-network"), std::string::npos);
  EXPECT_EQ(n.remedy.find("not in"), std::string::npos) << "the command exists now";
  EXPECT_EQ(exit_status_of(n), 125);
}

}  // namespace
}  // namespace cage::testing
