// [exec] run: a profile pins the shape of the command line (a tool call's `git clone {url}`), and a
// command line that does not match is refused before anything starts. Whole-word placeholders only,
// no regular expressions: each kind is a small check written out here. Pure; tested by
// tests/unit/argv_pattern_test.cc and tests/fuzz/argv_pattern_fuzz.cc.
#include <cctype>
#include <string>

#include "policy/policy.h"

namespace cage::policy {

namespace {

using Kind = ArgvPattern::Kind;

struct Placeholder {
  const char* name;
  Kind kind;
  const char* meaning;
};
const Placeholder kPlaceholders[] = {
    {"{url}", Kind::url, "an https:// URL without user information"},
    {"{path}", Kind::path, "a relative path without '..', not starting with '-', no ':' before its first '/'"},
    {"{arg}", Kind::arg, "one non-empty word that does not start with '-'"},
};

const Placeholder& placeholder_of(Kind k) {
  for (const auto& p : kPlaceholders)
    if (p.kind == k) return p;
  return kPlaceholders[2];
}

bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

// "" when `w` is an https URL cage accepts, else why not. The host is letters, digits, '-', '.' (or a
// bracketed IPv6 literal), an optional :PORT; no user information, which would let
// "https://good.example@evil.example/" read as the first host to a person and as the second to git.
std::string url_problem(const std::string& w) {
  const std::string scheme = "https://";
  if (w.compare(0, scheme.size(), scheme) != 0) return "not an https:// URL";
  for (char c : w)
    if (is_control(c) || c == ' ') return "holds a blank or a control character";
  const size_t start = scheme.size();
  size_t end = w.find_first_of("/?#", start);
  if (end == std::string::npos) end = w.size();
  std::string authority = w.substr(start, end - start);
  if (authority.find('@') != std::string::npos) return "holds user information ('@' before the host)";
  std::string host = authority, port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return "an unclosed IPv6 literal";
    host = authority.substr(1, close - 1);
    port = authority.substr(close + 1);
    if (host.empty() || host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos)
      return "not an IPv6 literal";
  } else {
    size_t colon = authority.find(':');
    if (colon != std::string::npos) host = authority.substr(0, colon), port = authority.substr(colon);
    if (host.empty()) return "no host";
    for (char c : host)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) return "not a host name";
    if (host[0] == '-' || host[0] == '.') return "not a host name";
  }
  if (!port.empty()) {
    const std::string digits = port.substr(1);
    if (port[0] != ':' || digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(digits) == 0 || std::stoul(digits) > 65535)
      return "not a port";
  }
  return "";
}

std::string path_problem(const std::string& w) {
  if (w.empty()) return "empty";
  if (w[0] == '/') return "an absolute path";
  if (w[0] == '-') return "starts with '-' (it would be read as an option)";
  for (char c : w)
    if (is_control(c)) return "holds a control character";
  // git, scp and rsync read "host:path" and "transport::address" (git's ext::) as remote addresses.
  if (w.find(':') < w.find('/')) return "has a ':' before its first '/' (read as host:path by git, scp, rsync)";
  for (size_t i = 0; i <= w.size();) {
    size_t slash = w.find('/', i);
    if (slash == std::string::npos) slash = w.size();
    if (w.compare(i, slash - i, "..") == 0 && slash - i == 2) return "holds a '..' component";
    i = slash + 1;
  }
  return "";
}

std::string problem(Kind k, const std::string& w) {
  switch (k) {
    case Kind::literal: return "";
    case Kind::url: return url_problem(w);
    case Kind::path: return path_problem(w);
    case Kind::arg:
      return w.empty() ? "empty" : w[0] == '-' ? "starts with '-' (it would be read as an option)" : "";
  }
  return "unknown placeholder";
}

std::string shape(const ArgvPattern& p) {
  std::string s;
  for (const auto& w : p.words) s += (s.empty() ? "" : " ") + w.text;
  return s;
}

}  // namespace

Result<ArgvPattern> parse_argv_pattern(const std::vector<Value>& words) {
  ArgvPattern p;
  if (words.empty()) return p;
  p.origin = words.front().origin;
  for (const auto& v : words) {
    const std::string& t = v.text;
    ArgvPattern::Word w{Kind::literal, t};
    if (t.size() >= 2 && t.front() == '{' && t.back() == '}') {
      bool known = false;
      for (const auto& ph : kPlaceholders)
        if (t == ph.name) w.kind = ph.kind, known = true;
      if (!known) return invalid(v.origin + " " + t, "unknown placeholder", "use {url}, {path} or {arg}, each a whole word");
    }
    p.words.push_back(std::move(w));
  }
  if (p.words[0].kind != Kind::literal || p.words[0].text.empty())
    return invalid(p.origin + " " + p.words[0].text, "the first word must name the program",
                   "write the command literally, e.g. run = [\"git\", \"clone\", \"{url}\"]");
  return p;
}

Status match_argv(const ArgvPattern& pattern, const std::vector<std::string>& argv) {
  const std::string remedy = pattern.origin + " allows only: " + shape(pattern);
  for (size_t i = 0; i < pattern.words.size(); ++i) {
    const auto& w = pattern.words[i];
    const std::string input = "COMMAND argument " + std::to_string(i);
    if (i >= argv.size()) return usage(input, "missing: the pinned command line needs " + w.text, remedy);
    if (w.kind == Kind::literal) {
      if (argv[i] != w.text) return usage(input + " '" + argv[i] + "'", "expected '" + w.text + "'", remedy);
      continue;
    }
    if (std::string why = problem(w.kind, argv[i]); !why.empty())
      return usage(input + " '" + argv[i] + "'",
                   "does not match " + w.text + " (" + placeholder_of(w.kind).meaning + "): " + why, remedy);
  }
  if (argv.size() > pattern.words.size())
    return usage("COMMAND argument " + std::to_string(pattern.words.size()) + " '" + argv[pattern.words.size()] + "'",
                 "more arguments than the pinned command line has", remedy);
  return Ok{};
}

}  // namespace cage::policy
