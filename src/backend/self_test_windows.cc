// The probe's TCP client on Windows (Winsock), for `cage --self-test-probe connect|proxy`.
#include <winsock2.h>
#include <ws2tcpip.h>

#include "selftest/checks.h"

namespace cage::selftest {

int probe_tcp(const std::string& host, uint16_t port, const std::string& out, const std::string& until,
              std::string& in) {
  WSADATA wsa;
  if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) return EINVAL;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) return EINVAL;  // the checks use IPv4 literals
  SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  if (s == INVALID_SOCKET) return WSAGetLastError();
  int result = 0;
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    result = WSAGetLastError();
  } else {
    for (size_t off = 0; off < out.size() && result == 0;) {
      int n = send(s, out.data() + off, static_cast<int>(out.size() - off), 0);
      if (n < 0) result = WSAGetLastError();
      else off += static_cast<size_t>(n);
    }
    DWORD timeout_ms = 10'000;
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, reinterpret_cast<const char*>(&timeout_ms), sizeof timeout_ms);
    while (result == 0 && !until.empty() && in.find(until) == std::string::npos && in.size() < 4096) {
      char buf[1024];
      int n = recv(s, buf, sizeof buf, 0);
      if (n < 0) result = WSAGetLastError();
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
  }
  closesocket(s);
  return result;
}

}  // namespace cage::selftest
