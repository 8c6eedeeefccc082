// The workload's environment: empty but for a small safe set, plus what --env passes through and
// --setenv sets, minus --unsetenv. Nothing else from the caller's environment reaches the workload.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace cage::policy {

// Passed through from the caller when set: terminal, locale and time zone; nothing that can carry
// a secret or change how a program loads (no LD_*, no *_PROXY, no tokens).
const char* const kDefaultPassedEnv[] = {"PATH", "TERM", "COLORTERM", "LANG", "LANGUAGE", "LC_*", "TZ",
                                         "NO_COLOR", "COLUMNS", "LINES", nullptr};

bool env_glob_match(const std::string& pattern, const std::string& name) {
  // '*' matches any run of characters, '?' one character; nothing else is special.
  size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

std::string folded(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<std::string> build_environment(const EnvPolicy& env,
                                           const std::vector<std::pair<std::string, std::string>>& host,
                                           const std::vector<std::pair<std::string, std::string>>& forced,
                                           const char* const* passed, bool fold_case) {
  auto key = [fold_case](const std::string& name) { return fold_case ? folded(name) : name; };
  auto match = [&](const std::string& pattern, const std::string& name) {
    return env_glob_match(key(pattern), key(name));
  };
  std::vector<std::pair<std::string, std::string>> out;
  auto put = [&](const std::string& k, const std::string& v) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& kv) { return key(kv.first) == key(k); });
    if (it != out.end())
      it->second = v;  // the first spelling of the name stays (Windows' "Path")
    else
      out.emplace_back(k, v);
  };
  auto is_passed = [&](const std::string& name) {
    for (const char* const* d = passed; *d; ++d)
      if (match(*d, name)) return true;
    return std::any_of(env.pass.begin(), env.pass.end(), [&](const std::string& p) { return match(p, name); });
  };
  for (const auto& [k, v] : host)
    if (is_passed(k)) put(k, v);
  for (const auto& [k, v] : forced) put(k, v);
  for (const auto& [k, v] : env.set) put(k, v);
  for (const auto& u : env.unset)
    out.erase(std::remove_if(out.begin(), out.end(), [&](const auto& kv) { return match(u, kv.first); }), out.end());
  std::vector<std::string> flat;
  flat.reserve(out.size());
  for (const auto& [k, v] : out) flat.push_back(k + "=" + v);
  return flat;
}

}  // namespace cage::policy
