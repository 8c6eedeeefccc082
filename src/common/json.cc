// JSON and terminal text for names cage did not choose (see json.h). Tested by tests/unit/report_test.cc (AuditJson)
// and tests/integration/net_invalid_names.sh (a host name with 0xff and ESC through the proxy).
#include "common/json.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

namespace cage {

namespace {

// Makes every key and string of the tree valid UTF-8 in place (toml++ would print an invalid byte as
// \u00XX, i.e. as a Latin-1 character, where the audit log writes U+FFFD: one rule for both).
void sanitize(toml::node& n) {
  if (auto* str = n.as_string()) {
    str->get() = valid_utf8(str->get());
  } else if (auto* arr = n.as_array()) {
    for (auto& e : *arr) sanitize(e);
  } else if (auto* t = n.as_table()) {
    std::vector<std::string> bad;
    for (auto& [k, v] : *t) {
      sanitize(v);
      if (valid_utf8(k.str()) != k.str()) bad.emplace_back(k.str());
    }
    for (const auto& k : bad) {
      toml::node_view<toml::node> v = (*t)[k];
      if (auto* sub = v.node()) {
        toml::table holder;
        holder.insert_or_assign(valid_utf8(k), std::move(*sub));
        t->erase(k);
        for (auto& [hk, hv] : holder) t->insert_or_assign(hk, std::move(hv));
      }
    }
  }
}

// toml++ escapes a code point above U+FFFF as \UXXXXXXXX, which JSON does not have: JSON spells it
// as a UTF-16 surrogate pair (RFC 8259 section 7). Outside strings the output holds no backslash.
std::string json_astral_escapes(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\' || i + 1 >= in.size()) {
      out += in[i];
      continue;
    }
    if (in[i + 1] == 'U' && i + 10 <= in.size()) {
      unsigned long cp = std::stoul(in.substr(i + 2, 8), nullptr, 16) - 0x10000;
      char buf[32];
      std::snprintf(buf, sizeof buf, "\\u%04lX\\u%04lX", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      out += buf;
      i += 9;
      continue;
    }
    out += in[i];
    out += in[++i];
  }
  return out;
}

}  // namespace

std::string to_json(const toml::table& t) {
  toml::table copy = t;
  sanitize(copy);
  std::ostringstream out;
  out << toml::json_formatter{copy, toml::format_flags::quote_dates_and_times};
  return json_astral_escapes(out.str());
}

std::string to_json_line(const toml::table& t) {
  std::string s = to_json(t);
  // Strings escape their own newlines (\n), so every newline byte left is the formatter's layout.
  s.erase(std::remove(s.begin(), s.end(), '\n'), s.end());
  return s;
}

long next_code_point(std::string_view s, size_t& i) {
  auto b = [&s](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return ++i, c;
  size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return ++i, -1;
  long cp = c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return ++i, -1;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  const long min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return ++i, -1;
  i += len;
  return cp;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    if (next_code_point(s, i) < 0) out += "\xef\xbf\xbd";
    else out.append(s.substr(start, i - start));
  }
  return out;
}

bool is_terminal_control(long cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

std::string printable(std::string_view s) {
  std::string out;
  char buf[32];
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    long cp = next_code_point(s, i);
    if (cp < 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[start]));
      out += buf;
    } else if (is_terminal_control(cp)) {
      std::snprintf(buf, sizeof buf, cp <= 0xff ? "\\x%02lx" : "\\u{%04lx}", cp);
      out += buf;
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  return out;
}

}  // namespace cage
