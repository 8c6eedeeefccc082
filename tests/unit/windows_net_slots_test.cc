// --net on Windows (net_slots.h): the WFP filters an install adds, as data (layer, conditions, action,
// weight for every slot); the state of an install (ok, MISSING, partial, legacy) that --check reports
// and every --net run requires; the choice of a slot (busy, crashed, port taken) and its refusal.
// The Win32 side (wfp.cc, net_slot_lock.cc) only carries these out: `cage --self-test` on Windows.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "windows/compile.h"
#include "windows/net_slots.h"

namespace cage::testing {
namespace {

using win::SlotAttempt;
using win::SlotRecord;
using win::SlotVerdict;
using win::WfpAction;
using win::WfpField;
using win::WfpFilter;
using win::WfpLayer;

SlotAttempt attempt(int slot, SlotVerdict v, bool taken = false, std::string error = "",
                    bool claimed = false) {
  SlotAttempt a;
  a.slot = slot;
  a.verdict = v;
  a.port_taken = taken;
  a.port_error = std::move(error);
  a.claimed = claimed;
  return a;
}

std::string value_of(const WfpFilter& f, WfpField field) {
  for (const auto& c : f.conditions)
    if (c.field == field) return c.value;
  return "<none>";
}

TEST(WindowsNetSlots, SlotsAreNamedContainersWithTheirOwnSidAndPort) {
  EXPECT_EQ(win::net_slot_name(0), "cage.net.0");
  EXPECT_EQ(win::net_slot_name(15), "cage.net.15");
  EXPECT_EQ(win::net_slot_port(0), 47300);
  EXPECT_EQ(win::net_slot_port(15), 47315);
  EXPECT_LT(win::net_slot_port(win::kNetSlots - 1), 49152) << "below Windows' dynamic port range";
  std::set<std::string> sids;
  for (const auto& s : win::net_slot_sids()) sids.insert(s);
  EXPECT_EQ(sids.size(), static_cast<size_t>(win::kNetSlots)) << "one package SID per slot";
  EXPECT_EQ(sids.count(win::package_sid_of(win::kLegacyNetContainerName)), 0u);
}

TEST(WindowsNetSlots, EachSlotReachesOnlyItsOwnProxyPort) {
  const auto filters = win::wfp_filters();
  ASSERT_EQ(filters.size(), static_cast<size_t>(7 * win::kNetSlots));
  std::set<std::string> keys;
  std::map<int, int> permits;
  for (const auto& f : filters) {
    EXPECT_TRUE(keys.insert(f.key).second) << "filter keys are unique: " << f.key;
    EXPECT_EQ(f.key.size(), 36u) << f.key;
    // Every filter is scoped to exactly one slot's package SID: no other process is touched.
    EXPECT_EQ(value_of(f, WfpField::package_id), win::net_slot_sid(f.slot)) << f.name;
    if (f.action == WfpAction::permit) {
      ++permits[f.slot];
      EXPECT_EQ(f.layer, WfpLayer::connect_v4);
      EXPECT_EQ(f.weight, 15) << "the permit is tried before the block of the same sublayer";
      EXPECT_EQ(value_of(f, WfpField::remote_address), "127.0.0.1");
      EXPECT_EQ(value_of(f, WfpField::remote_port), std::to_string(win::net_slot_port(f.slot)));
      EXPECT_EQ(value_of(f, WfpField::protocol), "6") << "TCP only";
      EXPECT_EQ(f.conditions.size(), 4u);
    } else {
      EXPECT_EQ(f.weight, 0);
      EXPECT_EQ(f.conditions.size(), 1u) << "a block takes everything of the slot at its layer";
    }
  }
  for (int k = 0; k < win::kNetSlots; ++k) {
    EXPECT_EQ(permits[k], 1) << "slot " << k;
    std::set<WfpLayer> blocked;
    for (const auto& f : filters)
      if (f.slot == k && f.action == WfpAction::block) blocked.insert(f.layer);
    EXPECT_EQ(blocked,
              (std::set<WfpLayer>{WfpLayer::connect_v4, WfpLayer::connect_v6, WfpLayer::recv_accept_v4,
                                  WfpLayer::recv_accept_v6, WfpLayer::listen_v4, WfpLayer::listen_v6}))
        << "slot " << k << ": outbound (v4 and v6), inbound and listen are all closed but the proxy";
  }
}

TEST(WindowsNetSlots, FiltersNameMicrosoftsLayerAndConditionKeys) {
  EXPECT_STREQ(win::layer_guid(WfpLayer::connect_v4), "c38d57d1-05a7-4c33-904f-7fbceee60e82");
  EXPECT_STREQ(win::layer_guid(WfpLayer::listen_v6), "7ac9de24-17dd-4814-b4bd-a9fbc95a321b");
  EXPECT_STREQ(win::field_guid(WfpField::package_id), "71bc78fa-f17c-4997-a602-6abb261f351c");
  EXPECT_STREQ(win::layer_name(WfpLayer::recv_accept_v4), "FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V4");
  EXPECT_STREQ(win::field_name(WfpField::remote_port), "FWPM_CONDITION_IP_REMOTE_PORT");
  EXPECT_EQ(win::wfp_filter_key(3, 1), win::wfp_filters()[3 * 7 + 1].key)
      << "keys are fixed per slot and role";
  EXPECT_NE(win::wfp_filter_key(1, 0), win::wfp_filter_key(0, 1));
}

win::NetInstallFacts complete() {
  win::NetInstallFacts f;
  f.exempt = {"S-1-15-2-1-2-3-4-5-6-7"};
  for (const auto& s : win::net_slot_sids()) f.exempt.push_back(s);
  f.provider = f.sublayer = true;
  for (const auto& w : win::wfp_filters()) f.filters.insert(w.key);
  return f;
}

TEST(WindowsNetSlots, InstallIsOkOnlyWhenEverythingIsThere) {
  auto ok = win::assess_net_install(complete());
  EXPECT_EQ(ok.state, win::NetInstall::ok) << ok.detail;
  EXPECT_NE(ok.detail.find("16/16 slot containers exempt, 112/112 filters"), std::string::npos) << ok.detail;

  auto no_filter = complete();
  no_filter.filters.erase(win::wfp_filter_key(7, 0));
  EXPECT_EQ(win::assess_net_install(no_filter).state, win::NetInstall::partial)
      << "an exempt slot without its filters must not run";
  auto no_entry = complete();
  no_entry.exempt.pop_back();
  EXPECT_EQ(win::assess_net_install(no_entry).state, win::NetInstall::partial);
  auto no_locks = complete();
  no_locks.slots_error = "C:\\ProgramData\\cage\\net-slots\\slot-3.lock is missing";
  EXPECT_EQ(win::assess_net_install(no_locks).state, win::NetInstall::partial);
  auto with_legacy = complete();
  with_legacy.exempt.push_back(win::package_sid_of(win::kLegacyNetContainerName));
  EXPECT_EQ(win::assess_net_install(with_legacy).state, win::NetInstall::partial)
      << "the old shared exemption left in place opens loopback to every cage.net container";

  win::NetInstallFacts none;
  none.exempt = {"S-1-15-2-1-2-3-4-5-6-7"};
  none.slots_error = "missing";
  EXPECT_EQ(win::assess_net_install(none).state, win::NetInstall::missing);
  none.exempt.push_back(win::package_sid_of(win::kLegacyNetContainerName));
  EXPECT_EQ(win::assess_net_install(none).state, win::NetInstall::legacy);
  auto from_store = complete();
  from_store.wfp_note = "read from the engine's persistent store (the engine refused: access denied)";
  auto stored = win::assess_net_install(from_store);
  EXPECT_EQ(stored.state, win::NetInstall::ok);
  EXPECT_NE(stored.detail.find("persistent store"), std::string::npos) << "--check says how it knows";
  win::NetInstallFacts denied = complete();
  denied.wfp_error = "FwpmFilterGetByKey0 failed: 0x5 (Access is denied.)";
  EXPECT_EQ(win::assess_net_install(denied).state, win::NetInstall::unknown) << "cannot verify: not ok";
}

TEST(WindowsNetSlots, AnyIncompleteInstallRefusesNetNamingTheCommand) {
  for (auto state : {win::NetInstall::missing, win::NetInstall::partial, win::NetInstall::legacy,
                     win::NetInstall::unknown}) {
    Error e = win::net_not_installed({state, "detail"});
    EXPECT_EQ(e.cls, ErrorClass::spawn_sandbox_unavailable);
    EXPECT_EQ(e.input, "--net");
    EXPECT_NE(e.remedy.find("cage --install-windows-network"), std::string::npos);
    EXPECT_EQ(exit_status_of(e), 125);
  }
  EXPECT_NE(win::net_not_installed({win::NetInstall::legacy, ""}).reason.find("older --net setup"),
            std::string::npos);
}

TEST(WindowsNetSlots, SlotRecordsRoundTripAndJunkIsNeverUsed) {
  SlotRecord r{"held", "S-1-5-21-1-2-3-1001", "4242-0000000100000002"};
  SlotRecord back = win::parse_slot_record(win::format_slot_record(r));
  EXPECT_EQ(back.state, "held");
  EXPECT_EQ(back.user, r.user);
  EXPECT_EQ(back.run, r.run);
  EXPECT_EQ(win::parse_slot_record("").state, "");
  EXPECT_EQ(win::parse_slot_record("cage-net-slot 2 held a b\n").state, "") << "an unknown version";
  EXPECT_EQ(win::parse_slot_record("cage-net-slot 1 stolen a b\n").state, "");
}

TEST(WindowsNetSlots, ASlotIsFreeOnlyWhenNoRunCanStillHaveGrantsForItsSid) {
  const std::string me = "S-1-5-21-1-2-3-1001", other = "S-1-5-21-1-2-3-1002";
  EXPECT_EQ(win::judge_slot(false, {}, me, false), SlotVerdict::busy) << "a live run holds it open";
  EXPECT_EQ(win::judge_slot(true, {}, me, false), SlotVerdict::free) << "never used";
  EXPECT_EQ(win::judge_slot(true, {"released", other, "1-a"}, me, false), SlotVerdict::free);
  EXPECT_EQ(win::judge_slot(true, {"held", me, "1-a"}, me, false), SlotVerdict::free)
      << "our crashed run, its journal replayed: its ACEs are gone";
  EXPECT_EQ(win::judge_slot(true, {"held", me, "1-a"}, me, true), SlotVerdict::dirty_own);
  EXPECT_EQ(win::judge_slot(true, {"held", other, "1-a"}, me, false), SlotVerdict::dirty_other)
      << "only that user's cage can replay its journal";
}

TEST(WindowsNetSlots, NoFreeSlotIsARefusalNamingThePortsInUse) {
  std::vector<SlotAttempt> tried;
  for (int k = 0; k < win::kNetSlots; ++k) tried.push_back(attempt(k, SlotVerdict::busy));
  tried[2] = attempt(2, SlotVerdict::free, true, "Address already in use");
  tried[5] = attempt(5, SlotVerdict::dirty_other);
  Error e = win::no_free_slot(tried);
  EXPECT_EQ(e.cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(exit_status_of(e), 125);
  EXPECT_NE(e.reason.find("ports in use by other programs: 127.0.0.1:47302"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("left by crashed runs: 5"), std::string::npos) << e.reason;
  EXPECT_NE(e.remedy.find("127.0.0.1:47302"), std::string::npos);
  EXPECT_NE(win::describe_attempt(tried[2]).find("cage.net.2 (127.0.0.1:47302): port in use"),
            std::string::npos);
  EXPECT_NE(win::describe_attempt(attempt(1, SlotVerdict::free, false, "", true)).find("claimed"),
            std::string::npos);
  EXPECT_NE(win::describe_attempt(attempt(1, SlotVerdict::free)).find(": free"), std::string::npos);
}

}  // namespace
}  // namespace cage::testing
