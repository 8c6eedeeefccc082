// container.cc: the run's AppContainer (parent side): a per-run profile is created and, at the end,
// deleted (the journal's entry); a --net slot's container (cage.net.<k>) is created once per user and
// kept, and must be on the loopback-exemption list. Either way
// Windows' package SID must equal the one the plan derived (its ACEs are already in place). The
// userenv and firewallapi functions are looked up at run time, as Chromium's sandbox does: a host
// without them (Windows 7, Wine) gets a clean spawn_sandbox_unavailable. Proof on Windows:
// `cage --self-test`; the plan: windows_plan_test.cc; the refusal under Wine: tests/cross/wine_smoke.sh.
#include <vector>

#include "windows/loopback.h"
#include "windows/mechanisms.h"
// After <windows.h> (mechanisms.h): these headers need its macros.
#include <sddl.h>

namespace cage::win {

namespace {

const char* const kRemedy = "AppContainers need Windows 8 or later; report this with `cage --self-test`";

template <class F>
F* userenv(const char* name) {
  HMODULE m = ::LoadLibraryExW(L"userenv.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  return m ? reinterpret_cast<F*>(reinterpret_cast<void*>(::GetProcAddress(m, name))) : nullptr;
}

using CreateProfileFn = HRESULT WINAPI(PCWSTR, PCWSTR, PCWSTR, PSID_AND_ATTRIBUTES, DWORD, PSID*);
using DeriveSidFn = HRESULT WINAPI(PCWSTR, PSID*);
using DeleteProfileFn = HRESULT WINAPI(PCWSTR);

std::string sid_text(PSID sid) {
  wchar_t* text = nullptr;
  if (!::ConvertSidToStringSidW(sid, &text)) return {};
  LocalFreer f(text);
  return narrow(text);
}

Error missing(const char* api) {
  return Error{ErrorClass::spawn_sandbox_unavailable, std::string(api) + " is not available on this host",
               kRemedy, "AppContainer", 0};
}

}  // namespace

Result<std::unique_ptr<AppContainer>> AppContainer::open(const ContainerPlan& plan) {
  std::unique_ptr<AppContainer> c(new AppContainer);
  c->name_ = plan.name;
  PSID sid = nullptr;
  const std::wstring name = wide(plan.name);
  // A per-run profile is new (its name is); a slot's is made on its first use and kept, since the
  // loopback exemption and cage's filters name its SID (docs/windows.md). Either way the profile exists for
  // the process.
  auto create = userenv<CreateProfileFn>("CreateAppContainerProfile");
  if (!create) return missing("CreateAppContainerProfile");
  HRESULT hr = create(name.c_str(), name.c_str(), L"cage sandbox run", nullptr, 0, &sid);
  if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS) && !plan.per_run) {
    auto derive = userenv<DeriveSidFn>("DeriveAppContainerSidFromAppContainerName");
    if (!derive) return missing("DeriveAppContainerSidFromAppContainerName");
    hr = derive(name.c_str(), &sid);
  }
  if (FAILED(hr)) return call_failed("CreateAppContainerProfile", static_cast<DWORD>(hr), plan.name, kRemedy);
  c->sid_ = sid;  // FreeSid'd by the destructor
  if (sid_text(sid) != plan.sid)
    return Error{ErrorClass::internal_error,
                 "Windows derived " + sid_text(sid) + " for " + plan.name + ", the plan " + plan.sid,
                 "report this with `cage --self-test`", "AppContainer", 0};
  if (plan.loopback_exemption) {
    auto listed = loopback_exempt_sids();
    if (!listed) return listed.error();
    if (!loopback_listed(*listed, plan.sid)) return net_needs_exemption(plan.name, plan.sid);
  }
  for (const auto& [text, name_of_cap] : plan.capabilities) {
    PSID cap = nullptr;
    if (!::ConvertStringSidToSidW(wide(text).c_str(), &cap))
      return call_failed("ConvertStringSidToSidW", ::GetLastError(), text, kRemedy);
    c->caps_.push_back(cap);
  }
  c->attrs_.clear();
  for (PSID cap : c->caps_) c->attrs_.push_back({cap, SE_GROUP_ENABLED});
  c->security_.AppContainerSid = c->sid_;
  c->security_.Capabilities = c->attrs_.empty() ? nullptr : c->attrs_.data();
  c->security_.CapabilityCount = static_cast<DWORD>(c->attrs_.size());
  return c;
}

AppContainer::~AppContainer() {
  for (PSID cap : caps_) ::LocalFree(cap);
  if (sid_) ::FreeSid(sid_);
}

bool delete_container_profile(const std::string& name) {
  auto del = userenv<DeleteProfileFn>("DeleteAppContainerProfile");
  if (!del) return true;  // no AppContainer API (Wine): no profile can have been made
  HRESULT hr = del(wide(name).c_str());
  return SUCCEEDED(hr) || hr == HRESULT_FROM_WIN32(ERROR_NOT_FOUND) ||
         hr == HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND);
}

Result<std::string> caller_user_sid() {
  HANDLE raw = nullptr;
  if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &raw))
    return call_failed("OpenProcessToken", ::GetLastError(), "token", "");
  UniqueHandle token(raw);
  DWORD n = 0;
  ::GetTokenInformation(token.get(), TokenUser, nullptr, 0, &n);
  std::vector<unsigned char> buf(n ? n : 1);
  if (!::GetTokenInformation(token.get(), TokenUser, buf.data(), n, &n))
    return call_failed("GetTokenInformation", ::GetLastError(), "token", "");
  std::string text = sid_text(reinterpret_cast<TOKEN_USER*>(buf.data())->User.Sid);
  if (text.empty()) return call_failed("ConvertSidToStringSidW", ::GetLastError(), "token", "");
  return text;
}

}  // namespace cage::win
