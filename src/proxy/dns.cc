// DNS query parsing and answer encoding for cage's resolver (RFC 1035 section 4). A query carries
// no compression pointers in its question (RFC 1035 allows them only for names seen earlier, and a
// question is the first name), so one is refused as FORMERR rather than followed.
#include "proxy/dns.h"

#include <algorithm>

namespace cage::proxy {

namespace {

constexpr size_t kHeader = 12;
constexpr uint16_t kQr = 0x8000, kAa = 0x0400, kRd = 0x0100, kRa = 0x0080;

uint16_t get16(std::string_view m, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(m[at]) << 8 | static_cast<uint8_t>(m[at + 1]));
}
void put16(std::string& s, uint16_t v) {
  s += static_cast<char>(v >> 8);
  s += static_cast<char>(v & 0xff);
}
void put32(std::string& s, uint32_t v) {
  put16(s, static_cast<uint16_t>(v >> 16));
  put16(s, static_cast<uint16_t>(v & 0xffff));
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

void header(std::string& s, uint16_t id, bool rd, DnsRcode rcode, uint16_t qd, uint16_t an) {
  put16(s, id);
  put16(s, static_cast<uint16_t>(kQr | kAa | (rd ? kRd : 0) | kRa | static_cast<uint16_t>(rcode)));
  put16(s, qd);
  put16(s, an);
  put16(s, 0);
  put16(s, 0);
}

}  // namespace

DnsParse parse_dns_query(std::string_view m, DnsQuery& q) {
  q = DnsQuery{};
  if (m.size() < kHeader) return DnsParse::ignore;
  uint16_t flags = get16(m, 2);
  if (flags & kQr) return DnsParse::ignore;  // a response: never answer one (no reflection loops)
  q.id = get16(m, 0);
  q.recursion_desired = flags & kRd;
  if (((flags >> 11) & 0xf) != 0) return DnsParse::notimp;
  if (get16(m, 4) != 1) return DnsParse::formerr;
  size_t at = kHeader, total = 0;
  while (true) {
    if (at >= m.size()) return DnsParse::formerr;
    auto len = static_cast<uint8_t>(m[at++]);
    if (len == 0) break;
    if (len > 63) return DnsParse::formerr;  // 0xC0: a pointer; 0x40/0x80: reserved label types
    if (at + len > m.size()) return DnsParse::formerr;
    total += len + 1u;
    if (total > 254) return DnsParse::formerr;  // 255 octets with the root label
    if (!q.name.empty()) q.name += '.';
    for (size_t i = 0; i < len; ++i) {
      char c = m[at + i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (!name_char(c)) q.name_ok = false;
      q.name += c;
    }
    at += len;
  }
  if (at + 4 > m.size()) return DnsParse::formerr;
  q.qtype = get16(m, at);
  q.qclass = get16(m, at + 2);
  q.question_end = at + 4;
  return DnsParse::ok;
}

DnsRecord dns_a_record(const std::array<uint8_t, 4>& a) {
  return DnsRecord{kDnsTypeA, std::string(reinterpret_cast<const char*>(a.data()), 4)};
}

std::optional<DnsRecord> dns_ptr_record(std::string_view name) {
  DnsRecord r{kDnsTypePTR, {}};
  size_t start = 0;
  while (start < name.size()) {
    size_t dot = std::min(name.find('.', start), name.size());
    size_t len = dot - start;
    if (len == 0 || len > 63) return std::nullopt;
    r.data += static_cast<char>(len);
    r.data.append(name.substr(start, len));
    start = dot + 1;
  }
  r.data += '\0';
  if (r.data.size() > 255) return std::nullopt;  // RFC 1035 2.3.4
  return r;
}

bool is_reverse_name(std::string_view n) {
  auto under = [&](std::string_view zone) {
    return n == zone || (n.size() > zone.size() && n.substr(n.size() - zone.size()) == zone &&
                         n[n.size() - zone.size() - 1] == '.');
  };
  return under("in-addr.arpa") || under("ip6.arpa");
}

std::optional<uint32_t> reverse_ipv4_name(std::string_view n) {
  constexpr std::string_view kZone = ".in-addr.arpa";
  if (n.size() <= kZone.size() || n.substr(n.size() - kZone.size()) != kZone) return std::nullopt;
  n.remove_suffix(kZone.size());
  uint32_t addr = 0;
  for (int i = 0; i < 4; ++i) {  // the least significant octet comes first
    size_t dot = i < 3 ? n.find('.') : n.size();
    if (dot == std::string_view::npos || dot == 0 || dot > 3 || (dot > 1 && n[0] == '0')) return std::nullopt;
    uint32_t v = 0;
    for (char c : n.substr(0, dot)) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    if (v > 255) return std::nullopt;
    addr |= v << (8 * i);
    n.remove_prefix(i < 3 ? dot + 1 : dot);
  }
  return addr;
}

std::string dns_answer(std::string_view m, const DnsQuery& q, DnsRcode rcode, const std::optional<DnsRecord>& rr,
                       uint32_t ttl) {
  std::string s;
  s.reserve(q.question_end + 12 + (rr ? rr->data.size() : 0));
  header(s, q.id, q.recursion_desired, rcode, 1, rr ? 1 : 0);
  s.append(m.substr(kHeader, q.question_end - kHeader));  // the question as asked (0x20 case kept)
  if (rr) {
    put16(s, 0xC000 | kHeader);  // the name: a pointer to the question's
    put16(s, rr->type);
    put16(s, kDnsClassIN);
    put32(s, ttl);
    put16(s, static_cast<uint16_t>(rr->data.size()));
    s.append(rr->data);
  }
  return s;
}

std::string dns_error(std::string_view m, DnsRcode rcode) {
  std::string s;
  if (m.size() < kHeader) return s;
  header(s, get16(m, 0), get16(m, 2) & kRd, rcode, 0, 0);
  return s;
}

}  // namespace cage::proxy
