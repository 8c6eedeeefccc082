// probe.cc: `cage --probe ...`, the Windows self-test's probe (it runs inside the sandbox, as the
// restricted token). One attempt, reported by exit status: 0 done, 1 denied (ERROR_ACCESS_DENIED,
// WSAEACCES), 2 anything else; the error goes to stderr. Never read a denial from another tool's status.
#include "windows/self_test.h"
#include "windows/win32.h"
// After <windows.h>.
#include <winsock2.h>
#include <ws2tcpip.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace cage::win {

namespace {

int report(const char* what, DWORD code) {
  std::fprintf(stderr, "cage-probe: %s: %s\n", what, describe(code).c_str());
  return code == ERROR_ACCESS_DENIED || code == WSAEACCES ? 1 : 2;
}

int probe_write(const std::string& path) {
  HANDLE h = ::CreateFileW(wide(path).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL,
                           nullptr);
  if (h == INVALID_HANDLE_VALUE) return report("write", ::GetLastError());
  DWORD n = 0;
  BOOL ok = ::WriteFile(h, "ok\n", 3, &n, nullptr);
  DWORD code = ::GetLastError();
  ::CloseHandle(h);
  return ok ? 0 : report("write", code);
}

int probe_read(const std::string& path) {
  HANDLE h = ::CreateFileW(wide(path).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return report("read", ::GetLastError());
  ::CloseHandle(h);
  return 0;
}

// Connects to host:port; with `via_proxy`, to HTTPS_PROXY's port first, asking it for CONNECT host:port.
int probe_connect(const std::string& host, const std::string& port, bool via_proxy) {
  WSADATA wsa;
  if (::WSAStartup(MAKEWORD(2, 2), &wsa) != 0)
    return report("WSAStartup", static_cast<DWORD>(::WSAGetLastError()));
  std::string target_port = port;
  if (via_proxy) {  // "http://127.0.0.1:PORT"
    const char* proxy = std::getenv("HTTPS_PROXY");
    std::string p = proxy ? proxy : "";
    if (p.rfind("http://127.0.0.1:", 0) != 0) {
      std::fprintf(stderr, "cage-probe: HTTPS_PROXY is not cage's proxy: '%s'\n", p.c_str());
      return 2;
    }
    target_port = p.substr(17);
  }
  SOCKET s = ::socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  if (s == INVALID_SOCKET) return report("socket", static_cast<DWORD>(::WSAGetLastError()));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<u_short>(std::atoi(target_port.c_str())));
  if (::inet_pton(AF_INET, via_proxy ? "127.0.0.1" : host.c_str(), &addr.sin_addr) != 1) {
    std::fprintf(stderr, "cage-probe: not an IPv4 address: %s\n", host.c_str());
    return 2;
  }
  if (::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return report("connect", static_cast<DWORD>(::WSAGetLastError()));
  if (via_proxy) {
    std::string req = "CONNECT " + host + ":" + port + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\n\r\n";
    ::send(s, req.data(), static_cast<int>(req.size()), 0);
    char buf[64] = {};
    int n = ::recv(s, buf, sizeof buf - 1, 0);
    std::string reply(buf, n > 0 ? static_cast<size_t>(n) : 0);
    if (reply.find(" 200") == std::string::npos) {
      std::fprintf(stderr, "cage-probe: proxy refused: %s\n", reply.substr(0, reply.find('\r')).c_str());
      return 1;
    }
  }
  ::closesocket(s);
  return 0;
}

}  // namespace

int probe_main(const std::vector<std::string>& args) {
  // args: cage --probe write PATH | read PATH | sleep MS | connect HOST PORT | connect-proxy HOST PORT
  if (args.size() == 4 && args[2] == "write") return probe_write(args[3]);
  if (args.size() == 4 && args[2] == "read") return probe_read(args[3]);
  if (args.size() == 4 && args[2] == "sleep") {  // for --timeout checks
    ::Sleep(static_cast<DWORD>(std::strtoul(args[3].c_str(), nullptr, 10)));
    return 0;
  }
  if (args.size() == 5 && args[2] == "connect") return probe_connect(args[3], args[4], false);
  if (args.size() == 5 && args[2] == "connect-proxy") return probe_connect(args[3], args[4], true);
  std::fprintf(
      stderr,
      "cage --probe: write PATH | read PATH | sleep MS | connect HOST PORT | connect-proxy HOST PORT\n");
  return 2;
}

}  // namespace cage::win
