// host_facts.cc: what win::compile needs to know about this Windows host (parent side, read-only).
#include "windows/execute.h"
#include "windows/mechanisms.h"
#include "windows/win32.h"
// After <windows.h>: rpc.h needs its macros.
#include <rpc.h>

#include <algorithm>
#include <cctype>

namespace cage::win {

namespace {

std::string env_value(const Environ& env, const char* name) {
  for (const auto& [k, v] : env) {
    std::string upper = k;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == name) return v;
  }
  return {};
}

}  // namespace

bool under_wine() {
  HMODULE ntdll = ::GetModuleHandleW(L"ntdll.dll");
  return ntdll && ::GetProcAddress(ntdll, "wine_get_version") != nullptr;
}

WinHostFacts real_host_facts(const policy::Policy& pol, const Environ& env, uint16_t proxy_port,
                             const std::string& proxy_secret) {
  WinHostFacts f;
  f.on_windows = true;
  f.home_posix = pol.home;
  if (auto v = env_value(env, "USERPROFILE"); !v.empty()) f.userprofile = v;
  f.localappdata = env_value(env, "LOCALAPPDATA");
  f.programdata = program_data_dir();
  f.cpu_count = std::max<unsigned>(1, ::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS));
  f.proxy_port = proxy_port;
  f.proxy_secret = proxy_secret;
  f.pid = ::GetCurrentProcessId();
  UUID u{};
  ::UuidCreate(&u);  // random (version 4): only names this run, no secret
  f.nonce[0] = u.Data1;
  f.nonce[1] = (static_cast<uint32_t>(u.Data2) << 16) | u.Data3;
  f.kind = [](const std::string& path) -> char {
    DWORD a = ::GetFileAttributesW(wide(path).c_str());
    if (a == INVALID_FILE_ATTRIBUTES) return 0;
    return (a & FILE_ATTRIBUTE_DIRECTORY) ? 'd' : 'f';
  };
  return f;
}

}  // namespace cage::win
