// --net on Windows, the decisions (pure, portable; tests/unit/windows_net_slots_test.cc): a fixed pool
// of slot AppContainers `cage.net.0` .. `cage.net.15`, each on the loopback-exemption list, each held
// by one run at a time, each confined by cage's persistent WFP filters to TCP to 127.0.0.1:BASE+k,
// where that run's proxy listens. The filters as data (wfp_filters), the state of an install
// (assess_net_install), the choice of a slot (judge_slot). The Win32 side: wfp.cc, net_slot_lock.cc,
// network_setup.cc. Design and sources: docs/windows.md, "Network".
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"

namespace cage::win {

// 16 slots: as many --net runs at once on one machine. Each costs 7 filters, one entry on the
// loopback-exemption list and one profile per user who used it; 16 concurrent proxied sandboxes is
// far beyond an interactive machine's use and still a short list in `CheckNetIsolation LoopbackExempt -s`.
inline constexpr int kNetSlots = 16;
// Slot k's proxy listens on 127.0.0.1:kNetSlotBasePort+k. Below 49152, where Windows' dynamic
// (ephemeral) range starts, so no program's bind(0) or outbound connection is handed it by chance;
// fixed, because persistent filters name it. A port another program holds moves the run to the next slot.
inline constexpr uint16_t kNetSlotBasePort = 47300;
// The single container of the first install (every --net run shared it). Removed by install and
// uninstall; a machine that only has it is refused (assess_net_install: legacy).
inline constexpr const char* kLegacyNetContainerName = "cage.net";

std::string net_slot_name(int slot);  // "cage.net.<slot>"
std::string net_slot_sid(int slot);   // package_sid_of(net_slot_name(slot))
uint16_t net_slot_port(int slot, uint16_t base = kNetSlotBasePort);
std::vector<std::string> net_slot_sids(int slots = kNetSlots);

// The WFP objects, all persistent (FWPM_*_FLAG_PERSISTENT: kept across reboots until deleted),
// under cage's own provider and sublayer, so uninstall deletes exactly these keys.
inline constexpr const char* kWfpProviderKey = "0b5d0859-9a40-4a45-96af-2f1b3c3f0b1b";
inline constexpr const char* kWfpSublayerKey = "e26c6f16-85d9-4ee5-bdf9-b90979162467";
// The highest sublayer weight: cage's blocks are evaluated first and, being hard blocks (a filter's
// block is hard by default), no permit of a lower sublayer can undo them (Microsoft, "Filter
// Arbitration"). Its permit is soft: the Windows Firewall's own decisions still apply after it.
inline constexpr uint16_t kWfpSublayerWeight = 0xffff;
// An elevated install adds the objects with this security descriptor: the ACEs the filter engine
// gives by default (inherited, so not protected) plus read for Authenticated Users, so that --check
// and every --net run can verify the filters without an administrator.
inline constexpr const char* kWfpObjectSddl = "D:(A;;GR;;;AU)";

enum class WfpLayer { connect_v4, connect_v6, recv_accept_v4, recv_accept_v6, listen_v4, listen_v6 };
enum class WfpField { package_id, remote_address, remote_port, protocol };
enum class WfpAction { permit, block };
struct WfpCondition {
  WfpField field;
  std::string value;  // a SID, a dotted IPv4 address, a port or an IP protocol number, as text
};
struct WfpFilter {
  std::string key;   // GUID text, fixed per slot and role: uninstall and --check name it
  std::string name;  // FWPM_DISPLAY_DATA0.name
  int slot = 0;
  WfpLayer layer = WfpLayer::connect_v4;
  WfpAction action = WfpAction::block;
  uint8_t weight = 0;  // FWP_UINT8: the weight range 0..15 within the sublayer; higher first
  std::vector<WfpCondition> conditions;  // all must match (each field appears once)
  std::string why;
};
const char* layer_guid(WfpLayer layer);  // FWPM_LAYER_ALE_AUTH_* (fwpmu.h)
const char* layer_name(WfpLayer layer);  // "FWPM_LAYER_ALE_AUTH_CONNECT_V4"
const char* field_guid(WfpField field);  // FWPM_CONDITION_* (fwpmu.h)
const char* field_name(WfpField field);
std::string wfp_filter_key(int slot, int role);
// Per slot: at ALE_AUTH_CONNECT_V4 a permit (weight 15) of TCP to 127.0.0.1:BASE+k and a block
// (weight 0) of everything else; blocks of everything at ALE_AUTH_CONNECT_V6, ALE_AUTH_RECV_ACCEPT
// and ALE_AUTH_LISTEN (v4 and v6): the workload can reach its proxy and nothing else, and nothing can
// reach it. Each condition names the slot's package SID (FWPM_CONDITION_ALE_PACKAGE_ID).
std::vector<WfpFilter> wfp_filters(int slots = kNetSlots, uint16_t base = kNetSlotBasePort);

// What a --net run, --check and the install read about the machine (network_setup.cc fills it).
struct NetInstallFacts {
  std::string list_error;           // non-empty: the loopback-exemption list could not be read
  std::vector<std::string> exempt;  // the list's SIDs as text
  std::string wfp_error;            // non-empty: the WFP objects could not be read
  bool provider = false, sublayer = false;
  std::set<std::string> filters;  // the keys of cage's filters that exist
  std::string wfp_note;           // how they were read, when not from the engine itself
  std::string slots_error;        // non-empty: the slot lock directory is missing or unusable
};
enum class NetInstall { ok, missing, partial, legacy, unknown };
struct NetInstallReport {
  NetInstall state = NetInstall::missing;
  std::string detail;  // one line: what is there and what is not
};
NetInstallReport assess_net_install(const NetInstallFacts& facts, int slots = kNetSlots);
const char* to_string(NetInstall state);  // "ok", "MISSING", "partial", "legacy", "unknown"
// The refusal of a --net run on a machine whose install is not `ok` (exit 125, names the command).
Error net_not_installed(const NetInstallReport& report);

// The slot lock files: %ProgramData%\cage\net-slots\slot-<k>.lock, made by the elevated install
// (readable and writable by Authenticated Users, not deletable, no ACE for any AppContainer and a
// Medium no-write-up label: a sandboxed workload can neither open nor squat them). A run holds its
// slot's file open without sharing for its whole life; Windows closes it when the process dies, so a
// crashed run's slot is free again. The file says who held it last and whether that run let go.
std::string net_slot_dir(const std::string& programdata);
std::string net_slot_lock_path(const std::string& programdata, int slot);
struct SlotRecord {
  std::string state;  // "held", "released", or "" (never used)
  std::string user;   // the holder's user SID
  std::string run;    // the holder's run id ("<pid>-<nonce>": names its restore journal)
};
std::string format_slot_record(const SlotRecord& record);
SlotRecord parse_slot_record(const std::string& text);
enum class SlotVerdict {
  free,         // unused, released, or a crashed run of ours whose journal is restored
  busy,         // another live run holds it open
  dirty_own,    // a crashed run of ours whose restore journal is still there: its ACEs may remain
  dirty_other,  // a crashed run of another user: its ACEs for this SID may remain on that user's paths
};
// `opened`: the lock file could be opened without sharing (no live holder). `journal_exists`: a
// restore journal for `last.run` is still in this user's journal directory.
SlotVerdict judge_slot(bool opened, const SlotRecord& last, const std::string& me, bool journal_exists);
struct SlotAttempt {
  int slot = 0;
  SlotVerdict verdict = SlotVerdict::free;
  bool port_taken = false;  // free, but 127.0.0.1:port could not be bound
  bool claimed = false;     // free, and its port bound: the run holds it
  std::string port_error;   // what bind said
};
// One line per slot tried: what --dry-run and the refusal show.
std::string describe_attempt(const SlotAttempt& attempt, uint16_t base = kNetSlotBasePort);
// No slot could be claimed: spawn_sandbox_unavailable (exit 125) naming the ports that were taken.
Error no_free_slot(const std::vector<SlotAttempt>& attempts, uint16_t base = kNetSlotBasePort);

}  // namespace cage::win
