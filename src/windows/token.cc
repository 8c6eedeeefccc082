// token.cc: the workload's primary token (parent side, before CreateProcessAsUserW). No privileges
// (DISABLE_MAX_PRIVILEGE), LUA, every group deny-only except Everyone, the run SID as a restricting
// SID (WFP tells the run apart by it, see compile.cc), Low integrity (no writes to Medium objects).
// Shown by `cage --self-test` on Windows; the call list is unit-tested in windows_plan_test.cc.

#include <vector>

#include "windows/mechanisms.h"
// After <windows.h> (mechanisms.h): these headers need its macros.
#include <sddl.h>

namespace cage::win {

namespace {

Result<std::vector<unsigned char>> token_info(HANDLE token, TOKEN_INFORMATION_CLASS cls) {
  DWORD n = 0;
  ::GetTokenInformation(token, cls, nullptr, 0, &n);
  std::vector<unsigned char> buf(n ? n : 1);
  if (!::GetTokenInformation(token, cls, buf.data(), n, &n))
    return call_failed("GetTokenInformation", ::GetLastError(), "token", "");
  return buf;
}

bool is_everyone(PSID sid) {
  SID_IDENTIFIER_AUTHORITY world = SECURITY_WORLD_SID_AUTHORITY;
  PSID everyone = nullptr;
  if (!::AllocateAndInitializeSid(&world, 1, SECURITY_WORLD_RID, 0, 0, 0, 0, 0, 0, 0, &everyone))
    return false;
  bool same = ::EqualSid(sid, everyone);
  ::FreeSid(everyone);
  return same;
}

}  // namespace

Result<std::string> caller_user_sid() {
  HANDLE raw = nullptr;
  if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &raw))
    return call_failed("OpenProcessToken", ::GetLastError(), "token", "");
  UniqueHandle token(raw);
  auto user = token_info(token.get(), TokenUser);
  if (!user) return user.error();
  wchar_t* text = nullptr;
  if (!::ConvertSidToStringSidW(reinterpret_cast<TOKEN_USER*>(user->data())->User.Sid, &text))
    return call_failed("ConvertSidToStringSidW", ::GetLastError(), "token", "");
  LocalFreer f(text);
  return narrow(text);
}

Result<UniqueHandle> make_restricted_token(const TokenPlan& plan) {
  const std::string remedy = "run cage from a normal user session; report this with `cage --self-test`";
  HANDLE raw = nullptr;
  if (!::OpenProcessToken(::GetCurrentProcess(),
                          TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY | TOKEN_ADJUST_DEFAULT, &raw))
    return call_failed("OpenProcessToken", ::GetLastError(), "token", remedy);
  UniqueHandle own(raw);
  auto groups_buf = token_info(own.get(), TokenGroups);
  if (!groups_buf) return groups_buf.error();
  auto user_buf = token_info(own.get(), TokenUser);
  if (!user_buf) return user_buf.error();
  auto* groups = reinterpret_cast<TOKEN_GROUPS*>(groups_buf->data());

  PSID run_sid = nullptr;
  if (!::ConvertStringSidToSidW(wide(plan.run_sid).c_str(), &run_sid))
    return call_failed("ConvertStringSidToSidW", ::GetLastError(), plan.run_sid, remedy);
  LocalFreer free_run(run_sid);

  std::vector<SID_AND_ATTRIBUTES> disable, restrict;
  restrict.push_back({reinterpret_cast<TOKEN_USER*>(user_buf->data())->User.Sid, 0});
  for (DWORD i = 0; i < groups->GroupCount; ++i) {
    const auto& g = groups->Groups[i];
    if (g.Attributes & SE_GROUP_INTEGRITY) continue;  // the label is set below, not a group to disable
    restrict.push_back({g.Sid, 0});
    if (plan.deny_only_groups_except_everyone && !is_everyone(g.Sid)) disable.push_back({g.Sid, 0});
  }
  restrict.push_back({run_sid, 0});

  HANDLE restricted = nullptr;
  if (!::CreateRestrictedToken(own.get(), plan.flags, static_cast<DWORD>(disable.size()), disable.data(), 0,
                               nullptr, static_cast<DWORD>(restrict.size()), restrict.data(), &restricted))
    return call_failed("CreateRestrictedToken", ::GetLastError(), "token", remedy);
  UniqueHandle token(restricted);

  PSID label = nullptr;
  if (!::ConvertStringSidToSidW(wide(plan.integrity_sid).c_str(), &label))
    return call_failed("ConvertStringSidToSidW", ::GetLastError(), plan.integrity_sid, remedy);
  LocalFreer free_label(label);
  TOKEN_MANDATORY_LABEL tml{};
  tml.Label.Sid = label;
  tml.Label.Attributes = SE_GROUP_INTEGRITY;
  if (!::SetTokenInformation(token.get(), TokenIntegrityLevel, &tml, sizeof tml + ::GetLengthSid(label)))
    return call_failed("SetTokenInformation(TokenIntegrityLevel)", ::GetLastError(), "token", remedy);
  return token;
}

}  // namespace cage::win
