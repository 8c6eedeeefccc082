// libFuzzer: macos::compile_sbpl over hostile paths. Input: up to four paths separated by '\n'
// (ro, rw, hide, ro). Every path validate() accepts must come out inside one SBPL string literal:
// the profile reads as balanced s-expressions, each grant appears exactly once as a decoded
// literal/subpath at its canonical path, and no rule other than the generator's own appears.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../unit/sbpl_parse.h"
#include "macos/compile.h"

using namespace cage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  for (size_t i = 0, j; parts.size() < 4 && i <= in.size(); i = j + 1) {
    j = in.find('\n', i);
    if (j == std::string::npos) j = in.size();
    parts.push_back(in.substr(i, j - i));
  }
  policy::Policy p;
  p.cwd = "/Users/ann/proj";
  p.home = "/Users/ann";
  p.argv = {"true"};
  std::vector<policy::Grant>* lists[] = {&p.ro, &p.rw, &p.hide, &p.ro};
  for (size_t k = 0; k < parts.size(); ++k) {
    auto abs = policy::absolute_path(policy::Value{parts[k], "--x", p.cwd}, p.home);  // as validate() does
    if (!abs) continue;
    lists[k]->push_back(policy::Grant{*abs, "--x " + parts[k]});
  }
  macos::MacHostFacts facts;
  facts.kind = [](const std::string& path) {
    return path.size() % 2 ? macos::PathKind::file : macos::PathKind::dir;
  };
  facts.proxy_port = 40000;
  auto profile = macos::compile_sbpl(p, facts);
  if (!profile) __builtin_trap();
  cage::testing::SbplReader reader(*profile);
  auto forms = reader.read_all();
  if (!forms) __builtin_trap();  // unbalanced or an unterminated string: a path broke out
  for (const auto& f : *forms) {
    if (f.kind != cage::testing::Sexp::Kind::list || f.kids.empty()) __builtin_trap();
    const std::string& head = f.kids[0].text;
    if (head != "version" && head != "allow" && head != "deny") __builtin_trap();
    if (head == "allow" && f.kids.size() > 1 && f.kids[1].text == "default") __builtin_trap();
  }
  std::vector<cage::testing::PathFilter> filters;
  cage::testing::collect_filters(*forms, filters);
  auto count = [&](const std::string& action, const std::string& path) {
    size_t n = 0;
    for (const auto& f : filters) n += f.action == action && f.path == path && f.ops != "file-read-metadata";
    return n;
  };
  for (const auto* list : {&p.ro, &p.rw, &p.hide})
    for (const auto& g : *list) {
      std::string want = macos::canonical_mac_path(g.path, facts);
      if (count(list == &p.hide ? "deny" : "allow", want) < 1) __builtin_trap();
      if (profile->find(macos::quote_sbpl(want)) == std::string::npos) __builtin_trap();
    }
  // p.net is empty: no rule allows any network operation, whatever the paths were.
  for (const auto& f : *forms)
    if (f.kids[0].text == "allow")
      for (const auto& k : f.kids)
        if (k.kind == cage::testing::Sexp::Kind::atom && k.text.rfind("network", 0) == 0) __builtin_trap();
  return 0;
}
