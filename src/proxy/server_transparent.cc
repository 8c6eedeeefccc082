// Transparent egress in the proxy loop (issue #9). cage's init binds, inside the sandbox's network
// namespace, one listener per allowed port and a UDP socket for DNS, and passes them over the same
// channel the shim uses. The supervisor answers DNS itself (allowed names get a synthetic address,
// a synthetic address's reverse name its name, every other name NXDOMAIN) and accepts on the
// listeners directly: getsockname on the accepted socket gives the address the workload dialled,
// which decide() maps back to the name as for the proxy's own protocols (issue 19 item 4), and from
// there the connection takes the proxy's own path (decide -> resolve -> address check -> connect ->
// splice relay), with the same allowlist and the same events. Proven by
// tests/unit/proxy_transparent_test.cc and tests/integration/net_{transparent_*,dns_answers}.sh.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "proxy/dns.h"
#include "proxy/server.h"
#include "proxy/socket_compat.h"

namespace cage::proxy {

void Server::enable_transparent(SyntheticMap names) {
  transparent_ = true;
  synthetic_ = std::move(names);
}

void Server::add_aux(int fd, int side) {
  UniqueFd s(fd);
  int type = 0, listening = 0;
  socklen_t len = sizeof type;
  getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len);
  len = sizeof listening;
  getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
  if (side == 2 ? (type != SOCK_STREAM || !listening) : (type != SOCK_DGRAM || dns_fd_ >= 0)) return;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  uint64_t id = next_id_++;
  if (poller_.add(fd, id << 2 | static_cast<uint64_t>(side)) != 0) return;
  if (side == 3) dns_fd_ = fd;
  aux_.emplace(id, std::move(s));
  if (side == 2) on_listener(fd);  // connections may already be waiting
  else on_dns();
}

bool Server::destination_of(int fd, Destination& d) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 || ss.ss_family != AF_INET) return false;
  const auto& sin = reinterpret_cast<const sockaddr_in&>(ss);
  // The address as dialled: decide() maps a synthetic one back to its name, and the allowlist reads
  // 127.0.0.1 as `localhost` (allowlist.cc), as for every other protocol.
  d.host = ipv4_text(ntohl(sin.sin_addr.s_addr));
  d.port = ntohs(sin.sin_port);
  return true;
}

void Server::on_listener(int fd) {
  while (true) {
    int c = accept_nonblocking(fd);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN, or out of fds (the next connection's edge retries)
    }
    Destination d;
    if (!destination_of(c, d)) {
      close(c);
      continue;
    }
    accept_client(c, &d);
  }
}

void Server::emit_dns(const std::string& name, Decision d, const std::string& reason) {
  if (!sink_) return;
  NetEvent e;
  e.protocol = "dns";
  e.host = name;
  e.port = 53;
  e.decision = d;
  e.reason = reason;
  sink_(e);
}

// The answer to one well-formed question. Only an address query (A, AAAA) for a name a rule could
// list is reported as a denial: SRV, TXT, PTR and the rest name nothing a --net rule grants (apt
// asks for _http._tcp.HOST SRV records on every run), so they are answered, never reported.
std::string Server::dns_reply(std::string_view msg, const DnsQuery& q) {
  const bool in = q.qclass == kDnsClassIN;
  if (is_reverse_name(q.name)) {  // the name a synthetic address was handed out for, else NXDOMAIN
    auto addr = reverse_ipv4_name(q.name);
    const std::string* name = addr ? synthetic_.name_of(*addr) : nullptr;
    if (!name || !in) return dns_answer(msg, q, DnsRcode::nxdomain);
    if (q.qtype != kDnsTypePTR) return dns_answer(msg, q, DnsRcode::noerror);
    return dns_answer(msg, q, DnsRcode::noerror, dns_ptr_record(*name));
  }
  bool listed = q.name_ok && !q.name.empty() && name_listed(allow_.rules(), q.name);
  if (!listed) {
    bool address = in && (q.qtype == kDnsTypeA || q.qtype == kDnsTypeAAAA);
    // Reported once per name: a resolver asks for A and AAAA, often twice.
    if (address && q.name_ok && !q.name.empty() && dns_reported_.size() < 4096 && dns_reported_.insert(q.name).second)
      emit_dns(q.name, Decision::denied,
               "cage: " + q.name + " is not in the --net allowlist (add --net " + q.name + ":PORT)");
    return dns_answer(msg, q, DnsRcode::nxdomain);
  }
  if (!in || q.qtype != kDnsTypeA) return dns_answer(msg, q, DnsRcode::noerror);  // AAAA and the rest: NODATA
  size_t before = synthetic_.size();
  auto addr = synthetic_.assign(q.name);
  if (!addr) return dns_answer(msg, q, DnsRcode::servfail);
  if (synthetic_.size() > before) emit_dns(q.name, Decision::allowed, "synthetic address " + ipv4_text(*addr));
  return dns_answer(msg, q, DnsRcode::noerror,
                    dns_a_record({static_cast<uint8_t>(*addr >> 24), static_cast<uint8_t>(*addr >> 16),
                                  static_cast<uint8_t>(*addr >> 8), static_cast<uint8_t>(*addr)}));
}

void Server::on_dns() {
  char buf[4096];
  while (dns_fd_ >= 0) {
    sockaddr_storage from{};
    socklen_t flen = sizeof from;
    ssize_t n = recvfrom(dns_fd_, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &flen);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;
    std::string_view msg(buf, static_cast<size_t>(n));
    DnsQuery q;
    std::string reply;
    switch (parse_dns_query(msg, q)) {
      case DnsParse::ignore: continue;
      case DnsParse::formerr: reply = dns_error(msg, DnsRcode::formerr); break;
      case DnsParse::notimp: reply = dns_error(msg, DnsRcode::notimp); break;
      case DnsParse::ok: reply = dns_reply(msg, q); break;
    }
    if (!reply.empty())
      sendto(dns_fd_, reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&from),
             flen);
  }
}

}  // namespace cage::proxy
