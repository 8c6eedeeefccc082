// self_test.cc: `cage --self-test` on Windows. What only a real Windows host can show: that the Low
// token cannot write outside its grants, that WFP stops its direct connections, and that the allowed
// twins (a granted write, --share-net, the proxy) still work, so a denial is a denial and not a broken
// probe. Each check runs this cage.exe as a user would, with `cage --probe` as the workload.
#include "windows/self_test.h"

#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "windows/compile.h"
#include "windows/execute.h"
#include "windows/mechanisms.h"
// After <windows.h>.
#include <winsock2.h>
#include <ws2tcpip.h>

namespace cage::win {

namespace {

struct Outcome {
  int status = -1;
  std::string output;  // stdout and stderr of the cage run
};

std::wstring self_path() {
  std::wstring buf(32768, L'\0');
  DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
  buf.resize(n);
  return buf;
}

// Runs cage.exe with `args`, its output captured through a pipe.
Outcome run_cage(const std::vector<std::string>& args) {
  Outcome out;
  std::wstring cmd = L"\"" + self_path() + L"\"";
  for (const auto& a : args) cmd += L" " + wide(quote_argument(a));
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  HANDLE rd = nullptr, wr = nullptr;
  if (!::CreatePipe(&rd, &wr, &sa, 0)) return out;
  ::SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = ::GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = wr;
  si.hStdError = wr;
  PROCESS_INFORMATION pi{};
  BOOL ok = ::CreateProcessW(nullptr, cmd.data(), nullptr, nullptr, TRUE, 0, nullptr, nullptr, &si, &pi);
  ::CloseHandle(wr);
  if (ok) {
    char buf[4096];
    DWORD n = 0;
    while (::ReadFile(rd, buf, sizeof buf, &n, nullptr) && n > 0) out.output.append(buf, n);
    ::WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 0;
    ::GetExitCodeProcess(pi.hProcess, &code);
    out.status = static_cast<int>(code);
    ::CloseHandle(pi.hProcess);
    ::CloseHandle(pi.hThread);
  } else {
    out.output = "CreateProcessW: " + describe(::GetLastError());
  }
  ::CloseHandle(rd);
  return out;
}

bool exists(const std::string& path) {
  return ::GetFileAttributesW(wide(path).c_str()) != INVALID_FILE_ATTRIBUTES;
}

struct Check {
  std::string name;
  std::vector<std::string> args;           // cage's arguments; the workload is `cage --probe ...`
  int want;                                // the probe's status: 0 done, 1 denied
  std::function<std::string()> host_side;  // "" if the host-side effect is as expected
};

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\r' || c == '\n') c = ' ';
  return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

// A listener on 127.0.0.1 that accepts and closes, for the connection checks.
struct Listener {
  SOCKET s = INVALID_SOCKET;
  int port = 0;
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
        ::listen(s, 16) != 0 || ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0)
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

}  // namespace

int self_test(bool json) {
  const std::string local = [] {
    wchar_t buf[32768];
    DWORD n = ::GetEnvironmentVariableW(L"LOCALAPPDATA", buf, 32768);
    return n && n < 32768 ? narrow(std::wstring(buf, n)) : std::string("C:\\Windows\\Temp");
  }();
  const std::string root = local + "\\cage\\self-test-" + std::to_string(::GetCurrentProcessId());
  const std::string granted = root + "\\granted", outside = root + "\\outside";
  ::CreateDirectoryW(wide(local + "\\cage").c_str(), nullptr);
  ::CreateDirectoryW(wide(root).c_str(), nullptr);
  ::CreateDirectoryW(wide(granted).c_str(), nullptr);
  ::CreateDirectoryW(wide(outside).c_str(), nullptr);
  Listener listener;
  const bool have_listener = listener.start();
  const std::string port = std::to_string(listener.port);
  auto file_is = [](std::string path, bool want) {
    return [path, want]() -> std::string {
      if (exists(path) == want) return "";
      return path + (want ? " was not written" : " exists: the denied write happened");
    };
  };
  auto none = []() { return std::string(); };
  // The file checks run with --share-net so that they show the token and the labels whether or not
  // WFP is available (adding filters needs an elevated prompt); the network checks need WFP.
  std::vector<Check> checks = {
      {"allowed write inside --rw",
       {"--share-net", "--rw", granted, "--", "--probe", "write", granted + "\\ok.txt"},
       0,
       file_is(granted + "\\ok.txt", true)},
      {"denied write outside the grants",
       {"--share-net", "--rw", granted, "--", "--probe", "write", outside + "\\no.txt"},
       1,
       file_is(outside + "\\no.txt", false)},
      {"denied write to a --ro grant",
       {"--share-net", "--ro", outside, "--", "--probe", "write", outside + "\\ro.txt"},
       1,
       file_is(outside + "\\ro.txt", false)},
      {"allowed read of a --ro grant",
       {"--share-net", "--ro", granted, "--", "--probe", "read", granted + "\\ok.txt"},
       0,
       none},
  };
  if (have_listener) {
    checks.push_back({"allowed direct TCP with --share-net",
                      {"--share-net", "--", "--probe", "connect", "127.0.0.1", port},
                      0,
                      none});
    checks.push_back(
        {"denied direct TCP to 127.0.0.1", {"--", "--probe", "connect", "127.0.0.1", port}, 1, none});
    checks.push_back({"denied direct TCP past the proxy",
                      {"--net", "127.0.0.1:" + port, "--", "--probe", "connect", "127.0.0.1", port},
                      1,
                      none});
    checks.push_back({"allowed TCP through the proxy",
                      {"--net", "127.0.0.1:" + port, "--", "--probe", "connect-proxy", "127.0.0.1", port},
                      0,
                      none});
  }
  int failed = 0;
  if (!have_listener)
    std::printf("SKIP network checks: no listener on 127.0.0.1 (%s)\n",
                describe(::WSAGetLastError()).c_str());
  if (under_wine())
    std::printf(
        "NOTE running under Wine: it enforces no token restrictions, labels or job limits and has no WFP, so "
        "checks fail here\n");
  for (auto& c : checks) {
    std::vector<std::string> args = c.args;
    // The workload is this cage.exe in probe mode: "--", "--probe", ... becomes "--", <self>, "--probe", ...
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i] == "--") {
        args.insert(args.begin() + static_cast<long>(i) + 1, narrow(self_path()));
        break;
      }
    Outcome o = run_cage(args);
    std::string host = c.host_side();
    const bool ok = o.status == c.want && host.empty();
    failed += !ok;
    if (json)
      std::printf("{\"check\":\"%s\",\"result\":\"%s\",\"status\":%d}\n", c.name.c_str(),
                  ok ? "PASS" : "FAIL", o.status);
    else if (ok)
      std::printf("PASS %s\n", c.name.c_str());
    else
      std::printf("FAIL %s: exit %d (wanted %d)%s%s\n", c.name.c_str(), o.status, c.want,
                  host.empty() ? "" : ("; " + host).c_str(),
                  o.output.empty() ? "" : (": " + one_line(o.output)).c_str());
  }
  remove_tree(wide(root));
  std::printf("%s: %d of %zu checks failed\n", failed ? "FAIL" : "PASS", failed, checks.size());
  return failed ? 1 : 0;
}

}  // namespace cage::win
