// self_test.cc: the Windows side of `cage --self-test`. The checks themselves (denied and allowed
// reads, writes, direct TCP, the proxy, the environment) are the portable list in
// selftest/checks.cc; this file gives it a Host: this cage.exe, a scratch directory under
// %USERPROFILE%, a listener on 127.0.0.1 and a runner that captures a run's output. What only a
// real Windows host can show: Wine enforces none of it (tests/cross/wine_smoke.sh expects FAILs).
#include "common/exit_status.h"
#include "selftest/checks.h"

#include <cstdio>
#include <string>
#include <thread>

#include "windows/execute.h"
#include "windows/mechanisms.h"
#include "windows/self_test.h"
// After <windows.h>.
#include <winsock2.h>
#include <ws2tcpip.h>

namespace cage::win {

namespace {

std::string self_path() {
  std::wstring buf(32768, L'\0');
  DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
  buf.resize(n);
  return narrow(buf);
}

// This process's environment plus `extra`, as a CreateProcessW block.
std::wstring environment_with(const selftest::EnvList& extra) {
  std::wstring block;
  if (LPWCH env = ::GetEnvironmentStringsW()) {
    for (const wchar_t* e = env; *e; e += wcslen(e) + 1) block += std::wstring(e) + L'\0';
    ::FreeEnvironmentStringsW(env);
  }
  for (const auto& [k, v] : extra) block += wide(k + "=" + v) + L'\0';
  return block + L'\0';
}

int run_captured(const std::vector<std::string>& argv, const selftest::EnvList& extra, std::string& output) {
  std::wstring cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? L"" : L" ") + wide(quote_argument(a));
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  HANDLE rd = nullptr, wr = nullptr;
  if (!::CreatePipe(&rd, &wr, &sa, 0)) return -1;
  ::SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = ::GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = wr;
  si.hStdError = wr;
  PROCESS_INFORMATION pi{};
  std::wstring env = environment_with(extra);
  std::wstring root = L"C:\\";
  if (wchar_t* sd = _wgetenv(L"SystemDrive")) root = std::wstring(sd) + L"\\";
  BOOL ok = ::CreateProcessW(nullptr, cmd.data(), nullptr, nullptr, TRUE, CREATE_UNICODE_ENVIRONMENT,
                             env.data(), root.c_str(), &si, &pi);
  DWORD err = ::GetLastError();
  ::CloseHandle(wr);
  int status = -1;
  if (ok) {
    char buf[4096];
    DWORD n = 0;
    while (::ReadFile(rd, buf, sizeof buf, &n, nullptr) && n > 0) output.append(buf, n);
    ::WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 0;
    ::GetExitCodeProcess(pi.hProcess, &code);
    status = static_cast<int>(code);
    ::CloseHandle(pi.hProcess);
    ::CloseHandle(pi.hThread);
  } else {
    output = "CreateProcessW: " + describe(err);
  }
  ::CloseHandle(rd);
  return status;
}

// A listener on 127.0.0.1 that accepts and closes, for the connection checks.
struct Listener {
  SOCKET s = INVALID_SOCKET;
  uint16_t port = 0;
  std::thread t;
  bool start() {
    WSADATA wsa;
    if (::WSAStartup(MAKEWORD(2, 2), &wsa) != 0) return false;
    s = ::socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int len = sizeof a;
    if (s == INVALID_SOCKET || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(s, 64) != 0 || ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return false;
    port = ntohs(a.sin_port);
    t = std::thread([this] {
      for (SOCKET c; (c = ::accept(s, nullptr, nullptr)) != INVALID_SOCKET;) ::closesocket(c);
    });
    return true;
  }
  ~Listener() {
    if (s != INVALID_SOCKET) ::closesocket(s);  // ends accept()
    if (t.joinable()) t.join();
  }
};

std::string env_or(const wchar_t* name, const std::string& fallback) {
  const wchar_t* v = _wgetenv(name);
  return v && *v ? narrow(v) : fallback;
}

bool is_file(const std::string& path) {
  DWORD a = ::GetFileAttributesW(wide(path).c_str());
  return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

// Programs start in the AppContainer: the loader reads System32 and Program Files through the
// ACEs Windows gives ALL APPLICATION PACKAGES, and a .cmd shim runs through cmd.exe (issue 24).
void add_programs(selftest::Host& h) {
  const std::string root = env_or(L"SystemRoot", "C:\\Windows");
  h.programs.push_back({"program starts: a System32 console program (cmd.exe /d /c exit 0)",
                        {},
                        {root + "\\System32\\cmd.exe", "/d", "/c", "exit 0"}});
  const std::string pf = env_or(L"ProgramFiles", "C:\\Program Files");
  const std::vector<std::vector<std::string>> candidates = {
      {pf + "\\Git\\cmd\\git.exe", "--version"},
      {pf + "\\PowerShell\\7\\pwsh.exe", "-NoProfile", "-NonInteractive", "-Command", "exit 0"},
      {pf + "\\nodejs\\node.exe", "-e", "0"}};
  for (const auto& c : candidates)
    if (is_file(c[0])) {
      h.programs.push_back({"program starts: one from Program Files (" + c[0] + ")", {}, c});
      break;
    }
  const std::string shim = h.scratch + "\\shim.cmd";
  if (FILE* f = _wfopen(wide(shim).c_str(), L"wb")) {
    std::fputs("@echo off\r\nif \"%~2\"==\"two words\" exit /b 0\r\nexit /b 1\r\n", f);
    std::fclose(f);
    h.programs.push_back({"program starts: a .cmd shim through cmd.exe, its arguments intact",
                          {"--ro", h.scratch},
                          {shim, "one", "two words"}});
  }
}

}  // namespace

int self_test(bool json) {
  selftest::Host h;
  h.exe = self_path();
  wchar_t* profile = _wgetenv(L"USERPROFILE");
  if (h.exe.empty() || !profile) {
    std::fprintf(stderr, "cage: self-test: cannot find this binary or %%USERPROFILE%%\n");
    return exit_status::kCageError;
  }
  h.scratch = narrow(profile) + "\\.cage-self-test-" + std::to_string(::GetCurrentProcessId()) + "-" +
              std::to_string(::GetTickCount());
  if (!::CreateDirectoryW(wide(h.scratch).c_str(), nullptr)) {
    std::fprintf(stderr, "cage: self-test: cannot create %s: %s\n", h.scratch.c_str(),
                 describe(::GetLastError()).c_str());
    return exit_status::kCageError;
  }
  Listener listener;
  int status = 125;
  if (!listener.start()) {
    std::fprintf(stderr, "cage: self-test: cannot listen on 127.0.0.1: %s\n",
                 describe(static_cast<DWORD>(::WSAGetLastError())).c_str());
  } else {
    if (under_wine() && !json)
      std::printf(
          "NOTE  running under Wine: it has no AppContainer and enforces no access entries, labels or job "
          "limits, so checks fail here; run this on Windows\n");
    h.listen_port = listener.port;
    h.run = run_captured;
    add_programs(h);
    // A --net run's direct connection to this listener must be DENIED: the slot container is
    // loopback-exempt, but cage's WFP filters let it reach only its own proxy's port (docs/windows.md).
    status = selftest::run(h, json);
  }
  remove_tree(wide(h.scratch));
  return status;
}

}  // namespace cage::win
