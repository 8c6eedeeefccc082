// The D-Bus client of systemd_scope.cc: StartTransientUnit is decoded by an independent reader
// written from the D-Bus specification (alignment, zero padding, array lengths, signature), and
// the reply/signal parser is fed hand-built messages, truncated ones and lying lengths.
#include <gtest/gtest.h>

#include <map>

#include "linux/systemd_scope.h"

namespace cage::testing {
namespace {

using lx::dbus::Message;

// A reader for the little-endian wire format that walks a complete signature recursively.
struct Decode {
  const std::string& b;
  size_t pos = 0;
  void align(size_t n) {
    while (pos % n) {
      if (pos >= b.size() || b[pos] != 0) throw std::runtime_error("bad padding at " + std::to_string(pos));
      ++pos;
    }
  }
  uint64_t num(size_t n) {
    align(n);
    if (pos + n > b.size()) throw std::runtime_error("short");
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(b[pos + i])) << (8 * i);
    pos += n;
    return v;
  }
  std::string text(size_t n) {
    if (pos + n + 1 > b.size() || b[pos + n] != 0) throw std::runtime_error("bad string");
    std::string s = b.substr(pos, n);
    pos += n + 1;
    return s;
  }
  // One complete type at sig[i]; returns its printed value and advances i past it.
  std::string value(const std::string& sig, size_t& i) {
    char c = sig[i++];
    switch (c) {
      case 'y': return std::to_string(num(1));
      case 'b': {
        auto v = num(4);
        if (v > 1) throw std::runtime_error("bad bool");
        return v ? "true" : "false";
      }
      case 'u': return std::to_string(num(4));
      case 't': return std::to_string(num(8));
      case 's': case 'o': return text(num(4));
      case 'g': return text(num(1));
      case 'v': {
        std::string inner = text(num(1));
        size_t j = 0;
        auto v = value(inner, j);
        if (j != inner.size()) throw std::runtime_error("variant holds more than one type");
        return inner + ":" + v;
      }
      case 'a': {
        size_t len = num(4), elem = i;
        char e = sig[elem];
        align(e == '(' || e == '{' || e == 't' ? 8 : e == 'u' || e == 'b' || e == 's' || e == 'o' ? 4 : 1);
        size_t end = pos + len;
        std::string out = "[";
        size_t after = elem;
        if (pos == end) skip(sig, after);
        while (pos < end) { after = elem; out += value(sig, after) + ","; }
        if (pos != end) throw std::runtime_error("array length mismatch");
        i = after;
        return out + "]";
      }
      case '(': {
        align(8);
        std::string out = "(";
        while (sig[i] != ')') out += value(sig, i) + ";";
        ++i;
        return out + ")";
      }
      default: throw std::runtime_error(std::string("type ") + c);
    }
  }
  static void skip(const std::string& sig, size_t& i) {
    char c = sig[i++];
    if (c == 'a') skip(sig, i);
    else if (c == '(') { while (sig[i] != ')') skip(sig, i); ++i; }
  }
};

TEST(SystemdScope, StartTransientUnitDecodesPerTheSpecification) {
  std::vector<lx::ScopeProperty> props = {{"MemoryMax", 104857600, "--memory 100M"}, {"TasksMax", 64, "--pids 64"}};
  std::string m = lx::dbus::start_transient_unit(7, "cage-42.scope", {4242, 4243}, props);
  Decode d{m};
  EXPECT_EQ(d.num(1), uint64_t('l'));
  EXPECT_EQ(d.num(1), 1u);  // method call
  d.num(1);
  EXPECT_EQ(d.num(1), 1u);  // protocol version
  uint64_t body_len = d.num(4);
  EXPECT_EQ(d.num(4), 7u);
  size_t i = 0;
  std::string fields = d.value("a(yv)", i);
  EXPECT_NE(fields.find("(1;o:/org/freedesktop/systemd1;)"), std::string::npos) << fields;
  EXPECT_NE(fields.find("(3;s:StartTransientUnit;)"), std::string::npos) << fields;
  EXPECT_NE(fields.find("(8;g:ssa(sv)a(sa(sv));)"), std::string::npos) << fields;
  d.align(8);
  ASSERT_EQ(m.size() - d.pos, body_len);
  std::string body = m.substr(d.pos);
  Decode bd{body};
  std::string sig = "ssa(sv)a(sa(sv))";
  i = 0;
  EXPECT_EQ(bd.value(sig, i), "cage-42.scope");
  EXPECT_EQ(bd.value(sig, i), "fail");
  std::string p = bd.value(sig, i);
  EXPECT_NE(p.find("(PIDs;au:[4242,4243,];)"), std::string::npos) << p;
  EXPECT_NE(p.find("(Delegate;b:true;)"), std::string::npos) << p;
  EXPECT_NE(p.find("(MemoryMax;t:104857600;)"), std::string::npos) << p;
  EXPECT_NE(p.find("(TasksMax;t:64;)"), std::string::npos) << p;
  EXPECT_NE(p.find("(CollectMode;s:inactive-or-failed;)"), std::string::npos) << p;
  EXPECT_EQ(bd.value(sig, i), "[]");
  EXPECT_EQ(i, sig.size());
  EXPECT_EQ(bd.pos, body.size());
}

TEST(SystemdScope, SaslExternalSendsTheUidAsHexDigits) {
  EXPECT_EQ(lx::dbus::sasl_external(1000), "AUTH EXTERNAL 31303030\r\n");
  EXPECT_EQ(lx::dbus::sasl_external(0), "AUTH EXTERNAL 30\r\n");
}

// A little-endian message with the given header fields and body, built by hand.
std::string msg(uint8_t type, uint32_t serial, const std::vector<std::pair<uint8_t, std::pair<char, std::string>>>& fields,
                const std::string& body) {
  std::string f;
  auto pad = [](std::string& s, size_t n) { while (s.size() % n) s.push_back('\0'); };
  auto u32 = [&](std::string& s, uint32_t v) { pad(s, 4); for (int k = 0; k < 4; ++k) s.push_back(char(v >> (8 * k))); };
  for (const auto& [code, tv] : fields) {
    pad(f, 8);
    f.push_back(char(code));
    f += std::string("\1") + tv.first + '\0';
    if (tv.first == 'u') {
      u32(f, uint32_t(std::stoul(tv.second)));
    } else if (tv.first == 'g') {
      f.push_back(char(tv.second.size()));
      f += tv.second + '\0';
    } else {
      u32(f, uint32_t(tv.second.size()));
      f += tv.second + '\0';
    }
  }
  std::string h = {'l', char(type), 0, 1};
  u32(h, uint32_t(body.size()));
  u32(h, serial);
  u32(h, uint32_t(f.size()));
  h += f;
  pad(h, 8);
  return h + body;
}

std::string str_arg(std::string& body, const std::string& s) {
  while (body.size() % 4) body.push_back('\0');
  for (int k = 0; k < 4; ++k) body.push_back(char(uint32_t(s.size()) >> (8 * k)));
  return body += s + '\0';
}

TEST(SystemdScope, ParsesAMethodReturnWithTheJobPath) {
  std::string body;
  str_arg(body, "/org/freedesktop/systemd1/job/17");
  std::string m = msg(2, 5, {{5, {'u', "1"}}, {8, {'g', "o"}}}, body);
  Message out;
  ASSERT_EQ(lx::dbus::parse_message(m, out), long(m.size()));
  EXPECT_EQ(out.type, 2);
  EXPECT_EQ(out.reply_serial, 1u);
  ASSERT_EQ(out.args.size(), 1u);
  EXPECT_EQ(out.args[0], "/org/freedesktop/systemd1/job/17");
}

TEST(SystemdScope, ParsesJobRemovedAndAnErrorAndNeedsWholeMessages) {
  std::string body = {7, 0, 0, 0};
  str_arg(body, "/org/freedesktop/systemd1/job/7");
  str_arg(body, "cage-1.scope");
  str_arg(body, "done");
  std::string sig = msg(4, 9, {{1, {'o', "/org/freedesktop/systemd1"}}, {2, {'s', "org.freedesktop.systemd1.Manager"}},
                               {3, {'s', "JobRemoved"}}, {8, {'g', "uoss"}}}, body);
  std::string eb;
  str_arg(eb, "Unit cage-1.scope already exists.");
  std::string err = msg(3, 10, {{4, {'s', "org.freedesktop.systemd1.UnitExists"}}, {5, {'u', "1"}}, {8, {'g', "s"}}}, eb);
  std::string both = sig + err;
  Message out;
  long n = lx::dbus::parse_message(both, out);
  ASSERT_EQ(n, long(sig.size()));
  EXPECT_EQ(out.member, "JobRemoved");
  EXPECT_EQ(out.args, (std::vector<std::string>{"7", "/org/freedesktop/systemd1/job/7", "cage-1.scope", "done"}));
  ASSERT_EQ(lx::dbus::parse_message(std::string_view(both).substr(size_t(n)), out), long(err.size()));
  EXPECT_EQ(out.error_name, "org.freedesktop.systemd1.UnitExists");
  EXPECT_EQ(out.args.at(0), "Unit cage-1.scope already exists.");
  for (size_t cut = 0; cut < sig.size(); ++cut)  // every prefix: wait for more, never read past it
    EXPECT_EQ(lx::dbus::parse_message(std::string_view(sig).substr(0, cut), out), 0) << cut;
}

TEST(SystemdScope, RejectsLyingLengthsBadPaddingAndOversizedMessages) {
  std::string body;
  str_arg(body, "/j/1");
  std::string good = msg(2, 5, {{5, {'u', "1"}}, {8, {'g', "o"}}}, body);
  Message out;
  std::string liar = good;
  liar[good.size() - body.size()] = char(200);  // the string claims more bytes than the body has
  EXPECT_EQ(lx::dbus::parse_message(liar, out), -1);
  std::string pad = msg(2, 5, {{8, {'g', "o"}}, {5, {'u', "1"}}}, body);
  ASSERT_EQ(lx::dbus::parse_message(pad, out), long(pad.size()));
  pad[23] = 'x';  // the padding before the second header field must be zero
  EXPECT_EQ(lx::dbus::parse_message(pad, out), -1);
  std::string big = good;
  big[4] = 0, big[5] = 0, big[6] = 0x20, big[7] = 0;  // body length 2 MiB: refused before reading
  EXPECT_EQ(lx::dbus::parse_message(big, out), -1);
  std::string endian = good;
  endian[0] = 'x';
  EXPECT_EQ(lx::dbus::parse_message(endian, out), -1);
  std::string zero_serial = msg(2, 0, {{5, {'u', "1"}}}, "");
  EXPECT_EQ(lx::dbus::parse_message(zero_serial, out), -1);
  std::string odd_field = msg(2, 5, {{5, {'u', "1"}}}, "");
  odd_field[17] = 1, odd_field[18] = 'x';  // a header field of a type cage does not read
  EXPECT_EQ(lx::dbus::parse_message(odd_field, out), -1);
}

}  // namespace
}  // namespace cage::testing
