// validate(): PolicyInput (raw flags and profile values) -> Policy. Every rejection names its input
// ("--memory 12Q", "cage.toml:4 fs.rw") and says what was expected. Pure: no system calls.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "policy/policy.h"
#include "policy/rlimits.h"

namespace cage::policy {

std::string_view to_string(SeccompProfile p) {
  switch (p) {
    case SeccompProfile::default_profile: return "default";
    case SeccompProfile::relaxed: return "relaxed";
    case SeccompProfile::none: return "none";
  }
  return "default";
}

namespace {

std::string where(const Value& v) { return v.origin + " " + v.text; }

bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// "512M", "1G", "1.5G", "2GiB", "512MB", "4096" (bytes); units are binary whichever way written.
// At least `min` bytes; 0 only where min is 0 (an output cap that passes nothing through).
Result<uint64_t> parse_size(const Value& v, uint64_t min = 1 << 20) {
  std::string s = v.text;
  uint64_t mult = 1;
  auto upper = [&s](size_t from_end) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(s[s.size() - from_end])));
  };
  const std::string units = "KMGT";
  if (s.size() > 1 && upper(1) == 'B') s.pop_back();  // 2GB, 2GiB
  if (s.size() > 2 && upper(1) == 'I' && units.find(upper(2)) != std::string::npos) s.pop_back();  // 2Gi
  if (!s.empty()) {
    if (auto i = units.find(upper(1)); i != std::string::npos) {
      mult = 1ULL << (10 * (i + 1));
      s.pop_back();
    }
  }
  char* end = nullptr;
  errno = 0;
  double d = s.empty() ? -1 : std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || *end != '\0' || !(d > 0 || (min == 0 && d == 0)) || std::isinf(d) || s[0] == '-' ||
      s[0] == '+')
    return invalid(where(v), "not a size", "write a positive size such as 512M, 2G or 1048576");
  double bytes = d * static_cast<double>(mult);
  if (bytes >= 9.0e18) return invalid(where(v), "size is too large", "give at most 8E");
  if (bytes < static_cast<double>(min)) return invalid(where(v), "size is below 1M", "give at least 1M");
  return static_cast<uint64_t>(bytes);
}

// "30s", "2m", "1h", "500ms", "1.5s", "90" (seconds), and sums of them: "1m30s", "1h30m", "2h5m10s".
Result<uint64_t> parse_duration_ms(const Value& v) {
  const std::string& s = v.text;
  auto bad = [&v] {
    return invalid(where(v), "not a duration", "write a positive duration such as 30s, 500ms, 1m30s or 1h");
  };
  double ms = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i == start) return bad();
    char* end = nullptr;
    errno = 0;
    const std::string num = s.substr(start, i - start);
    double d = std::strtod(num.c_str(), &end);
    if (errno != 0 || *end != '\0' || std::isinf(d)) return bad();
    double mult;
    if (s.compare(i, 2, "ms") == 0) mult = 1, i += 2;
    else if (i < s.size() && s[i] == 's') mult = 1000, ++i;
    else if (i < s.size() && s[i] == 'm') mult = 60e3, ++i;
    else if (i < s.size() && s[i] == 'h') mult = 3600e3, ++i;
    else if (i == s.size() && start == 0) mult = 1000;  // a bare number: seconds
    else return bad();
    ms += d * mult;
  }
  if (s.empty() || !(ms > 0)) return bad();
  if (ms < 1) return invalid(where(v), "duration is below 1ms");
  if (ms > 365.0 * 24 * 3600e3) return invalid(where(v), "duration is longer than a year");
  return static_cast<uint64_t>(ms);
}

bool valid_env_name(const std::string& n, bool allow_glob) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (i > 0 && c >= '0' && c <= '9') ||
              (allow_glob && (c == '*' || c == '?'));
    if (!ok) return false;
  }
  return true;
}


Result<Rlimit> parse_rlimit(const Value& v) {
  auto eq = v.text.find('=');
  if (eq == std::string::npos)
    return invalid(where(v), "expected NAME=VALUE", "e.g. --rlimit nofile=1024 or --rlimit core=0");
  Rlimit r;
  r.name = v.text.substr(0, eq);
  r.origin = where(v);
  bool known = false;
  std::string names;
  for (const char* n : kRlimitNames) {
    known = known || r.name == n;
    names += (names.empty() ? "" : " ") + std::string(n);
  }
  if (!known) return invalid(where(v), "unknown resource limit '" + r.name + "'", "use one of " + names);
  std::string val = v.text.substr(eq + 1);
  auto colon = val.find(':');
  std::string soft = val.substr(0, colon), hard = colon == std::string::npos ? soft : val.substr(colon + 1);
  // A number, optionally with a binary size suffix (fsize=1G, stack=8M), or unlimited.
  auto one = [](std::string s, uint64_t& out) {
    if (s == "unlimited" || s == "infinity") {
      out = UINT64_MAX;
      return true;
    }
    int shift = 0;
    if (!s.empty()) {
      const std::string units = "KMGT";
      if (auto i = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(s.back()))));
          i != std::string::npos) {
        shift = 10 * static_cast<int>(i + 1);
        s.pop_back();
      }
    }
    if (!parse_u64(s, out)) return false;
    if (shift && out > (UINT64_MAX >> shift)) return false;
    out <<= shift;
    return true;
  };
  if (!one(soft, r.soft) || !one(hard, r.hard))
    return invalid(where(v), "limit is not a number", "write NAME=N, NAME=SOFT:HARD, N with K/M/G/T, or unlimited");
  if (r.soft > r.hard) return invalid(where(v), "soft limit is above the hard limit");
  return r;
}

Result<bool> parse_bool(const Value& v) {
  if (v.text == "true" || v.text == "1" || v.text == "yes") return true;
  if (v.text == "false" || v.text == "0" || v.text == "no") return false;
  return invalid(where(v), "not a boolean", "write true or false");
}

// A relative --rw grant ("." in a profile, "..") that lands on $HOME, an ancestor of it, the root or
// a system root writes far more than a project: `cd ~ && cage --profile npm` made all of $HOME
// writable. The implicit cwd grant skips these directories (compile.cc cwd_too_wide) for the same
// reason. Named absolutely ("--rw ~", "--rw /srv") the grant stays the caller's explicit choice.
// Lexical (validate() makes no system calls): a symlinked project directory is judged by its name.
Status refuse_wide_relative_rw(const Value& v, const std::string& abs, const Context& ctx) {
  if (v.text[0] == '/' || v.text[0] == '~') return Ok{};
  const std::string real = resolve_dot_dot(abs);
  const std::string what = wide_directory(real, ctx.home);
  if (what.empty()) return Ok{};
  return invalid(v.origin + " " + v.text, "this relative path resolves to " + what + ": writing all of it is refused",
                 "grant a specific subdirectory (--rw ./project), or name it absolutely if you mean it (--rw " + real + ")");
}

Status add_grants(const std::vector<Value>& in, std::vector<Grant>& out, const Context& ctx, bool write = false) {
  for (const auto& v : in) {
    auto p = absolute_path(v, ctx.home);
    if (!p) return p.error();
    if (write)
      if (auto s = refuse_wide_relative_rw(v, *p, ctx); !s) return s;
    if (std::none_of(out.begin(), out.end(), [&](const Grant& g) { return g.path == *p; }))
      out.push_back(Grant{*p, v.origin + " " + v.text});
  }
  return Ok{};
}

// --tmpfs PATH[:size=SIZE] (split_tmpfs_spec): the path as any grant, the size as --memory's.
Status add_tmpfs(const std::vector<Value>& in, std::vector<Grant>& out, const Context& ctx) {
  for (const auto& v : in) {
    auto [path, size] = split_tmpfs_spec(v.text);
    Value pv = v;
    pv.text = path;
    if (path.empty())
      return invalid(where(v), "no path before ':size='", "write PATH:size=SIZE, e.g. /scratch:size=1G");
    auto p = absolute_path(pv, ctx.home);
    if (!p) return p.error();
    uint64_t bytes = 0;
    if (v.text.size() != path.size()) {
      Value sv = v;
      sv.text = size;
      auto b = parse_size(sv);
      if (!b)  // parse_size's reason: not a size, below 1M, too large
        return invalid(where(v), "size=" + size + ": " + b.error().reason, "write PATH:size=SIZE, e.g. " + path + ":size=1G");
      bytes = *b;
    }
    std::erase_if(out, [&](const Grant& g) { return g.path == *p; });  // the later one (a flag over a profile)
    out.push_back(Grant{*p, v.origin + " " + v.text, bytes});
  }
  return Ok{};
}

Status validate_grants(const PolicyInput& in, const Context& ctx, Policy& p) {
  if (auto s = add_grants(in.ro, p.ro, ctx); !s) return s;
  if (auto s = add_grants(in.rw, p.rw, ctx, true); !s) return s;
  if (auto s = add_tmpfs(in.tmpfs, p.tmpfs, ctx); !s) return s;
  if (auto s = add_grants(in.hide, p.hide, ctx); !s) return s;
  // One path, one meaning: the same path granted two ways is ambiguous, so it is refused.
  auto clash = [](const std::vector<Grant>& a, const std::vector<Grant>& b) -> const Grant* {
    for (const auto& x : a)
      for (const auto& y : b)
        if (x.path == y.path) return &y;
    return nullptr;
  };
  const std::vector<Grant>* lists[] = {&p.ro, &p.rw, &p.tmpfs, &p.hide};
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      if (const Grant* g = clash(*lists[i], *lists[j]))
        return invalid(g->origin, "the same path is also given to another option",
                       "give each path one of --ro, --rw, --tmpfs or --hide");
  for (const auto& t : p.tmpfs)
    if (t.path == "/") return invalid(t.origin, "cannot replace the root", "use --no-system for an empty root");
  for (const auto& h : p.hide)
    if (h.path == "/") return invalid(h.origin, "cannot hide the root");
  return Ok{};
}

// NAME=@FILE (relative to the flag's or profile's directory, ~ is the home), NAME=fd:N, NAME=env:VAR.
// Nothing is read here: the executor reads the value once, at start (common/secret.h).
Result<Secret> parse_secret(const Value& v, const std::string& home) {
  const std::string forms = "NAME=@FILE, NAME=fd:N or NAME=env:VAR";
  auto eq = v.text.find('=');
  if (eq == std::string::npos) return invalid(where(v), "expected " + forms);
  Secret s{v.text.substr(0, eq), v.text.substr(eq + 1), where(v)};
  if (!valid_env_name(s.name, false)) return invalid(where(v), "'" + s.name + "' is not a variable name");
  if (s.source.rfind('@', 0) == 0 && s.source.size() > 1) {
    Value file = v;
    file.text = s.source.substr(1);
    auto abs = absolute_path(file, home);
    if (!abs) return abs.error();
    s.source = "@" + *abs;
  } else if (s.source.rfind("fd:", 0) == 0) {
    const std::string n = s.source.substr(3);
    if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos)
      return invalid(where(v), "fd:N needs a descriptor number", "e.g. --secret TOKEN=fd:3 3<token-file");
  } else if (s.source.rfind("env:", 0) == 0) {
    if (!valid_env_name(s.source.substr(4), false)) return invalid(where(v), "env:VAR needs a variable name");
  } else {
    return invalid(where(v), "the value comes from a source, never the command line: " + forms,
                   "put it in a file (--secret " + s.name + "=@FILE) or pass it on a descriptor (fd:N)");
  }
  return s;
}

Status validate_env(const PolicyInput& in, Policy& p, const std::string& home) {
  for (const auto& v : in.env_pass) {
    if (!valid_env_name(v.text, true))
      return invalid(where(v), "not a variable name or glob", "letters, digits, '_', and '*' or '?'");
    p.env.pass.push_back(v.text);
  }
  for (const auto& v : in.env_set) {
    auto eq = v.text.find('=');
    if (eq == std::string::npos) return invalid(where(v), "expected NAME=VALUE");
    std::string name = v.text.substr(0, eq);
    if (!valid_env_name(name, false)) return invalid(where(v), "'" + name + "' is not a variable name");
    p.env.set.emplace_back(name, v.text.substr(eq + 1));
  }
  for (const auto& v : in.env_unset) {
    if (!valid_env_name(v.text, true)) return invalid(where(v), "not a variable name or glob");
    p.env.unset.push_back(v.text);
  }
  for (const auto& v : in.env_secret) {
    auto s = parse_secret(v, home);
    if (!s) return s.error();
    for (const auto& other : p.env.secrets)
      if (other.name == s->name)
        return invalid(where(v), "'" + s->name + "' is given twice", "give each secret once");
    p.env.secrets.push_back(*s);
  }
  return Ok{};
}

Status validate_limits(const PolicyInput& in, Policy& p) {
  if (in.memory) {
    auto r = parse_size(*in.memory);
    if (!r) return r.error();
    p.limits.memory_bytes = *r;
  }
  if (in.tmpfs_size) {
    auto r = parse_size(*in.tmpfs_size);
    if (!r) return r.error();
    p.limits.tmpfs_bytes = *r;
  }
  if (in.pids) {
    uint64_t n = 0;
    if (!parse_u64(in.pids->text, n) || n < 1 || n > 4194304)
      return invalid(where(*in.pids), "not a process count", "a whole number from 1 to 4194304");
    p.limits.pids = n;
  }
  if (in.cpu) {
    char* end = nullptr;
    double d = std::strtod(in.cpu->text.c_str(), &end);
    if (in.cpu->text.empty() || *end != '\0' || !(d >= 0.01) || d > 4096)
      return invalid(where(*in.cpu), "not a CPU share", "cores as a number from 0.01 to 4096, e.g. 1.5");
    p.limits.cpu = d;
  }
  if (in.timeout) {
    auto r = parse_duration_ms(*in.timeout);
    if (!r) return r.error();
    p.limits.timeout_ms = *r;
  }
  for (const auto& v : in.rlimits) {
    auto r = parse_rlimit(v);
    if (!r) return r.error();
    auto& list = p.limits.rlimits;
    list.erase(std::remove_if(list.begin(), list.end(), [&](const Rlimit& x) { return x.name == r->name; }),
               list.end());
    list.push_back(*r);
  }
  // A per-stream cap wins over --max-output, whichever source gave which.
  for (auto [own, dst] : {std::pair{&PolicyInput::max_stdout, &Limits::max_stdout},
                          std::pair{&PolicyInput::max_stderr, &Limits::max_stderr}}) {
    const auto& v = in.*own ? in.*own : in.max_output;
    if (!v) continue;
    auto r = parse_size(*v, 0);
    if (!r) return r.error();
    p.limits.*dst = *r;
    if (p.limits.output_origin.empty()) p.limits.output_origin = where(*v);
  }
  if (in.strict_limits) {
    auto b = parse_bool(*in.strict_limits);
    if (!b) return b.error();
    p.limits.strict = *b;
  }
  return Ok{};
}

Status validate_net(const PolicyInput& in, Policy& p) {
  for (const auto& v : in.net) {
    NetRule rule;
    rule.origin = where(v);
    if (std::string msg = parse_host_pattern(v.text, rule.pattern); !msg.empty())
      return invalid(where(v), msg, "write HOST:PORT, *.DOMAIN:PORT, **.DOMAIN:PORT, IP:PORT or CIDR:PORT");
    p.net.push_back(std::move(rule));
  }
  if (in.share_net) {
    auto b = parse_bool(*in.share_net);
    if (!b) return b.error();
    p.share_net = *b;
  }
  if (in.net_mode) {
    const auto& t = in.net_mode->text;
    if (t == "both") p.net_mode = Policy::NetMode::both;
    else if (t == "proxy") p.net_mode = Policy::NetMode::proxy;
    else if (t == "transparent") p.net_mode = Policy::NetMode::transparent;
    else return invalid(where(*in.net_mode), "unknown network mode '" + t + "'", "use proxy, transparent or both");
  }
  // A mode with nothing to reach is a mistake (a forgotten --net), not a quiet no-op.
  if (in.net_mode && p.net.empty())
    return invalid(where(*in.net_mode), "--net-mode without --net: no destination is allowed, so there is no "
                   "network to reach", "add --net HOST:PORT for each destination, or drop --net-mode");
  if (p.share_net && !p.net.empty())
    return invalid(in.share_net->origin, "--share-net and --net exclude each other",
                   "use --net HOST:PORT to allow destinations, or --share-net for the whole host network");
  return Ok{};
}

Status validate_misc(const PolicyInput& in, const Context& ctx, Policy& p) {
  if (in.seccomp) {
    const auto& t = in.seccomp->text;
    if (t == "default")
      p.seccomp = SeccompProfile::default_profile;
    else if (t == "relaxed")
      p.seccomp = SeccompProfile::relaxed;
    else if (t == "none")
      p.seccomp = SeccompProfile::none;
    else
      return invalid(where(*in.seccomp), "unknown seccomp profile", "use default, relaxed or none");
  }
  if (in.mechanism) {
    const auto& t = in.mechanism->text;
    if (t == "auto")
      p.mechanism = Policy::Mechanism::automatic;
    else if (t == "namespaces")
      p.mechanism = Policy::Mechanism::namespaces;
    else if (t == "landlock")
      p.mechanism = Policy::Mechanism::landlock_only;
    else
      return invalid(where(*in.mechanism), "unknown mechanism", "use auto, namespaces or landlock");
  }
  for (const auto& v : in.allow_degraded) {
    std::string item;
    for (size_t i = 0; i <= v.text.size(); ++i) {
      if (i < v.text.size() && v.text[i] != ',') {
        item += v.text[i];
        continue;
      }
      bool known = false;
      for (const char* e : kDegradableElements) known = known || item == e;
      if (!known)
        return invalid(where(v), "unknown element '" + item + "'", "use a comma-separated list of pid, hide, tmpfs, hostname, nested-ro, metadata, exec-written");
      p.allow_degraded.push_back(item);
      item.clear();
    }
  }
  if (in.no_system) {
    auto b = parse_bool(*in.no_system);
    if (!b) return b.error();
    p.system_view = !*b;
  }
  if (in.no_cwd) {
    auto b = parse_bool(*in.no_cwd);
    if (!b) return b.error();
    p.cwd_visible = !*b;
  }
  if (in.explain) {
    auto b = parse_bool(*in.explain);
    if (!b) return b.error();
    p.explain = *b;
  }
  if (in.hostname) {
    // {run_id}: the run's id, its first 12 characters (--hostname 'cage-{run_id}', for a prompt);
    // without one yet (--dry-run) the placeholder stays, checked as 12 letters.
    std::string h = in.hostname->text, checked = h;
    constexpr std::string_view kRunId = "{run_id}";
    if (auto at = h.find(kRunId); at != std::string::npos) {
      const std::string id = in.run_id ? in.run_id->text.substr(0, 12) : std::string(12, 'x');
      checked.replace(at, kRunId.size(), id);
      if (in.run_id) h = checked;
    }
    bool ok = !checked.empty() && checked.size() <= 64;
    for (char c : checked) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.');
    if (!ok)
      return invalid(where(*in.hostname), "not a host name" + (h == in.hostname->text ? "" : " (as " + h + ")"),
                     "letters, digits, '-' and '.', at most 64; {run_id} once, for the run's id");
    p.hostname = h;
  }
  if (!ctx.cwd.empty() && ctx.cwd[0] != '/')
    return Error{ErrorClass::internal_error, "current directory unknown", "", "cwd", 0};
  // An empty ctx.cwd: the current directory is gone. A --chdir does without it, unless it is relative
  // (absolute_path then refuses it, naming the flag, as any relative path).
  if (ctx.cwd.empty() && !in.chdir)
    return invalid("cwd", "the current directory is gone (deleted, or not reachable)",
                   "cd to an existing directory, or name the start directory with an absolute --chdir");
  p.cwd = ctx.cwd;
  if (in.chdir) {
    auto c = absolute_path(*in.chdir, ctx.home);
    if (!c) return c.error();
    p.cwd = *c;
  }
  if (in.learn) {
    auto f = absolute_path(*in.learn, ctx.home);
    if (!f) return f.error();
    if (*f == "/" || f->back() == '/')
      return invalid(where(*in.learn), "not a file name",
                     "name the profile to write, e.g. --learn ./cage.toml");
    p.learn = *f;
    p.learn_origin = where(*in.learn);
  }
  p.home = ctx.home;
  return Ok{};
}

// --exec PATH: a file, or a directory meaning every file beneath it. No globs: a pattern expanded
// against the host when cage starts would name a snapshot, and a directory says the same for the
// cases that matter (/usr/lib/jvm). Whether the path exists and is visible is compile's question.
Status validate_exec(const PolicyInput& in, const Context& ctx, Policy& p) {
  for (const auto& v : in.exec) {
    if (v.text.find_first_of("*?[") != std::string::npos)
      return invalid(where(v), "globs are not supported", "name the file, or the directory whose files may run");
    auto abs = absolute_path(v, ctx.home);
    if (!abs) return abs.error();
    if (std::none_of(p.exec.begin(), p.exec.end(), [&](const Grant& g) { return g.path == *abs; }))
      p.exec.push_back(Grant{*abs, where(v)});
  }
  if (in.exec_run.empty()) return Ok{};
  auto pattern = parse_argv_pattern(in.exec_run);
  if (!pattern) return pattern.error();
  if (auto s = match_argv(*pattern, in.argv); !s) return s;
  p.argv_pattern = std::move(*pattern);
  return Ok{};
}

}  // namespace

const char* const kDegradableElements[7] = {"pid", "hide", "tmpfs", "hostname", "nested-ro", "metadata", "exec-written"};

// --limits NAME: ceilings for unattended runs (an agent's tool call, CI of an untrusted repository),
// each filling a limit the caller did not give; one table. "default": room for a large build or
// package install (4 GiB, 1024 tasks, 30 minutes, 1 GiB per private tmpfs), while a runaway (a fork
// bomb, a filled /tmp, a loop printing forever) ends with a named result class instead of taking
// the machine; 16 MiB of output per stream is more than any reader of a tool call's output wants.
struct PresetLimit {
  std::optional<Value> PolicyInput::*field;
  const char* value;
};
struct Preset {
  const char* name;
  PresetLimit limits[5];
};
const Preset kPresets[] = {
    {"default",
     {{&PolicyInput::memory, "4G"},
      {&PolicyInput::pids, "1024"},
      {&PolicyInput::timeout, "30m"},
      {&PolicyInput::max_output, "16M"},
      {&PolicyInput::tmpfs_size, "1G"}}},
};

Result<PolicyInput> with_preset(const PolicyInput& given) {
  PolicyInput in = given;
  if (!given.limits_preset) return in;
  const Value& v = *given.limits_preset;
  for (const auto& preset : kPresets) {
    if (v.text != preset.name) continue;
    for (const auto& l : preset.limits)
      if (!(in.*l.field)) in.*l.field = Value{l.value, v.origin + " " + v.text, v.base};
    return in;
  }
  std::string names;
  for (const auto& preset : kPresets) names += (names.empty() ? "" : ", ") + std::string(preset.name);
  return invalid(where(v), "unknown limits preset '" + v.text + "'", "use one of: " + names);
}

Result<Policy> validate(const PolicyInput& given, const Context& ctx) {
  auto effective = with_preset(given);
  if (!effective) return effective.error();
  const PolicyInput& in = *effective;
  Policy p;
  if (in.argv.empty())
    return usage("COMMAND", "no command given", "put the command after --, e.g. cage --ro . -- make");
  if (in.argv[0].empty()) return usage("COMMAND", "the command is an empty string");
  p.argv = in.argv;
  if (auto s = validate_grants(in, ctx, p); !s) return s.error();
  if (auto s = validate_env(in, p, ctx.home); !s) return s.error();
  if (auto s = validate_limits(in, p); !s) return s.error();
  if (auto s = validate_net(in, p); !s) return s.error();
  if (auto s = validate_misc(in, ctx, p); !s) return s.error();
  if (auto s = validate_identity(in, ctx, p); !s) return s.error();
  if (auto s = validate_exec(in, ctx, p); !s) return s.error();
  return p;
}

}  // namespace cage::policy
