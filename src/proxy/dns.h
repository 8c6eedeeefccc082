// The DNS messages cage's in-sandbox resolver reads and writes (transparent egress, issue #9): one
// question per query, answers of our own (an A record from the synthetic range, NODATA, NXDOMAIN),
// never a forwarded byte. Hand-written, bounded and pure; fuzzed by tests/fuzz/dns_fuzz.cc,
// unit-tested by tests/unit/proxy_dns_test.cc.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cage::proxy {

enum class DnsRcode : uint8_t { noerror = 0, formerr = 1, servfail = 2, nxdomain = 3, notimp = 4, refused = 5 };

inline constexpr uint16_t kDnsTypeA = 1, kDnsTypeAAAA = 28, kDnsClassIN = 1;

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

// An answer to a parsed query: the question echoed, then `a` as one A record when given.
std::string dns_answer(std::string_view msg, const DnsQuery& q, DnsRcode rcode,
                       const std::optional<std::array<uint8_t, 4>>& a = std::nullopt, uint32_t ttl = 300);
// An answer to a query whose question could not be parsed: header only (needs the 12-byte header).
std::string dns_error(std::string_view msg, DnsRcode rcode);

}  // namespace cage::proxy
