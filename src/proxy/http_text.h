// Small text helpers shared by the request (http_connect.cc) and response (http_response.cc)
// parsers: RFC 9110 tokens, optional whitespace, comma lists. Pure.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cage::proxy::http_text {

inline std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

inline bool is_tchar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}
inline bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "a, B ,,c" -> {"a", "b", "c"}: lower-case, empty elements dropped (RFC 9110 5.6.1).
inline std::vector<std::string> comma_tokens(std::string_view v) {
  std::vector<std::string> out;
  while (!v.empty()) {
    size_t c = v.find(',');
    std::string_view t = trim(v.substr(0, c));
    if (!t.empty()) out.push_back(lower(t));
    if (c == std::string_view::npos) break;
    v.remove_prefix(c + 1);
  }
  return out;
}

// 1*DIGIT of at most 15 digits (no sign, no list, no space): a Content-Length value.
inline bool parse_length(std::string_view s, uint64_t& v) {
  if (s.empty() || s.size() > 15 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  return true;
}

}  // namespace cage::proxy::http_text
