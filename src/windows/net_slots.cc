// The --net slot pool and cage's WFP filters as data (see net_slots.h). Nothing here calls Windows:
// network_setup.cc adds and checks exactly what wfp_filters() lists, net_slot_lock.cc claims what
// judge_slot() allows.
#include "windows/net_slots.h"

#include <cstdio>

#include "windows/compile.h"
#include "windows/loopback.h"

namespace cage::win {

namespace {

struct LayerInfo {
  const char* guid;
  const char* name;
};
// Values from Microsoft's fwpmu.h (as generated into windows-rs); mingw's headers lack them.
LayerInfo layer_info(WfpLayer layer) {
  switch (layer) {
    case WfpLayer::connect_v4:
      return {"c38d57d1-05a7-4c33-904f-7fbceee60e82", "FWPM_LAYER_ALE_AUTH_CONNECT_V4"};
    case WfpLayer::connect_v6:
      return {"4a72393b-319f-44bc-84c3-ba54dcb3b6b4", "FWPM_LAYER_ALE_AUTH_CONNECT_V6"};
    case WfpLayer::recv_accept_v4:
      return {"e1cd9fe7-f4b5-4273-96c0-592e487b8650", "FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V4"};
    case WfpLayer::recv_accept_v6:
      return {"a3b42c97-9f04-4672-b87e-cee9c483257f", "FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V6"};
    case WfpLayer::listen_v4:
      return {"88bb5dad-76d7-4227-9c71-df0a3ed7be7e", "FWPM_LAYER_ALE_AUTH_LISTEN_V4"};
    case WfpLayer::listen_v6:
      return {"7ac9de24-17dd-4814-b4bd-a9fbc95a321b", "FWPM_LAYER_ALE_AUTH_LISTEN_V6"};
  }
  return {"", ""};
}

LayerInfo field_info(WfpField field) {
  switch (field) {
    case WfpField::package_id:
      return {"71bc78fa-f17c-4997-a602-6abb261f351c", "FWPM_CONDITION_ALE_PACKAGE_ID"};
    case WfpField::remote_address:
      return {"b235ae9a-1d64-49b8-a44c-5ff3d9095045", "FWPM_CONDITION_IP_REMOTE_ADDRESS"};
    case WfpField::remote_port:
      return {"c35a604d-d22b-4e1a-91b4-68f674ee674b", "FWPM_CONDITION_IP_REMOTE_PORT"};
    case WfpField::protocol:
      return {"3971ef2b-623e-4f9a-8cb1-6e79b806b9a7", "FWPM_CONDITION_IP_PROTOCOL"};
  }
  return {"", ""};
}

// The filter keys: a fixed prefix, then the slot and the role (7 filters per slot).
constexpr const char* kFilterKeyPrefix = "5dd18414-4780-4a95-8701-27da6633";

std::string list_slots(const std::vector<int>& slots) {
  std::string out;
  for (int s : slots) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

}  // namespace

std::string net_slot_name(int slot) {
  return std::string(kLegacyNetContainerName) + "." + std::to_string(slot);
}
std::string net_slot_sid(int slot) {
  return package_sid_of(net_slot_name(slot));
}
uint16_t net_slot_port(int slot, uint16_t base) {
  return static_cast<uint16_t>(base + slot);
}
std::vector<std::string> net_slot_sids(int slots) {
  std::vector<std::string> out;
  for (int k = 0; k < slots; ++k) out.push_back(net_slot_sid(k));
  return out;
}

const char* layer_guid(WfpLayer layer) {
  return layer_info(layer).guid;
}
const char* layer_name(WfpLayer layer) {
  return layer_info(layer).name;
}
const char* field_guid(WfpField field) {
  return field_info(field).guid;
}
const char* field_name(WfpField field) {
  return field_info(field).name;
}

std::string wfp_filter_key(int slot, int role) {
  char tail[8];
  std::snprintf(tail, sizeof tail, "%02x%02x", slot & 0xff, role & 0xff);
  return std::string(kFilterKeyPrefix) + tail;
}

std::vector<WfpFilter> wfp_filters(int slots, uint16_t base) {
  std::vector<WfpFilter> out;
  for (int k = 0; k < slots; ++k) {
    const std::string sid = net_slot_sid(k), port = std::to_string(net_slot_port(k, base));
    const WfpCondition mine{WfpField::package_id, sid};
    const std::string who = net_slot_name(k);
    // The one way out: TCP (protocol 6) to the proxy of the run holding slot k. Exactly 127.0.0.1,
    // not 127.0.0.0/8: another address of the loopback range may hold another program's listener.
    out.push_back({wfp_filter_key(k, 0),
                   "cage " + who + ": its proxy",
                   k,
                   WfpLayer::connect_v4,
                   WfpAction::permit,
                   15,
                   {mine,
                    {WfpField::remote_address, "127.0.0.1"},
                    {WfpField::remote_port, port},
                    {WfpField::protocol, "6"}},
                   "TCP to 127.0.0.1:" + port + ", where the proxy of the run holding this slot listens"});
    struct Block {
      WfpLayer layer;
      const char* what;
    };
    // ALE_AUTH_CONNECT also sees the first UDP datagram to each destination (Microsoft, "ALE
    // Layers"): loopback DNS and every other UDP service are blocked here too. The exemption lets a
    // container receive loopback traffic as well; nothing may connect to the workload or be listened for.
    const Block blocks[] = {{WfpLayer::connect_v4, "every other IPv4 connection or first datagram"},
                            {WfpLayer::connect_v6, "every IPv6 connection or first datagram (::1 included)"},
                            {WfpLayer::recv_accept_v4, "every inbound IPv4 connection or first datagram"},
                            {WfpLayer::recv_accept_v6, "every inbound IPv6 connection or first datagram"},
                            {WfpLayer::listen_v4, "every IPv4 listen()"},
                            {WfpLayer::listen_v6, "every IPv6 listen()"}};
    int role = 1;
    for (const auto& b : blocks)
      out.push_back({wfp_filter_key(k, role++),
                     std::string("cage ") + who + ": block " + layer_name(b.layer),
                     k,
                     b.layer,
                     WfpAction::block,
                     0,
                     {mine},
                     b.what});
  }
  return out;
}

const char* to_string(NetInstall state) {
  switch (state) {
    case NetInstall::ok:
      return "ok";
    case NetInstall::missing:
      return "MISSING";
    case NetInstall::partial:
      return "partial";
    case NetInstall::legacy:
      return "legacy";
    case NetInstall::unknown:
      return "unknown";
  }
  return "?";
}

NetInstallReport assess_net_install(const NetInstallFacts& f, int slots) {
  if (!f.list_error.empty()) return {NetInstall::unknown, "the loopback-exemption list: " + f.list_error};
  if (!f.wfp_error.empty()) return {NetInstall::unknown, "cage's WFP filters: " + f.wfp_error};
  size_t listed = 0;
  for (const auto& sid : net_slot_sids(slots)) listed += loopback_listed(f.exempt, sid) ? 1 : 0;
  size_t filters = 0;
  const auto want = wfp_filters(slots);
  for (const auto& w : want) filters += f.filters.count(w.key);
  const bool legacy = loopback_listed(f.exempt, package_sid_of(kLegacyNetContainerName));
  const std::string detail = std::to_string(listed) + "/" + std::to_string(slots) +
                             " slot containers exempt, " + std::to_string(filters) + "/" +
                             std::to_string(want.size()) + " filters" + (f.provider ? "" : ", no provider") +
                             (f.sublayer ? "" : ", no sublayer") +
                             (f.slots_error.empty() ? "" : ", slot locks: " + f.slots_error) +
                             (legacy ? ", the old shared cage.net exemption is present" : "") +
                             (f.wfp_note.empty() ? "" : "; filters " + f.wfp_note);
  const bool none = listed == 0 && filters == 0 && !f.provider && !f.sublayer;
  if (listed == static_cast<size_t>(slots) && filters == want.size() && f.provider && f.sublayer &&
      f.slots_error.empty() && !legacy)
    return {NetInstall::ok, detail};
  if (none && legacy) return {NetInstall::legacy, detail};
  return {none ? NetInstall::missing : NetInstall::partial, detail};
}

Error net_not_installed(const NetInstallReport& r) {
  std::string reason;
  switch (r.state) {
    case NetInstall::legacy:
      reason =
          "this machine has the older --net setup (one cage.net container shared by every run, which opened "
          "every loopback listener); --net now needs the slot containers and cage's WFP filters";
      break;
    case NetInstall::partial:
      reason = "cage's --net setup on this machine is incomplete";
      break;
    case NetInstall::unknown:
      reason = "cannot tell whether cage's --net setup is complete";
      break;
    case NetInstall::missing:
    case NetInstall::ok:
      reason =
          "--net needs a one-time setup of this machine (loopback exemptions and WFP filters for cage's slot "
          "containers)";
      break;
  }
  return Error{
      ErrorClass::spawn_sandbox_unavailable, reason + " (" + r.detail + ")",
      "run `cage --install-windows-network` once from an elevated prompt (`cage --check` says whether it "
      "is done); or run without --net",
      "--net", 0};
}

std::string net_slot_dir(const std::string& programdata) {
  return programdata + "\\cage\\net-slots";
}
std::string net_slot_lock_path(const std::string& programdata, int slot) {
  return net_slot_dir(programdata) + "\\slot-" + std::to_string(slot) + ".lock";
}

std::string format_slot_record(const SlotRecord& r) {
  return "cage-net-slot 1 " + r.state + " " + r.user + " " + r.run + "\n";
}

SlotRecord parse_slot_record(const std::string& text) {
  SlotRecord r;
  char state[16] = {}, user[200] = {}, run[64] = {};
  int version = 0;
  if (std::sscanf(text.c_str(), "cage-net-slot %d %15s %199s %63s", &version, state, user, run) != 4 ||
      version != 1)
    return r;  // empty or unreadable: treated as never used (the install writes it empty)
  r.state = state;
  r.user = user;
  r.run = run;
  if (r.state != "held" && r.state != "released") return SlotRecord{};
  return r;
}

SlotVerdict judge_slot(bool opened, const SlotRecord& last, const std::string& me, bool journal_exists) {
  if (!opened) return SlotVerdict::busy;
  if (last.state != "held") return SlotVerdict::free;
  // Held, yet nobody has the file open: its run ended without letting go (a crash, a kill). Its ACEs
  // for this slot's SID are removed by its restore journal, which only its own user's next cage
  // replays: until then a new run with the same SID could read what that run had granted.
  if (last.user != me) return SlotVerdict::dirty_other;
  return journal_exists ? SlotVerdict::dirty_own : SlotVerdict::free;
}

std::string describe_attempt(const SlotAttempt& a, uint16_t base) {
  const std::string head =
      net_slot_name(a.slot) + " (127.0.0.1:" + std::to_string(net_slot_port(a.slot, base)) + "): ";
  switch (a.verdict) {
    case SlotVerdict::busy:
      return head + "busy (another run holds it)";
    case SlotVerdict::dirty_own:
      return head + "skipped (a crashed run of yours held it; its restore journal is not replayed yet)";
    case SlotVerdict::dirty_other:
      return head + "skipped (a crashed run of another user held it; its grants may still name this slot)";
    case SlotVerdict::free:
      break;
  }
  if (a.port_taken)
    return head + "port in use by another program" + (a.port_error.empty() ? "" : " (" + a.port_error + ")");
  return head + (a.claimed ? "claimed" : "free");
}

Error no_free_slot(const std::vector<SlotAttempt>& attempts, uint16_t base) {
  std::vector<int> busy, dirty, taken;
  for (const auto& a : attempts) {
    if (a.verdict == SlotVerdict::busy) busy.push_back(a.slot);
    if (a.verdict == SlotVerdict::dirty_own || a.verdict == SlotVerdict::dirty_other) dirty.push_back(a.slot);
    if (a.verdict == SlotVerdict::free && a.port_taken) taken.push_back(a.slot);
  }
  std::string reason = "no --net slot is free";
  if (!busy.empty()) reason += "; held by running runs: " + list_slots(busy);
  if (!dirty.empty()) reason += "; left by crashed runs: " + list_slots(dirty);
  std::string ports;
  for (int s : taken)
    ports += (ports.empty() ? "" : ", ") + std::string("127.0.0.1:") + std::to_string(net_slot_port(s, base));
  if (!taken.empty()) reason += "; ports in use by other programs: " + ports;
  return Error{ErrorClass::spawn_sandbox_unavailable, reason,
               taken.empty()
                   ? "wait for a run to end (a crashed run's slot is freed by its user's next cage run)"
                   : "stop the program listening on " + ports +
                         " (`netstat -ano` names it), or wait for a "
                         "run to end",
               "--net", 0};
}

}  // namespace cage::win
