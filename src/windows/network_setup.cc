// network_setup.cc: `cage --install-windows-network` and `--uninstall-windows-network` (an elevated,
// one-time step: cage's WFP filters (wfp.cc), the slot lock files (net_slot_lock.cc) and the slot
// containers on the loopback-exemption list), and the reading of all three that --net runs and
// --check use. The list edit is loopback.cc's (unit tested: windows_loopback_test.cc); here the calls:
// NetworkIsolationGetAppContainerConfig, then NetworkIsolationSetAppContainerConfig with the whole
// list (Microsoft: the caller must retrieve and preserve the entries already there; CheckNetIsolation
// LoopbackExempt -a/-d edits the same list). Under Wine (no firewallapi.dll) both are refused cleanly.
#include "windows/loopback.h"
#include "windows/mechanisms.h"
#include "windows/net_slots.h"
// After <windows.h> (mechanisms.h): these headers need its macros.
#include <sddl.h>
#include <shlobj.h>

namespace cage::win {

namespace {

using GetConfigFn = DWORD WINAPI(DWORD*, PSID_AND_ATTRIBUTES*);
using SetConfigFn = DWORD WINAPI(DWORD, PSID_AND_ATTRIBUTES);

template <class F>
F* firewallapi(const char* name) {
  HMODULE m = ::LoadLibraryExW(L"firewallapi.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  return m ? reinterpret_cast<F*>(reinterpret_cast<void*>(::GetProcAddress(m, name))) : nullptr;
}

Error missing(const char* api, const std::string& input) {
  return Error{ErrorClass::spawn_sandbox_unavailable, std::string(api) + " is not available on this host",
               "the loopback-exemption list needs Windows 8 or later (firewallapi.dll)", input, 0};
}

// The list as Windows returned it; freed as Microsoft's sample for the Get call does (HeapFree of
// each SID, then of the array, on the process heap).
struct LoopbackList {
  DWORD n = 0;
  PSID_AND_ATTRIBUTES items = nullptr;
  LoopbackList() = default;
  LoopbackList(const LoopbackList&) = delete;
  LoopbackList& operator=(const LoopbackList&) = delete;
  ~LoopbackList() {
    if (!items) return;
    for (DWORD i = 0; i < n; ++i) ::HeapFree(::GetProcessHeap(), 0, items[i].Sid);
    ::HeapFree(::GetProcessHeap(), 0, items);
  }
  std::vector<std::string> texts() const {
    std::vector<std::string> out;
    for (DWORD i = 0; i < n; ++i) {
      wchar_t* text = nullptr;
      if (items[i].Sid && ::ConvertSidToStringSidW(items[i].Sid, &text)) {
        LocalFreer f(text);
        out.push_back(narrow(text));
      } else {
        out.emplace_back();  // kept as it is, never taken for ours
      }
    }
    return out;
  }
};

Status read_list(LoopbackList& list, const std::string& input) {
  auto get = firewallapi<GetConfigFn>("NetworkIsolationGetAppContainerConfig");
  if (!get) return missing("NetworkIsolationGetAppContainerConfig", input);
  if (DWORD rc = get(&list.n, &list.items); rc != ERROR_SUCCESS)
    return call_failed("NetworkIsolationGetAppContainerConfig", rc, input, "");
  return Ok{};
}

Result<bool> elevated() {
  HANDLE raw = nullptr;
  if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &raw))
    return call_failed("OpenProcessToken", ::GetLastError(), "token", "");
  UniqueHandle token(raw);
  TOKEN_ELEVATION e{};
  DWORD n = 0;
  if (!::GetTokenInformation(token.get(), TokenElevation, &e, sizeof e, &n))
    return call_failed("GetTokenInformation(TokenElevation)", ::GetLastError(), "token", "");
  return e.TokenIsElevated != 0;
}

}  // namespace

Result<std::vector<std::string>> loopback_exempt_sids() {
  LoopbackList list;
  if (auto s = read_list(list, "--net"); !s) return s.error();
  return list.texts();
}

// From the shell, not the caller's environment: a variable must not move the machine-wide slot locks
// to a directory of the caller's choosing.
std::string program_data_dir() {
  wchar_t buf[MAX_PATH] = {};
  if (SUCCEEDED(::SHGetFolderPathW(nullptr, CSIDL_COMMON_APPDATA, nullptr, SHGFP_TYPE_CURRENT, buf)) &&
      buf[0])
    return narrow(buf);
  return "C:\\ProgramData";
}

NetInstallFacts read_net_install(const std::string& programdata) {
  NetInstallFacts f;
  auto listed = loopback_exempt_sids();
  if (listed)
    f.exempt = *listed;
  else
    f.list_error = listed.error().reason;
  if (auto s = wfp_read(wfp_filters(), f); !s) f.wfp_error = s.error().reason;
  f.slots_error = slot_locks_problem(programdata);
  return f;
}

namespace {

// The whole list back to Windows: every kept entry as Windows gave it (its SID and attributes),
// the added ones without attributes.
Status write_list(LoopbackList& list, const LoopbackEdit& edit, const std::vector<std::string>& add,
                  bool install) {
  const std::string flag = install ? kInstallNetworkFlag : kUninstallNetworkFlag;
  auto set = firewallapi<SetConfigFn>("NetworkIsolationSetAppContainerConfig");
  if (!set) return missing("NetworkIsolationSetAppContainerConfig", flag);
  std::vector<PSID> sids;
  struct Free {
    std::vector<PSID>& v;
    ~Free() {
      for (PSID p : v) ::LocalFree(p);
    }
  } free_sids{sids};
  for (const auto& text : add) {
    PSID sid = nullptr;
    if (!::ConvertStringSidToSidW(wide(text).c_str(), &sid))
      return call_failed("ConvertStringSidToSidW", ::GetLastError(), text, "");
    sids.push_back(sid);
  }
  std::vector<SID_AND_ATTRIBUTES> next;
  for (int i : edit.entries)
    next.push_back(i < 0 ? SID_AND_ATTRIBUTES{sids[static_cast<size_t>(-1 - i)], 0} : list.items[i]);
  SID_AND_ATTRIBUTES none{};  // an empty list still gets a valid pointer
  DWORD rc = set(static_cast<DWORD>(next.size()), next.empty() ? &none : next.data());
  if (rc == ERROR_ACCESS_DENIED) return network_setup_needs_elevation(install);
  if (rc != ERROR_SUCCESS)
    return call_failed("NetworkIsolationSetAppContainerConfig", rc, flag, "report this with `cage --check`");
  return Ok{};
}

}  // namespace

// Install: the filters first, then the lock files, then the exemptions, so that no moment exists in
// which a slot container is exempt but not confined. Uninstall in the reverse order. Each step is
// idempotent (existing objects are kept, missing ones are not an error), so a failed or interrupted
// command is finished by running it again.
Result<std::string> set_up_network(bool install) {
  const std::string flag = install ? kInstallNetworkFlag : kUninstallNetworkFlag;
  auto admin = elevated();
  if (!admin) return admin.error();
  if (!*admin) return network_setup_needs_elevation(install);
  LoopbackList list;
  if (auto s = read_list(list, flag); !s) return s.error();
  const std::string programdata = program_data_dir();
  const auto filters = wfp_filters();
  const std::vector<std::string> add = install ? net_slot_sids() : std::vector<std::string>{};
  const LoopbackEdit edit = network_list_edit(list.texts(), install);
  std::string done;
  if (install) {
    if (auto s = wfp_install(filters, flag); !s) return s.error();
    if (auto s = make_slot_locks(programdata, flag); !s) return s.error();
    if (edit.changed)
      if (auto s = write_list(list, edit, add, install); !s) return s.error();
    done = "WFP: cage's provider, sublayer and " + std::to_string(filters.size()) + " filters present (" +
           std::to_string(kNetSlots) + " slots, ports " + std::to_string(net_slot_port(0)) + "-" +
           std::to_string(net_slot_port(kNetSlots - 1)) + "); slot locks in " + net_slot_dir(programdata) +
           "; " + describe_loopback_edit(edit, install) +
           ". --net runs can now reach their proxy, and only it";
  } else {
    if (auto s = remove_slot_locks(programdata, flag); !s) return s.error();
    if (edit.changed)
      if (auto s = write_list(list, edit, add, install); !s) return s.error();
    if (auto s = wfp_uninstall(filters, flag); !s) return s.error();
    done = describe_loopback_edit(edit, install) +
           "; WFP: cage's filters, sublayer and provider removed; slot locks "
           "removed. --net runs are refused until it is installed again";
  }
  return done;
}

}  // namespace cage::win
