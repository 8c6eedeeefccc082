// network_setup.cc: `cage --install-windows-network` and `--uninstall-windows-network` (an elevated,
// one-time step), and the reading of the loopback-exemption list that --net runs and --check use.
// The edit itself is loopback.cc's (unit tested: windows_loopback_test.cc); here only the calls:
// NetworkIsolationGetAppContainerConfig, then NetworkIsolationSetAppContainerConfig with the whole
// list (Microsoft: the caller must retrieve and preserve the entries already there; CheckNetIsolation
// LoopbackExempt -a/-d edits the same list). Under Wine (no firewallapi.dll) both are refused cleanly.
#include "windows/loopback.h"
#include "windows/mechanisms.h"
// After <windows.h> (mechanisms.h): these headers need its macros.
#include <sddl.h>

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

Result<std::string> set_up_network(bool install) {
  const std::string flag = install ? kInstallNetworkFlag : kUninstallNetworkFlag;
  auto admin = elevated();
  if (!admin) return admin.error();
  if (!*admin) return network_setup_needs_elevation(install);
  auto set = firewallapi<SetConfigFn>("NetworkIsolationSetAppContainerConfig");
  if (!set) return missing("NetworkIsolationSetAppContainerConfig", flag);
  LoopbackList list;
  if (auto s = read_list(list, flag); !s) return s.error();
  const std::string ours = package_sid_of(kNetContainerName);
  const LoopbackEdit edit = edit_loopback_list(list.texts(), ours, install);
  if (!edit.changed) return describe_loopback_edit(edit, ours, install);
  PSID sid = nullptr;
  if (!::ConvertStringSidToSidW(wide(ours).c_str(), &sid))
    return call_failed("ConvertStringSidToSidW", ::GetLastError(), ours, "");
  LocalFreer free_sid(sid);
  // Every kept entry goes back as Windows gave it (its SID and attributes); ours carries none.
  std::vector<SID_AND_ATTRIBUTES> next;
  for (int i : edit.entries)
    next.push_back(i == LoopbackEdit::kOurs ? SID_AND_ATTRIBUTES{sid, 0} : list.items[i]);
  SID_AND_ATTRIBUTES none{};  // an empty list still gets a valid pointer
  DWORD rc = set(static_cast<DWORD>(next.size()), next.empty() ? &none : next.data());
  if (rc == ERROR_ACCESS_DENIED) return network_setup_needs_elevation(install);
  if (rc != ERROR_SUCCESS)
    return call_failed("NetworkIsolationSetAppContainerConfig", rc, flag, "report this with `cage --check`");
  return describe_loopback_edit(edit, ours, install);
}

}  // namespace cage::win
