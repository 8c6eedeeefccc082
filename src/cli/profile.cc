// The TOML profile loader (see profile.h). Every key of a profile maps to one flag; the schema is the
// table kSections below and the man page section man/sections/profiles.roff. Unknown keys and wrong
// types are errors naming file:line:col and the key, so a typo cannot silently widen or narrow a
// sandbox. Only this file includes toml++ for the CLI (one TU, 0.6 s).
#include "cli/profile.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

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

struct PathSlot {
  const char* key;
  std::vector<Value> PolicyInput::*list;
};
const PathSlot kFsLists[] = {{"ro", &PolicyInput::ro}, {"rw", &PolicyInput::rw}, {"tmpfs", &PolicyInput::tmpfs},
                             {"hide", &PolicyInput::hide}};

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
  // A table of NAME = "text" ([env] set, secret) as NAME=text values.
  Status name_table(const Doc& d, const toml::node& n, const std::string& key, const std::string& expected,
                    std::vector<Value>& out);
  Status path_list(const Doc& d, const toml::node& n, const std::string& key, std::vector<Value>& out);
  Status section(const Doc& d, const toml::node& n, const std::string& name, Layer& l);
  Status fs(const Doc& d, const toml::table& t, Layer& l);
  Status env(const Doc& d, const toml::table& t, Layer& l);
  Status net(const Doc& d, const toml::table& t, Layer& l);
  Status limits(const Doc& d, const toml::table& t, Layer& l);
  Status seccomp(const Doc& d, const toml::table& t, Layer& l);
  Status audit(const Doc& d, const toml::table& t, Layer& l);
  Status exec(const Doc& d, const toml::table& t, Layer& l);
  Status top(const Doc& d, const toml::table& t, Layer& includes, Layer& own);
  Error unknown(const Doc& d, const toml::key& k, const std::string& prefix, const char* known) const {
    return invalid(at(d, k.source()) + " " + prefix + std::string(k.str()), "unknown key",
                   std::string("expected one of: ") + known);
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
                          std::vector<Value>& out) {
  const auto* tbl = n.as_table();
  if (!tbl) return wrong(d, n, key, expected);
  for (const auto& [name, val] : *tbl) {
    auto v = str(d, val, key + "." + std::string(name.str()));
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

Status Loader::fs(const Doc& d, const toml::table& t, Layer& l) {
  for (const auto& [k, n] : t) {
    const std::string key = "fs." + std::string(k.str());
    bool done = false;
    for (const auto& slot : kFsLists)
      if (k.str() == slot.key) {
        if (auto s = path_list(d, n, key, l.input.*(slot.list)); !s) return s;
        done = true;
      }
    if (done) continue;
    Result<Value> v = Value{};
    std::optional<Value>* dst = nullptr;
    if (k.str() == "no_system") {
      v = boolean(d, n, key), dst = &l.input.no_system;
    } else if (k.str() == "no_cwd") {
      v = boolean(d, n, key), dst = &l.input.no_cwd;
    } else if (k.str() == "chdir") {
      v = str(d, n, key), dst = &l.input.chdir;
    } else if (k.str() == "scratch") {
      v = str(d, n, key), dst = &l.input.scratch;
    } else {
      return unknown(d, k, "fs.", "ro rw tmpfs hide no_system no_cwd chdir scratch");
    }
    if (!v) return v.error();
    *dst = *v;
  }
  return Ok{};
}

Status Loader::env(const Doc& d, const toml::table& t, Layer& l) {
  for (const auto& [k, n] : t) {
    const std::string key = "env." + std::string(k.str());
    if (k.str() == "pass") {
      if (auto s = str_list(d, n, key, l.input.env_pass); !s) return s;
    } else if (k.str() == "unset") {
      if (auto s = str_list(d, n, key, l.input.env_unset); !s) return s;
    } else if (k.str() == "set") {
      if (auto s = name_table(d, n, key, "a table of NAME = \"VALUE\"", l.input.env_set); !s) return s;
    } else if (k.str() == "secret") {
      const std::string expected = "a table of NAME = \"@FILE\" | \"fd:N\" | \"env:VAR\"";
      if (auto s = name_table(d, n, key, expected, l.input.env_secret); !s) return s;
    } else {
      return unknown(d, k, "env.", "pass set unset secret");
    }
  }
  return Ok{};
}

Status Loader::net(const Doc& d, const toml::table& t, Layer& l) {
  for (const auto& [k, n] : t) {
    const std::string key = "net." + std::string(k.str());
    if (k.str() == "allow") {
      if (auto s = str_list(d, n, key, l.input.net); !s) return s;
    } else if (k.str() == "share_net") {
      auto v = boolean(d, n, key);
      if (!v) return v.error();
      l.input.share_net = *v;
    } else if (k.str() == "mode") {  // proxy | transparent | both (--net-mode)
      auto v = str(d, n, key);
      if (!v) return v.error();
      l.input.net_mode = *v;
    } else {
      return unknown(d, k, "net.", "allow mode share_net");
    }
  }
  return Ok{};
}

Status Loader::limits(const Doc& d, const toml::table& t, Layer& l) {
  for (const auto& [k, n] : t) {
    const std::string key = "limits." + std::string(k.str());
    Result<Value> v = Value{};
    std::optional<Value>* dst = nullptr;
    if (k.str() == "rlimits") {
      const auto* tbl = n.as_table();
      if (!tbl) return wrong(d, n, key, "a table of NAME = VALUE or \"SOFT:HARD\"");
      for (const auto& [name, val] : *tbl) {
        auto r = scalar_text(d, val, key + "." + std::string(name.str()), true, false);
        if (!r) return r.error();
        r->text = std::string(name.str()) + "=" + r->text;
        l.input.rlimits.push_back(*r);
      }
      continue;
    }
    if (k.str() == "memory") {
      v = scalar_text(d, n, key, true, false), dst = &l.input.memory;
    } else if (k.str() == "pids") {
      v = scalar_text(d, n, key, true, false), dst = &l.input.pids;
    } else if (k.str() == "cpu") {
      v = scalar_text(d, n, key, true, true), dst = &l.input.cpu;
    } else if (k.str() == "timeout") {
      v = scalar_text(d, n, key, true, false), dst = &l.input.timeout;
    } else if (k.str() == "preset") {
      v = scalar_text(d, n, key, false, false), dst = &l.input.limits_preset;
    } else if (k.str() == "tmpfs_size") {
      v = scalar_text(d, n, key, true, false), dst = &l.input.tmpfs_size;
    } else if (k.str() == "strict") {
      v = boolean(d, n, key), dst = &l.input.strict_limits;
    } else if (k.str() == "max_output" || k.str() == "max_stdout" || k.str() == "max_stderr") {
      v = scalar_text(d, n, key, true, false);
      dst = k.str() == "max_output" ? &l.input.max_output : k.str() == "max_stdout" ? &l.input.max_stdout : &l.input.max_stderr;
    } else {
      return unknown(d, k, "limits.", "preset memory pids cpu timeout tmpfs_size rlimits strict max_output max_stdout max_stderr");
    }
    if (!v) return v.error();
    *dst = *v;
  }
  return Ok{};
}

Status Loader::seccomp(const Doc& d, const toml::table& t, Layer& l) {
  for (const auto& [k, n] : t) {
    if (k.str() != "profile") return unknown(d, k, "seccomp.", "profile");
    auto v = str(d, n, "seccomp.profile");
    if (!v) return v.error();
    l.input.seccomp = *v;
  }
  return Ok{};
}

Status Loader::audit(const Doc& d, const toml::table& t, Layer& l) {
  for (const auto& [k, n] : t) {
    const std::string key = "audit." + std::string(k.str());
    Result<Value> v = Value{};
    if (k.str() == "file") {
      v = str(d, n, key);
      if (v) l.input.audit_file = *v;
    } else if (k.str() == "required") {
      v = boolean(d, n, key);
      if (v) l.input.audit_required = *v;
    } else if (k.str() == "labels") {  // { KEY = "VALUE" } (--label)
      if (auto s = name_table(d, n, key, "a table of KEY = \"VALUE\"", l.input.labels); !s) return s;
    } else {
      return unknown(d, k, "audit.", "file required labels");
    }
    if (!v) return v.error();
  }
  return Ok{};
}

// [exec] allow = [paths] (--exec), run = ["git", "clone", "{url}"] (the pinned command line).
Status Loader::exec(const Doc& d, const toml::table& t, Layer& l) {
  for (const auto& [k, n] : t) {
    const std::string key = "exec." + std::string(k.str());
    if (k.str() == "allow") {
      if (auto s = path_list(d, n, key, l.input.exec); !s) return s;
    } else if (k.str() == "run") {
      l.input.exec_run.clear();
      if (auto s = str_list(d, n, key, l.input.exec_run); !s) return s;
      if (l.input.exec_run.empty())
        return invalid(at(d, n.source()) + " " + key, "expected a non-empty array: the program and its arguments' shape");
    } else {
      return unknown(d, k, "exec.", "allow run");
    }
  }
  return Ok{};
}

Status Loader::section(const Doc& d, const toml::node& n, const std::string& name, Layer& l) {
  const auto* t = n.as_table();
  if (!t) return wrong(d, n, name, "a table ([" + name + "])");
  if (name == "fs") return fs(d, *t, l);
  if (name == "env") return env(d, *t, l);
  if (name == "net") return net(d, *t, l);
  if (name == "limits") return limits(d, *t, l);
  if (name == "seccomp") return seccomp(d, *t, l);
  if (name == "exec") return exec(d, *t, l);
  return audit(d, *t, l);
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
    } else if (key == "hostname") {
      auto v = str(d, n, key);
      if (!v) return v.error();
      own.input.hostname = *v;
    } else if (key == "mechanism") {  // auto | namespaces | landlock (--mechanism)
      auto v = str(d, n, key);
      if (!v) return v.error();
      own.input.mechanism = *v;
    } else if (key == "uid") {  // "nobody", "UID" or "UID:GID", or an integer (--uid)
      auto v = scalar_text(d, n, key, true, false);
      if (!v) return v.error();
      own.input.uid = *v;
    } else if (key == "allow_degraded") {  // ["pid", "hide", "tmpfs"] (--allow-degraded)
      if (auto st = str_list(d, n, key, own.input.allow_degraded); !st) return st;
    } else if (key == "fs" || key == "env" || key == "net" || key == "limits" || key == "seccomp" ||
               key == "audit" || key == "exec") {
      if (auto s = section(d, n, key, own); !s) return s;
    } else {
      return unknown(d, k, "",
                     "version include run hostname mechanism uid allow_degraded [fs] [env] [net] [limits] [seccomp] [audit] [exec]");
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

// The scalars of PolicyInput, for merge and print.
using Scalar = std::optional<Value> PolicyInput::*;
const Scalar kScalars[] = {&PolicyInput::memory,    &PolicyInput::pids,          &PolicyInput::cpu,
                           &PolicyInput::timeout,   &PolicyInput::seccomp,       &PolicyInput::chdir,
                           &PolicyInput::hostname,  &PolicyInput::no_system,     &PolicyInput::no_cwd,
                           &PolicyInput::share_net, &PolicyInput::strict_limits, &PolicyInput::audit_file,
                           &PolicyInput::audit_required, &PolicyInput::net_mode, &PolicyInput::mechanism,
                           &PolicyInput::max_output,     &PolicyInput::max_stdout, &PolicyInput::max_stderr,
                           &PolicyInput::run_id,    &PolicyInput::scratch,       &PolicyInput::uid,
                           &PolicyInput::tmpfs_size, &PolicyInput::limits_preset};

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
  for (const auto& slot : kFsLists)
    for (const auto& v : later.*(slot.list)) {
      const std::string k = key(v);
      for (const auto& other : kFsLists) {
        if (other.list == slot.list) continue;
        auto& list = into.*(other.list);
        std::erase_if(list, [&](const Value& x) { return key(x) == k; });
      }
    }
  for (const auto& slot : kFsLists) {
    auto& dst = into.*(slot.list);
    const auto& src = later.*(slot.list);
    dst.insert(dst.end(), src.begin(), src.end());
  }
  // A later source's label replaces an earlier one of the same key (two in one source are an error).
  for (const auto& v : later.labels)
    std::erase_if(into.labels, [&](const Value& x) { return env_name(x.text) == env_name(v.text); });
  for (const auto* list : {&later.env_pass, &later.env_set})
    for (const auto& v : *list)
      std::erase_if(into.env_unset, [&](const Value& u) { return u.text == env_name(v.text); });
  for (auto list : {&PolicyInput::env_pass, &PolicyInput::env_set, &PolicyInput::env_unset, &PolicyInput::env_secret,
                    &PolicyInput::net,
                    &PolicyInput::rlimits, &PolicyInput::allow_degraded, &PolicyInput::labels,
                    &PolicyInput::exec})
    (into.*list).insert((into.*list).end(), (later.*list).begin(), (later.*list).end());
  for (auto s : kScalars)
    if (later.*s) into.*s = later.*s;
  if (!later.argv.empty()) into.argv = later.argv;
  if (!later.exec_run.empty()) into.exec_run = later.exec_run;  // one pinned shape: the last source's
}

std::string print_profile(const PolicyInput& in, const std::string& home, const std::string& cwd) {
  bool relative = false;  // a printed path is relative to the file's directory: the header says so
  auto path_text = [&](const Value& v) { return printed_path(v, home, cwd, relative); };
  auto paths = [&](const std::vector<Value>& vs) {
    toml::array a;
    for (const auto& v : vs) {
      if (v.optional)
        a.push_back(toml::table{{"path", path_text(v)}, {"optional", true}});
      else
        a.push_back(path_text(v));
    }
    return a;
  };
  auto strings = [](const std::vector<Value>& vs) {
    toml::array a;
    for (const auto& v : vs) a.push_back(as_written(v, v.text));
    return a;
  };
  // NAME=VALUE lists (--setenv, --rlimit) as a table; a profile's value as it was written.
  auto pairs = [](const std::vector<Value>& vs) {
    toml::table t;
    for (const auto& v : vs) {
      auto eq = v.text.find('=');
      t.insert_or_assign(v.text.substr(0, eq), as_written(v, eq == std::string::npos ? "" : v.text.substr(eq + 1)));
    }
    return t;
  };
  auto put_str = [](toml::table& t, const std::string& k, const std::optional<Value>& v) {
    if (v) t.insert_or_assign(k, as_written(*v, v->text));
  };
  auto put_bool = [](toml::table& t, const char* k, const std::optional<Value>& v) {
    if (v) t.insert(k, v->text == "true" || v->text == "1" || v->text == "yes");
  };
  toml::table root{{"version", 1}};
  if (!in.argv.empty()) {
    toml::array run;
    for (const auto& a : in.argv) run.push_back(esc(a));
    root.insert("run", std::move(run));
  }
  put_str(root, "hostname", in.hostname);
  put_str(root, "mechanism", in.mechanism);
  put_str(root, "uid", in.uid);
  if (!in.allow_degraded.empty()) root.insert("allow_degraded", strings(in.allow_degraded));
  toml::table fs;
  for (const auto& slot : kFsLists)
    if (!(in.*(slot.list)).empty()) fs.insert(slot.key, paths(in.*(slot.list)));
  put_bool(fs, "no_system", in.no_system);
  put_bool(fs, "no_cwd", in.no_cwd);
  if (in.chdir) fs.insert("chdir", path_text(*in.chdir));
  put_str(fs, "scratch", in.scratch);
  toml::table env;
  if (!in.env_pass.empty()) env.insert("pass", strings(in.env_pass));
  if (!in.env_unset.empty()) env.insert("unset", strings(in.env_unset));
  if (!in.env_set.empty()) env.insert("set", pairs(in.env_set));
  if (!in.env_secret.empty()) env.insert("secret", pairs(in.env_secret));  // sources, never values
  toml::table net;
  if (!in.net.empty()) net.insert("allow", strings(in.net));
  put_bool(net, "share_net", in.share_net);
  put_str(net, "mode", in.net_mode);
  toml::table limits;
  put_str(limits, "preset", in.limits_preset);
  put_str(limits, "memory", in.memory);
  put_str(limits, "pids", in.pids);
  put_str(limits, "cpu", in.cpu);
  put_str(limits, "timeout", in.timeout);
  put_str(limits, "tmpfs_size", in.tmpfs_size);
  put_bool(limits, "strict", in.strict_limits);
  put_str(limits, "max_output", in.max_output);
  put_str(limits, "max_stdout", in.max_stdout);
  put_str(limits, "max_stderr", in.max_stderr);
  if (!in.rlimits.empty()) limits.insert("rlimits", pairs(in.rlimits));
  toml::table exec;
  if (!in.exec.empty()) exec.insert("allow", paths(in.exec));
  if (!in.exec_run.empty()) exec.insert("run", strings(in.exec_run));
  toml::table audit;
  if (in.audit_file) audit.insert("file", in.audit_file->text.rfind("fd:", 0) == 0 ? esc(in.audit_file->text)
                                                                                  : path_text(*in.audit_file));
  put_bool(audit, "required", in.audit_required);
  if (!in.labels.empty()) audit.insert("labels", pairs(in.labels));  // --run-id is one run's: never printed
  for (auto& [name, t] : std::initializer_list<std::pair<const char*, toml::table*>>{
           {"fs", &fs}, {"env", &env}, {"net", &net}, {"limits", &limits}, {"audit", &audit}, {"exec", &exec}})
    if (!t->empty()) root.insert(name, std::move(*t));
  if (in.seccomp) root.insert("seccomp", toml::table{{"profile", as_written(*in.seccomp, in.seccomp->text)}});
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
