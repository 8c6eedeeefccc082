// cage's resolver messages (proxy/dns.cc), the synthetic address map and name matching
// (proxy/synthetic.cc): pure code, no sockets.
#include "proxy/dns.h"

#include <gtest/gtest.h>

#include "proxy/synthetic.h"

using namespace cage;
using namespace cage::proxy;

namespace {

// A query as glibc sends it: id, RD, one question, optionally an EDNS OPT record.
std::string query(const std::string& name, uint16_t qtype, uint16_t id = 0x1234, bool opt = false) {
  std::string m = {static_cast<char>(id >> 8), static_cast<char>(id & 0xff), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0,
                   static_cast<char>(opt ? 1 : 0)};
  size_t start = 0;
  while (start <= name.size() && !name.empty()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    m += static_cast<char>(dot - start);
    m += name.substr(start, dot - start);
    start = dot + 1;
  }
  m += '\0';
  m += {static_cast<char>(qtype >> 8), static_cast<char>(qtype & 0xff), 0, 1};
  if (opt) m += std::string("\0\0\x29\x10\0\0\0\0\0\0\0", 11);
  return m;
}

uint16_t u16(const std::string& m, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(m[at]) << 8 | static_cast<uint8_t>(m[at + 1]));
}

policy::NetRule rule(const std::string& text) {
  policy::NetRule r;
  EXPECT_EQ(policy::parse_host_pattern(text, r.pattern), "") << text;
  r.origin = "--net " + text;
  return r;
}

}  // namespace

TEST(Dns, ParsesOneQuestionLowerCased) {
  std::string m = query("Api.GitHub.com", kDnsTypeA, 0xBEEF, true);
  DnsQuery q;
  ASSERT_EQ(parse_dns_query(m, q), DnsParse::ok);
  EXPECT_EQ(q.id, 0xBEEF);
  EXPECT_TRUE(q.recursion_desired);
  EXPECT_EQ(q.name, "api.github.com");
  EXPECT_TRUE(q.name_ok);
  EXPECT_EQ(q.qtype, kDnsTypeA);
  EXPECT_EQ(q.qclass, kDnsClassIN);
  EXPECT_EQ(q.question_end, m.size() - 11);  // the OPT record is not part of the question
}

TEST(Dns, AnswerCarriesTheQuestionVerbatimAndOneARecord) {
  std::string m = query("Api.GitHub.com", kDnsTypeA);
  DnsQuery q;
  ASSERT_EQ(parse_dns_query(m, q), DnsParse::ok);
  std::string r = dns_answer(m, q, DnsRcode::noerror, dns_a_record({198, 18, 0, 1}), 300);
  EXPECT_EQ(u16(r, 0), 0x1234);
  EXPECT_EQ(u16(r, 2) & 0x8000, 0x8000);  // QR
  EXPECT_EQ(u16(r, 2) & 0x000f, 0);       // NOERROR
  EXPECT_EQ(u16(r, 4), 1);
  EXPECT_EQ(u16(r, 6), 1);
  EXPECT_EQ(r.substr(12, q.question_end - 12), m.substr(12, q.question_end - 12));  // case kept (0x20)
  size_t a = q.question_end;
  EXPECT_EQ(u16(r, a), 0xC00C);
  EXPECT_EQ(u16(r, a + 2), kDnsTypeA);
  EXPECT_EQ(u16(r, a + 10), 4);
  EXPECT_EQ(r.substr(a + 12), std::string("\xc6\x12\x00\x01", 4));
}

TEST(Dns, NxdomainAndNodataHaveNoAnswer) {
  std::string m = query("evil.com", kDnsTypeAAAA);
  DnsQuery q;
  ASSERT_EQ(parse_dns_query(m, q), DnsParse::ok);
  std::string nx = dns_answer(m, q, DnsRcode::nxdomain);
  EXPECT_EQ(u16(nx, 2) & 0x000f, 3);
  EXPECT_EQ(u16(nx, 6), 0);
  std::string nodata = dns_answer(m, q, DnsRcode::noerror);
  EXPECT_EQ(u16(nodata, 2) & 0x000f, 0);
  EXPECT_EQ(u16(nodata, 6), 0);
}

TEST(Dns, RefusesMalformedAndIgnoresResponses) {
  DnsQuery q;
  EXPECT_EQ(parse_dns_query("short", q), DnsParse::ignore);
  std::string resp = query("a.com", kDnsTypeA);
  resp[2] = static_cast<char>(0x81);
  EXPECT_EQ(parse_dns_query(resp, q), DnsParse::ignore);  // never answer an answer
  std::string two = query("a.com", kDnsTypeA);
  two[5] = 2;
  EXPECT_EQ(parse_dns_query(two, q), DnsParse::formerr);
  std::string ptr = query("a.com", kDnsTypeA);
  ptr[12] = static_cast<char>(0xC0);  // a compression pointer in the question
  EXPECT_EQ(parse_dns_query(ptr, q), DnsParse::formerr);
  std::string cut = query("a.com", kDnsTypeA);
  cut.resize(cut.size() - 2);
  EXPECT_EQ(parse_dns_query(cut, q), DnsParse::formerr);
  std::string longname(300, 'a');
  for (size_t i = 60; i < longname.size(); i += 61) longname[i] = '.';
  EXPECT_EQ(parse_dns_query(query(longname, kDnsTypeA), q), DnsParse::formerr);
  std::string status = query("a.com", kDnsTypeA);
  status[2] = 0x10;  // opcode 2 (STATUS)
  EXPECT_EQ(parse_dns_query(status, q), DnsParse::notimp);
  EXPECT_EQ(u16(dns_error(status, DnsRcode::notimp), 2) & 0x000f, 4);
}

TEST(Dns, OddLabelBytesMarkTheNameUnusable) {
  DnsQuery q;
  ASSERT_EQ(parse_dns_query(query("a\x01" "b.com", kDnsTypeA), q), DnsParse::ok);
  EXPECT_FALSE(q.name_ok);
  ASSERT_EQ(parse_dns_query(query("_srv.x-y.com", kDnsTypeA), q), DnsParse::ok);
  EXPECT_TRUE(q.name_ok);
}

TEST(Synthetic, OneStableAddressPerNameAndBack) {
  SyntheticMap m;
  auto a = m.assign("api.github.com"), b = m.assign("x.example.com"), a2 = m.assign("api.github.com");
  ASSERT_TRUE(a && b && a2);
  EXPECT_EQ(*a, 0xC6120001u);
  EXPECT_EQ(*b, 0xC6120002u);
  EXPECT_EQ(*a2, *a);
  ASSERT_NE(m.name_of(*b), nullptr);
  EXPECT_EQ(*m.name_of(*b), "x.example.com");
  EXPECT_EQ(m.name_of(0xC6120003u), nullptr);  // in the range, never assigned
  EXPECT_EQ(m.name_of(0x0A000001u), nullptr);
  EXPECT_TRUE(m.contains(0xC613FFFFu));
  EXPECT_FALSE(m.contains(0xC6140000u));
  EXPECT_EQ(ipv4_text(*a), "198.18.0.1");
}

TEST(Dns, ReverseNamesAndPtrRecords) {
  EXPECT_EQ(reverse_ipv4_name("1.0.18.198.in-addr.arpa"), 0xC6120001u);
  EXPECT_EQ(reverse_ipv4_name("255.255.19.198.in-addr.arpa"), 0xC613FFFFu);
  for (const char* bad : {"0.18.198.in-addr.arpa", "01.0.18.198.in-addr.arpa", "256.0.18.198.in-addr.arpa",
                          "1.0.18.198.in-addr.arpa.example", "a.0.18.198.in-addr.arpa", "1..18.198.in-addr.arpa",
                          "1.2.0.18.198.in-addr.arpa", "in-addr.arpa", "1.0.18.198.ip6.arpa"})
    EXPECT_FALSE(reverse_ipv4_name(bad)) << bad;
  EXPECT_TRUE(is_reverse_name("in-addr.arpa"));
  EXPECT_TRUE(is_reverse_name("1.0.18.198.in-addr.arpa"));
  EXPECT_TRUE(is_reverse_name("1.0.0.0.ip6.arpa"));
  EXPECT_FALSE(is_reverse_name("notin-addr.arpa"));
  EXPECT_FALSE(is_reverse_name("example.com"));

  auto ptr = dns_ptr_record("api.example.com");
  ASSERT_TRUE(ptr);
  EXPECT_EQ(ptr->type, kDnsTypePTR);
  EXPECT_EQ(ptr->data, std::string("\3api\7example\3com\0", 17));
  EXPECT_FALSE(dns_ptr_record("a..b"));
  EXPECT_FALSE(dns_ptr_record(std::string(64, 'a') + ".com"));
  std::string m = query("1.0.18.198.in-addr.arpa", kDnsTypePTR);
  DnsQuery q;
  ASSERT_EQ(parse_dns_query(m, q), DnsParse::ok);
  std::string r = dns_answer(m, q, DnsRcode::noerror, ptr);
  EXPECT_EQ(u16(r, 6), 1);
  EXPECT_EQ(u16(r, q.question_end + 2), kDnsTypePTR);
  EXPECT_EQ(u16(r, q.question_end + 10), 17);
  EXPECT_EQ(r.substr(q.question_end + 12), ptr->data);
}

// Issue 19 item 4: an address cage's DNS handed out stands for its name in every protocol.
TEST(Synthetic, AnAddressOfTheRangeStandsForItsName) {
  SyntheticMap m;
  ASSERT_TRUE(m.assign("api.github.com"));
  EXPECT_EQ(unsynthesize(m, "198.18.0.1"), "api.github.com");
  EXPECT_EQ(unsynthesize(m, "::ffff:198.18.0.1"), "api.github.com");  // SOCKS5 IPv6 address type
  EXPECT_EQ(unsynthesize(m, "0:0:0:0:0:ffff:c612:1"), "api.github.com");
  EXPECT_EQ(unsynthesize(m, "198.18.0.2"), std::nullopt);  // in the range, handed out for no name
  EXPECT_EQ(unsynthesize(m, "198.19.255.255"), std::nullopt);
  EXPECT_EQ(unsynthesize(m, "198.20.0.1"), "198.20.0.1");
  EXPECT_EQ(unsynthesize(m, "10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(unsynthesize(m, "example.com"), "example.com");
  EXPECT_EQ(unsynthesize(m, "::1"), "::1");
}

TEST(Synthetic, AFullRangeAssignsNoMore) {
  SyntheticMap m(0x0A000000, 30);  // 4 addresses: .1 and .2 usable
  EXPECT_TRUE(m.assign("a"));
  EXPECT_TRUE(m.assign("b"));
  EXPECT_FALSE(m.assign("c"));
  EXPECT_TRUE(m.assign("a"));  // known names still answer
}

TEST(Synthetic, NamesListedByNameRulesOnly) {
  std::vector<policy::NetRule> rules = {rule("api.github.com:443"), rule("*.example.com:22"),
                                        rule("**.corp.net:80,443"), rule("10.0.0.0/8:5432")};
  EXPECT_TRUE(name_listed(rules, "api.github.com"));
  EXPECT_TRUE(name_listed(rules, "a.example.com"));
  EXPECT_FALSE(name_listed(rules, "a.b.example.com"));
  EXPECT_FALSE(name_listed(rules, "example.com"));
  EXPECT_TRUE(name_listed(rules, "x.y.corp.net"));
  EXPECT_FALSE(name_listed(rules, "github.com"));
  EXPECT_FALSE(name_listed(rules, "10.1.2.3"));
}
