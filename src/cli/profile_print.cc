// --print-profile (see profile.h): a merged PolicyInput written back as one TOML profile, each key as
// the option table (option_table.cc) says, each string as it was written. Read back by profile.cc;
// tests/unit/profile_golden_test.cc pins the output, profile_test.cc the round trip.
#include <map>
#include <sstream>

#include "cli/option_table.h"
#include "cli/profile.h"
#include "common/toml.h"

namespace cage::cli {

namespace {

using policy::PolicyInput;
using policy::Value;

// Printed strings are read back through ${VAR} expansion: every '$' is written as "$$".
std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '$' ? std::string("$$") : std::string(1, c);
  return out;
}

// A value as printed: a profile's string as written (its ${VAR} and $$ kept, expanded again where the
// printed profile is loaded), a flag's with every '$' doubled.
std::string as_written(const Value& v, const std::string& expanded) {
  return v.written.empty() ? esc(expanded) : v.written;
}

// `abs` relative to `dir` when beneath it ("" when equal), nullopt otherwise.
std::optional<std::string> relative_to(const std::string& abs, const std::string& dir) {
  if (!policy::is_beneath(abs, dir)) return std::nullopt;
  if (abs == dir) return std::string();
  return abs.substr(dir == "/" ? 1 : dir.size() + 1);
}

// A path as printed into a profile kept in `cwd`. Absolute, "~/..." and "${HOME}/..." forms stay as
// written. A relative path keeps its meaning: a flag's (based on cwd) is printed as written, since
// a profile's relative paths are based on its own directory; one from a profile elsewhere is
// rebased onto cwd ("sub/x"), or onto "~" from beneath the home, or else made absolute.
std::string printed_path(const Value& v, const std::string& home, const std::string& cwd, bool& relative) {
  const std::string w = as_written(v, v.text);
  if (v.text.empty() || v.text[0] == '/' || v.text[0] == '~' || v.base.empty()) return w;
  const std::string base = policy::lexically_clean(v.base);
  if (auto r = relative_to(base, cwd)) {
    relative = true;
    return r->empty() ? w : esc(*r) + "/" + w;
  }
  if (!home.empty() && home != "/")
    if (auto r = relative_to(base, policy::lexically_clean(home))) return "~/" + (r->empty() ? "" : esc(*r) + "/") + w;
  return esc(base) + "/" + w;
}

}  // namespace

std::string print_profile(const PolicyInput& in, const std::string& home, const std::string& cwd) {
  bool relative = false;  // a printed path is relative to the file's directory: the header says so
  auto path_text = [&](const Value& v) { return printed_path(v, home, cwd, relative); };
  auto strings = [](const std::vector<Value>& vs) {
    toml::array a;
    for (const auto& v : vs) a.push_back(as_written(v, v.text));
    return a;
  };
  toml::table root{{"version", 1}};
  if (!in.argv.empty()) {
    toml::array run;
    for (const auto& a : in.argv) run.push_back(esc(a));
    root.insert("run", std::move(run));
  }
  std::map<std::string, toml::table> tables;
  for (const auto& o : options()) {
    if (!o.section) continue;  // --run-id is one run's: never printed
    toml::table& t = *o.section ? tables[o.section] : root;
    if (o.list && !(in.*(o.list)).empty()) {
      const auto& vs = in.*(o.list);
      if (o.kind == Kind::paths) {
        toml::array a;
        for (const auto& v : vs) {
          if (v.optional)
            a.push_back(toml::table{{"path", path_text(v)}, {"optional", true}});
          else
            a.push_back(path_text(v));
        }
        t.insert(o.key, std::move(a));
      } else if (o.kind == Kind::pairs || o.kind == Kind::integer_pairs) {
        // NAME=VALUE lists (--setenv, --rlimit) as a table; a profile's value as it was written;
        // a --secret's source, never its value.
        toml::table p;
        for (const auto& v : vs) {
          auto eq = v.text.find('=');
          p.insert_or_assign(v.text.substr(0, eq),
                             as_written(v, eq == std::string::npos ? "" : v.text.substr(eq + 1)));
        }
        t.insert(o.key, std::move(p));
      } else {
        t.insert(o.key, strings(vs));
      }
    } else if (o.scalar && in.*(o.scalar)) {
      const Value& v = *(in.*(o.scalar));
      if (o.kind == Kind::boolean)
        t.insert(o.key, v.text == "true" || v.text == "1" || v.text == "yes");
      else if (o.kind == Kind::path || (o.kind == Kind::file_or_fd && v.text.rfind("fd:", 0) != 0))
        t.insert(o.key, path_text(v));
      else if (o.kind == Kind::file_or_fd)
        t.insert(o.key, esc(v.text));
      else
        t.insert_or_assign(o.key, as_written(v, v.text));
    }
  }
  if (!in.exec_run.empty()) tables["exec"].insert("run", strings(in.exec_run));
  for (auto& [name, t] : tables)
    if (!t.empty()) root.insert(name, std::move(t));
  std::ostringstream out;
  out << "# cage profile (cage --print-profile); load it with: cage --profile FILE\n";
  if (relative) out << "# relative paths are relative to FILE's directory: keep FILE in the directory it was printed in\n";
  out << toml::toml_formatter{root, toml::toml_formatter::default_flags & ~toml::format_flags::indentation} << "\n";
  return out.str();
}

}  // namespace cage::cli
