// The DNS messages cage's in-sandbox resolver reads and writes (transparent egress, issue #9): one
// question per query, answers of our own (an A record from the synthetic range, the PTR record of
// one, NODATA, NXDOMAIN), never a forwarded byte. Hand-written, bounded and pure; fuzzed by tests/fuzz/dns_fuzz.cc,
// unit-tested by tests/unit/proxy_dns_test.cc.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cage::proxy {

enum class DnsRcode : uint8_t { noerror = 0, formerr = 1, servfail = 2, nxdomain = 3, notimp = 4, refused = 5 };

inline constexpr uint16_t kDnsTypeA = 1, kDnsTypePTR = 12, kDnsTypeAAAA = 28, kDnsClassIN = 1;

enum class DnsParse {
  ok,       // one well-formed question
  ignore,   // not a query (a response, or shorter than a header): drop it, send nothing
  formerr,  // a header but a malformed question: answer FORMERR
  notimp,   // an opcode other than QUERY: answer NOTIMP
};

struct DnsQuery {
  uint16_t id = 0;
  bool recursion_desired = false;
  std::string name;        // lower-case, no trailing dot; empty for the root
  bool name_ok = true;     // false when a label holds anything but letters, digits, '-' or '_'
  uint16_t qtype = 0, qclass = 0;
  size_t question_end = 0; // offset just past QTYPE/QCLASS: the question is echoed verbatim
};

DnsParse parse_dns_query(std::string_view msg, DnsQuery& out);

// One answer record for the question's name: its type and its RDATA in wire form.
struct DnsRecord {
  uint16_t type = kDnsTypeA;
  std::string data;
};
DnsRecord dns_a_record(const std::array<uint8_t, 4>& a);
// A PTR record naming `name` (dotted, no trailing dot); nullopt when it is no valid DNS name.
std::optional<DnsRecord> dns_ptr_record(std::string_view name);
// The IPv4 address (host byte order) a reverse name "d.c.b.a.in-addr.arpa" stands for; nullopt
// for any other name.
std::optional<uint32_t> reverse_ipv4_name(std::string_view name);
// Whether `name` lies in a reverse-mapping zone (in-addr.arpa, ip6.arpa): no --net rule names one.
bool is_reverse_name(std::string_view name);

// An answer to a parsed query: the question echoed, then `rr` as one record when given.
std::string dns_answer(std::string_view msg, const DnsQuery& q, DnsRcode rcode,
                       const std::optional<DnsRecord>& rr = std::nullopt, uint32_t ttl = 300);
// An answer to a query whose question could not be parsed: header only (needs the 12-byte header).
std::string dns_error(std::string_view msg, DnsRcode rcode);

}  // namespace cage::proxy
