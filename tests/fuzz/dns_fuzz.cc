// libFuzzer: cage's DNS query parser and the answers built from what it parsed. Every answer must
// echo the question exactly and stay within a UDP datagram; a name must be at most 253 characters.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/dns.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cage::proxy;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  DnsQuery q;
  switch (parse_dns_query(in, q)) {
    case DnsParse::ignore: return 0;
    case DnsParse::formerr:
    case DnsParse::notimp:
      if (dns_error(in, DnsRcode::formerr).size() != 12) __builtin_trap();
      return 0;
    case DnsParse::ok: break;
  }
  if (q.question_end > size || q.question_end < 17 || q.name.size() > 253) __builtin_trap();
  std::string a = dns_answer(in, q, DnsRcode::noerror, dns_a_record({198, 18, 0, 1}));
  if (a.size() != q.question_end + 16 || a.size() > 512) __builtin_trap();
  if (a.compare(12, q.question_end - 12, in.substr(12, q.question_end - 12)) != 0) __builtin_trap();
  // A reverse name is read only as four decimal octets, and a PTR record of the name asked for
  // (what a synthetic address answers with) is a valid name that ends the answer.
  if (auto v4 = reverse_ipv4_name(q.name); v4 && !is_reverse_name(q.name)) __builtin_trap();
  if (auto v4 = reverse_ipv4_name(q.name); v4 && q.name != std::to_string(*v4 & 0xff) + "." +
                                                    std::to_string(*v4 >> 8 & 0xff) + "." + std::to_string(*v4 >> 16 & 0xff) +
                                                    "." + std::to_string(*v4 >> 24) + ".in-addr.arpa")
    __builtin_trap();
  if (auto ptr = dns_ptr_record(q.name)) {
    if (ptr->data.size() > 255 || ptr->data.back() != '\0') __builtin_trap();
    std::string p = dns_answer(in, q, DnsRcode::noerror, ptr);
    if (p.size() != q.question_end + 12 + ptr->data.size()) __builtin_trap();
  }
  DnsQuery again;
  std::string asked(in.substr(0, q.question_end));
  if (parse_dns_query(asked, again) != DnsParse::ok || again.name != q.name) __builtin_trap();
  return 0;
}
