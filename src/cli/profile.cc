// The TOML profile loader (see profile.h); profile_merge.cc combines the sources it loads and
// profile_print.cc writes them back (--print-profile). Every key of a profile maps to one flag; the
// schema is the option table (option_table.cc), which drives all three, and the man page section
// man/sections/profiles.roff. Unknown keys and wrong types are errors naming file:line:col and the
// key, so a typo cannot silently widen or narrow a sandbox. Only this file and profile_print.cc
// include toml++ for the CLI (0.6 s each).
#include "cli/profile.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
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
    if (name == "PWD" && ctx.cwd.empty())
      return invalid(where, "${PWD} names the current directory, which is gone", "cd to an existing directory");
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

}  // namespace

Result<Layer> load_profile_text(std::string_view text, const std::string& display, const std::string& base_dir,
                                const ProfileContext& ctx, int line_offset, int col_offset) {
  Loader l(ctx);
  return l.load_text(text, display, base_dir, line_offset, col_offset);
}

Result<Layer> load_profile(const Value& ref, const ProfileContext& ctx) {
  Loader l(ctx);
  return l.load_ref(ref, false);
}

}  // namespace cage::cli
