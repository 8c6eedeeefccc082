// libFuzzer: the [exec] run matcher. Input: NUL-separated words; the first three are the pattern
// ("{url}", "{path}", "{arg}" or literals), the rest the command line. A pattern that parses never
// crashes the matcher, and a literal-only pattern always matches itself.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "policy/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> ws(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) ws.emplace_back();
    else ws.back() += static_cast<char>(data[i]);
  }
  const size_t n = ws.size() < 3 ? ws.size() : 3;
  std::vector<cage::policy::Value> pat;
  for (size_t i = 0; i < n; ++i) pat.push_back(cage::policy::Value{ws[i], "fuzz", "/"});
  auto p = cage::policy::parse_argv_pattern(pat);
  if (!p) return 0;
  std::vector<std::string> argv(ws.begin() + static_cast<long>(n), ws.end());
  (void)cage::policy::match_argv(*p, argv);
  bool literal = true;
  std::vector<std::string> self;
  for (const auto& w : p->words) literal = literal && w.kind == cage::policy::ArgvPattern::Kind::literal, self.push_back(w.text);
  if (literal && !p->words.empty() && !cage::policy::match_argv(*p, self)) __builtin_trap();
  return 0;
}
