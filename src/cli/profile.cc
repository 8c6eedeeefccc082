// The TOML profile loader (see profile.h). Every key of a profile maps to one flag; the schema is the
// option table (option_table.cc), which drives reading, merging and printing here, and the man page
// section man/sections/profiles.roff. Unknown keys and wrong types are errors naming file:line:col
// and the key, so a typo cannot silently widen or narrow a sandbox. Only this file includes toml++ for the CLI (one TU, 0.6 s).
#include "cli/profile.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "cli/option_table.h"
#include "common/toml.h"

namespace cage::cli {

namespace {

using policy::PolicyInput;
using policy::Value;

constexpr size_t kMaxProfileBytes = 1 << 20;
constexpr size_t kMaxIncludeDepth = 16;

std::string dirname_of(const std::string& abs) {
  auto slash = abs.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : abs.substr(0, slash);
}

bool is_regular_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::none: return "nothing";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
  }
  return "a value";
}

// ${NAME} from the caller's environment (${PWD} is always cage's current directory); $$ is a
// literal '$'; any other '$' is itself. An unset variable is an error, never an empty string.
Result<std::string> expand_vars(const std::string& s, const ProfileContext& ctx, const std::string& where) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '$' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    if (s[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (s[i + 1] != '{') {
      out += s[i];
      continue;
    }
    size_t close = s.find('}', i + 2);
    std::string name = close == std::string::npos ? "" : s.substr(i + 2, close - i - 2);
    bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok)
      return invalid(where, "malformed variable reference in \"" + s + "\"",
                     "write ${NAME} (letters, digits, '_'), or $$ for a literal '$'");
    const std::string* val = nullptr;
    if (name == "PWD") val = &ctx.cwd;
    for (const auto& [k, v] : ctx.environ)
      if (!val && k == name) val = &v;
    if (!val) return invalid(where, "${" + name + "} is not set in the environment", "set " + name + " or drop it");
    out += *val;
    i = close;
  }
  return out;
}

class Loader {
 public:
  explicit Loader(const ProfileContext& ctx) : ctx_(ctx) {}
  Result<Layer> load_ref(const Value& ref, bool from_include);
  Result<Layer> load_text(std::string_view text, const std::string& display, const std::string& base,
                          int line_off, int col_off);

 private:
  struct Doc {
    std::string display, base;
    int line_off = 0, col_off = 0;
  };
  std::string at(const Doc& d, const toml::source_region& r) const {
    return d.display + ":" + std::to_string(r.begin.line + static_cast<unsigned>(d.line_off)) + ":" +
           std::to_string(r.begin.column + static_cast<unsigned>(d.col_off));
  }
  Error wrong(const Doc& d, const toml::node& n, const std::string& key, const std::string& expected) const {
    return invalid(at(d, n.source()) + " " + key, "expected " + expected + ", got " + type_name(n));
  }
  Result<Value> str(const Doc& d, const toml::node& n, const std::string& key);
  Result<Value> scalar_text(const Doc& d, const toml::node& n, const std::string& key, bool allow_int,
                            bool allow_float);
  Result<Value> boolean(const Doc& d, const toml::node& n, const std::string& key);
  Status str_list(const Doc& d, const toml::node& n, const std::string& key, std::vector<Value>& out);
  // A table of NAME = "text" ([env] set, secret), or also NAME = integer (rlimits), as NAME=text values.
  Status name_table(const Doc& d, const toml::node& n, const std::string& key, const std::string& expected,
                    bool allow_int, std::vector<Value>& out);
  Status path_list(const Doc& d, const toml::node& n, const std::string& key, std::vector<Value>& out);
  // The value of option `o` at `key` ("fs.ro"), into `in`.
  Status read(const Doc& d, const OptionSpec& o, const toml::node& n, const std::string& key, PolicyInput& in);
  Status section(const Doc& d, const toml::node& n, const SectionSpec& s, Layer& l);
  Status top(const Doc& d, const toml::table& t, Layer& includes, Layer& own);
  Error unknown(const Doc& d, const toml::key& k, const std::string& prefix, const std::string& known) const {
    return invalid(at(d, k.source()) + " " + prefix + std::string(k.str()), "unknown key",
                   "expected one of: " + known);
  }

  const ProfileContext& ctx_;
  std::vector<std::string> stack_;  // identities of the profiles being loaded, for cycle detection
};

Result<Value> Loader::str(const Doc& d, const toml::node& n, const std::string& key) {
  const std::string where = at(d, n.source()) + " " + key;
  auto s = n.value<std::string>();
  if (!n.is_string() || !s) return wrong(d, n, key, "a string");
  auto e = expand_vars(*s, ctx_, where);
  if (!e) return e.error();
  return Value{*e, where, d.base, *s};
}

Result<Value> Loader::scalar_text(const Doc& d, const toml::node& n, const std::string& key, bool allow_int,
                                  bool allow_float) {
  const std::string where = at(d, n.source()) + " " + key;
  if (n.is_string()) return str(d, n, key);
  if (allow_int && n.is_integer()) return Value{std::to_string(*n.value<int64_t>()), where, d.base};
  if (allow_float && n.is_floating_point()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", *n.value<double>());
    return Value{buf, where, d.base};
  }
  return wrong(d, n, key, allow_float ? "a string or a number" : allow_int ? "a string or an integer" : "a string");
}

Result<Value> Loader::boolean(const Doc& d, const toml::node& n, const std::string& key) {
  if (!n.is_boolean()) return wrong(d, n, key, "true or false");
  return Value{*n.value<bool>() ? "true" : "false", at(d, n.source()) + " " + key, d.base};
}

Status Loader::name_table(const Doc& d, const toml::node& n, const std::string& key, const std::string& expected,
                          bool allow_int, std::vector<Value>& out) {
  const auto* tbl = n.as_table();
  if (!tbl) return wrong(d, n, key, expected);
  for (const auto& [name, val] : *tbl) {
    auto v = scalar_text(d, val, key + "." + std::string(name.str()), allow_int, false);
    if (!v) return v.error();
    v->text = std::string(name.str()) + "=" + v->text;
    out.push_back(*v);
  }
  return Ok{};
}

Status Loader::str_list(const Doc& d, const toml::node& n, const std::string& key, std::vector<Value>& out) {
  const auto* arr = n.as_array();
  if (!arr) return wrong(d, n, key, "an array of strings");
  for (const auto& e : *arr) {
    auto v = str(d, e, key);
    if (!v) return v.error();
    out.push_back(*v);
  }
  return Ok{};
}

// Paths: "PATH", or { path = "PATH", optional = true } to skip a path that does not exist when the
// profile is loaded (a cache directory, say).
Status Loader::path_list(const Doc& d, const toml::node& n, const std::string& key, std::vector<Value>& out) {
  const auto* arr = n.as_array();
  if (!arr) return wrong(d, n, key, "an array of paths");
  for (const auto& e : *arr) {
    if (!e.is_table()) {
      auto v = str(d, e, key);
      if (!v) return v.error();
      out.push_back(*v);
      continue;
    }
    const toml::node* path = nullptr;
    bool optional = false;
    for (const auto& [k, sub] : *e.as_table()) {
      if (k.str() == "path") {
        path = &sub;
      } else if (k.str() == "optional") {
        auto b = boolean(d, sub, key + ".optional");
        if (!b) return b.error();
        optional = b->text == "true";
      } else {
        return unknown(d, k, key + ".", "path optional");
      }
    }
    if (!path) return invalid(at(d, e.source()) + " " + key, "expected a 'path' in the inline table");
    auto v = str(d, *path, key);
    if (!v) return v.error();
    if (optional) {
      auto abs = policy::absolute_path(*v, ctx_.home);
      if (!abs) return abs.error();
      struct stat st{};
      bool missing = ::lstat(abs->c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
      if (missing && !ctx_.keep_missing_optional) continue;
      v->optional = true;
    }
    out.push_back(*v);
  }
  return Ok{};
}

Status Loader::read(const Doc& d, const OptionSpec& o, const toml::node& n, const std::string& key,
                    PolicyInput& in) {
  Result<Value> v = Value{};
  switch (o.kind) {
    case Kind::paths: return path_list(d, n, key, in.*(o.list));
    case Kind::words: return str_list(d, n, key, in.*(o.list));
    case Kind::pairs: return name_table(d, n, key, o.expected, false, in.*(o.list));
    case Kind::integer_pairs: return name_table(d, n, key, o.expected, true, in.*(o.list));
    case Kind::boolean: v = boolean(d, n, key); break;
    case Kind::integer_text: v = scalar_text(d, n, key, true, false); break;
    case Kind::number_text: v = scalar_text(d, n, key, true, true); break;
    case Kind::text:
    case Kind::path:
    case Kind::file_or_fd: v = str(d, n, key); break;
  }
  if (!v) return v.error();
  in.*(o.scalar) = *v;
  return Ok{};
}

Status Loader::section(const Doc& d, const toml::node& n, const SectionSpec& s, Layer& l) {
  const std::string name = s.name;
  const auto* t = n.as_table();
  if (!t) return wrong(d, n, name, "a table ([" + name + "])");
  for (const auto& [k, v] : *t) {
    const std::string key = name + "." + std::string(k.str());
    // [exec] run = ["git", "clone", "{url}"]: the shape the command line must have (no flag).
    if (name == "exec" && k.str() == "run") {
      l.input.exec_run.clear();
      if (auto st = str_list(d, v, key, l.input.exec_run); !st) return st;
      if (l.input.exec_run.empty())
        return invalid(at(d, v.source()) + " " + key,
                       "expected a non-empty array: the program and its arguments' shape");
      continue;
    }
    const OptionSpec* o = find_option(name, k.str());
    if (!o) return unknown(d, k, name + ".", s.keys);
    if (auto st = read(d, *o, v, key, l.input); !st) return st;
  }
  return Ok{};
}

Status Loader::top(const Doc& d, const toml::table& t, Layer& includes, Layer& own) {
  // Includes first, whatever their place in the file: the including profile overrides them.
  if (const toml::node* inc = t.get("include")) {
    std::vector<Value> refs;
    if (auto s = str_list(d, *inc, "include", refs); !s) return s;
    for (const auto& ref : refs) {
      auto layer = load_ref(ref, true);
      if (!layer) return layer.error();
      merge_into(includes.input, layer->input, ctx_.home);
      if (layer->run) includes.run = layer->run;
    }
  }
  for (const auto& [k, n] : t) {
    const std::string key(k.str());
    if (key == "include") continue;
    if (key == "version") {
      if (!n.is_integer()) return wrong(d, n, key, "the integer 1");
      if (*n.value<int64_t>() != 1)
        return invalid(at(d, n.source()) + " version", "unsupported profile version " +
                                                           std::to_string(*n.value<int64_t>()),
                       "this cage reads version = 1");
    } else if (key == "run") {
      std::vector<Value> words;
      if (auto s = str_list(d, n, key, words); !s) return s;
      if (words.empty() || words[0].text.empty())
        return invalid(at(d, n.source()) + " run", "expected a non-empty array: the interpreter and its options");
      own.run.emplace();
      for (const auto& w : words) own.run->push_back(w.text);
    } else if (const SectionSpec* s = key.empty() ? nullptr : find_section(key)) {
      if (auto st = section(d, n, *s, own); !st) return st;
    } else if (const OptionSpec* o = find_option("", key)) {
      if (auto st = read(d, *o, n, key, own.input); !st) return st;
    } else {
      std::string known = sections()[0].keys;
      for (const auto& sec : sections().subspan(1)) known += " [" + std::string(sec.name) + "]";
      return unknown(d, k, "", known);
    }
  }
  return Ok{};
}

Result<Layer> Loader::load_text(std::string_view text, const std::string& display, const std::string& base,
                                int line_off, int col_off) {
  Doc d{display, base, line_off, col_off};
  toml::table tbl;
  try {
    tbl = toml::parse(text, display);
  } catch (const toml::parse_error& e) {
    return invalid(at(d, e.source()), "TOML syntax: " + std::string(e.description()), "fix the profile");
  }
  Layer includes, own;
  if (auto s = top(d, tbl, includes, own); !s) return s.error();
  merge_into(includes.input, own.input, ctx_.home);
  if (own.run) includes.run = own.run;
  return includes;
}

bool is_profile_name(const std::string& ref) {
  return !ref.empty() && ref.find('/') == std::string::npos &&
         !(ref.size() > 5 && ref.compare(ref.size() - 5, 5, ".toml") == 0);
}

Result<Layer> Loader::load_ref(const Value& ref, bool from_include) {
  const std::string where = ref.origin + " " + ref.text;
  auto fail = [&](std::string reason, std::string remedy) {
    return from_include ? invalid(where, std::move(reason), std::move(remedy))
                        : usage(where, std::move(reason), std::move(remedy));
  };
  if (stack_.size() >= kMaxIncludeDepth) return fail("profiles include each other too deeply", "at most 16 levels");
  std::string path, identity, display, base, text;
  if (is_profile_name(ref.text)) {
    for (char c : ref.text)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
        return fail("not a profile name", "names use letters, digits, '-', '_' and '.'; give a path with a '/'");
    if (ref.text[0] == '.') return fail("not a profile name", "give a path such as ./" + ref.text + ".toml");
    for (const auto& dir : {ctx_.user_dir, ctx_.system_dir})
      if (path.empty() && !dir.empty() && is_regular_file(dir + "/" + ref.text + ".toml"))
        path = dir + "/" + ref.text + ".toml";
    if (path.empty()) {
      for (const auto* b = kBuiltinProfiles; b->name && text.empty(); ++b)
        if (ref.text == b->name) text = b->text;
      if (text.empty())
        return fail("no profile named '" + ref.text + "'",
                    "looked in " + (ctx_.user_dir.empty() ? std::string("$XDG_CONFIG_HOME/cage/profiles") : ctx_.user_dir) +
                        ", " + ctx_.system_dir + " and the built-ins (build cargo git-https go npm pip shell)");
      identity = display = "builtin:" + ref.text;
      base = ctx_.cwd;  // built-ins describe "the project you are in"
    }
  } else {
    auto abs = policy::absolute_path(Value{ref.text, ref.origin, ref.base}, ctx_.home);
    if (!abs) return abs.error();
    path = *abs;
  }
  if (!path.empty()) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return fail("no such profile file", "check the path");
    if (static_cast<size_t>(st.st_size) > kMaxProfileBytes) return fail("profile is larger than 1 MiB", "");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    if (!in) return fail("cannot read the profile", "check its permissions");
    text = buf.str();
    char real[PATH_MAX];
    identity = ::realpath(path.c_str(), real) ? std::string(real) : path;
    display = path;
    base = dirname_of(path);
  }
  for (const auto& s : stack_)
    if (s == identity)
      return invalid(where, "include cycle: " + identity + " includes itself (directly or indirectly)",
                     "remove one of the includes");
  stack_.push_back(identity);
  auto layer = load_text(text, display, base, 0, 0);
  stack_.pop_back();
  return layer;
}

std::string env_name(const std::string& text) { return text.substr(0, text.find('=')); }

// Printed strings are read back through ${VAR} expansion: every '$' is written as "$$".
std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '$' ? std::string("$$") : std::string(1, c);
  return out;
}

std::string read_small_file(const std::string& path, std::string& err) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    err = "no such file";
    return {};
  }
  if (static_cast<size_t>(st.st_size) > kMaxProfileBytes * 16) {
    err = "file is larger than 16 MiB";
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (!in) err = "cannot read the file";
  return buf.str();
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

ProfileContext make_profile_context(const std::string& cwd,
                                    const std::vector<std::pair<std::string, std::string>>& environ) {
  ProfileContext ctx;
  ctx.cwd = cwd;
  ctx.environ = environ;
  std::string xdg;
  for (const auto& [k, v] : environ) {
    if (k == "HOME") ctx.home = v;
    if (k == "XDG_CONFIG_HOME") xdg = v;
  }
  if (xdg.empty() || xdg[0] != '/') xdg = ctx.home.empty() ? "" : ctx.home + "/.config";  // XDG: ignore relative
  if (!xdg.empty()) ctx.user_dir = xdg + "/cage/profiles";
  return ctx;
}

Result<Layer> load_profile_text(std::string_view text, const std::string& display, const std::string& base_dir,
                                const ProfileContext& ctx, int line_offset, int col_offset) {
  Loader l(ctx);
  return l.load_text(text, display, base_dir, line_offset, col_offset);
}

Result<Layer> load_profile(const Value& ref, const ProfileContext& ctx) {
  Loader l(ctx);
  return l.load_ref(ref, false);
}

void merge_into(PolicyInput& into, const PolicyInput& later, const std::string& home) {
  auto key = [&home](Value v) {
    v.text = policy::split_tmpfs_spec(v.text).first;  // a --tmpfs size is not part of the path
    auto abs = policy::absolute_path(v, home);
    return abs ? *abs : v.text;
  };
  // First what a later value drops from the earlier lists, then the appends (a source may set and
  // unset one name itself, or give one path twice).
  for (const auto& o : options()) {
    if (!o.list) continue;
    for (const auto& v : later.*(o.list)) {
      if (o.merge == Merge::path_wins) {
        const std::string k = key(v);
        for (const auto& other : options())
          if (other.merge == Merge::path_wins && other.list != o.list)
            std::erase_if(into.*(other.list), [&](const Value& x) { return key(x) == k; });
      } else if (o.merge == Merge::key_wins) {  // two of one key in one source are validate()'s error
        std::erase_if(into.*(o.list), [&](const Value& x) { return env_name(x.text) == env_name(v.text); });
      } else if (o.merge == Merge::cancels_unset) {
        std::erase_if(into.env_unset, [&](const Value& u) { return u.text == env_name(v.text); });
      }
    }
  }
  for (const auto& o : options()) {
    if (o.list)
      (into.*(o.list)).insert((into.*(o.list)).end(), (later.*(o.list)).begin(), (later.*(o.list)).end());
    else if (later.*(o.scalar))
      into.*(o.scalar) = later.*(o.scalar);
  }
  if (!later.argv.empty()) into.argv = later.argv;
  if (!later.exec_run.empty()) into.exec_run = later.exec_run;  // one pinned shape: the last source's
}

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

Status apply_profiles(Invocation& inv, const ProfileContext& ctx) {
  // --audit/--audit-required (inv.report) and [audit] are one setting: the flags join the merge as the
  // last source, and the merged value goes back to inv.report, which the audit writer reads.
  if (!inv.report.audit.empty()) inv.input.audit_file = Value{inv.report.audit, "--audit", ctx.cwd};
  if (inv.report.audit_required) inv.input.audit_required = Value{"true", "--audit-required", ""};
  PolicyInput acc;
  std::optional<std::vector<std::string>> run;
  for (const auto& ref : inv.profiles) {
    auto layer = load_profile(ref, ctx);
    if (!layer) return layer.error();
    merge_into(acc, layer->input, ctx.home);
    if (layer->run) run = layer->run;
  }
  // --script: the user asked for FILE to be run as a script, so its block is read (never to decide
  // whether this is a script run: see cli::parse). Sources: profiles, the block, the script line's
  // options, then the caller's options.
  if (!inv.script.empty()) {
    const std::string script_abs =
        policy::lexically_clean(inv.script[0] == '/' ? inv.script : ctx.cwd + "/" + inv.script);
    std::string err;
    std::string text = read_small_file(script_abs, err);
    if (!err.empty()) return usage("--script " + inv.script, err, "give the path of a script");
    auto block = extract_script_block(text, script_abs);
    if (!block) return block.error();
    if (*block) {
      auto layer = load_profile_text((*block)->toml, script_abs, dirname_of(script_abs), ctx,
                                     (*block)->first_line - 1, (*block)->prefix);
      if (!layer) return layer.error();
      if (!layer->run && inv.script_interpreter.empty() && !run)
        return invalid(script_abs + ":" + std::to_string((*block)->first_line) + " run",
                       "the cage block has no run = [...]", "add e.g. run = [\"python3\"]");
      merge_into(acc, layer->input, ctx.home);
      if (layer->run) run = layer->run;
    } else if (inv.script_interpreter.empty() && !run) {
      return usage("--script " + inv.script, "the script has no '# /// cage' block and no interpreter was given",
                   "add a block (see cage(1), SCRIPTS), or name the interpreter: --script -- INTERPRETER");
    }
    merge_into(acc, inv.script_line, ctx.home);
    acc.ro.push_back(Value{script_abs, "--script", ""});
    std::vector<std::string> argv =
        inv.script_interpreter.empty() ? *run : std::vector<std::string>{inv.script_interpreter};
    argv.push_back(script_abs);
    argv.insert(argv.end(), inv.script_args.begin(), inv.script_args.end());
    run = argv;
  }
  merge_into(acc, inv.input, ctx.home);
  if (!inv.script.empty() || (acc.argv.empty() && run)) acc.argv = run.value_or(std::vector<std::string>{});
  if (acc.audit_file) {
    const auto& f = *acc.audit_file;
    auto abs = f.text.rfind("fd:", 0) == 0 ? Result<std::string>(f.text) : policy::absolute_path(f, ctx.home);
    if (!abs) return abs.error();
    inv.report.audit = *abs;
  }
  if (acc.audit_required) inv.report.audit_required = acc.audit_required->text == "true";
  inv.input = std::move(acc);
  return Ok{};
}

}  // namespace cage::cli
