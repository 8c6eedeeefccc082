// Canonical policy table and its hash (see canonical.h). Pure; tested in tests/unit/report_test.cc.
#include "policy/canonical.h"

#include "common/audit.h"
#include "common/sha256.h"

namespace cage::policy {

namespace {

toml::array paths(const std::vector<Grant>& grants) {
  toml::array a;
  for (const auto& g : grants) a.push_back(g.path);
  return a;
}

toml::array strings(const std::vector<std::string>& v) {
  toml::array a;
  for (const auto& s : v) a.push_back(s);
  return a;
}

int64_t as_int(uint64_t v) { return v == UINT64_MAX ? -1 : static_cast<int64_t>(v); }

toml::table limits_table(const Limits& l) {
  toml::table t{{"strict", l.strict}};
  if (l.memory_bytes) t.insert("memory_bytes", as_int(*l.memory_bytes));
  if (l.pids) t.insert("pids", as_int(*l.pids));
  if (l.cpu) t.insert("cpu", *l.cpu);
  if (l.timeout_ms) t.insert("timeout_ms", as_int(*l.timeout_ms));
  if (l.max_stdout) t.insert("max_stdout_bytes", as_int(*l.max_stdout));
  if (l.max_stderr) t.insert("max_stderr_bytes", as_int(*l.max_stderr));
  if (l.tmpfs_bytes) t.insert("tmpfs_bytes", as_int(*l.tmpfs_bytes));
  toml::table rl;
  for (const auto& r : l.rlimits) rl.insert(r.name, toml::array{as_int(r.soft), as_int(r.hard)});
  t.insert("rlimits", std::move(rl));
  return t;
}

const char* mechanism_name(Policy::Mechanism m) {
  switch (m) {
    case Policy::Mechanism::automatic: return "auto";
    case Policy::Mechanism::namespaces: return "namespaces";
    case Policy::Mechanism::landlock_only: return "landlock";
  }
  return "?";
}

}  // namespace

toml::table canonical_table(const Policy& p, const Enforcement* used) {
  toml::array set, net;
  for (const auto& [k, v] : p.env.set) set.push_back(k + "=<redacted>");
  for (const auto& r : p.net) net.push_back(r.pattern.text);
  toml::table t{
      {"ro", paths(p.ro)},
      {"rw", paths(p.rw)},
      {"tmpfs", paths(p.tmpfs)},
      {"hide", paths(p.hide)},
      {"system_view", p.system_view},
      {"cwd_visible", p.cwd_visible},
      {"cwd", p.cwd},
      {"home", p.home},
      {"hostname", p.hostname},
      {"env", toml::table{{"pass", strings(p.env.pass)}, {"set", std::move(set)}, {"unset", strings(p.env.unset)}}},
      {"net", std::move(net)},
      {"share_net", p.share_net},
      {"limits", limits_table(p.limits)},
      {"seccomp", std::string(to_string(p.seccomp))},
      {"argv", strings(p.argv)},
      {"mechanism", mechanism_name(p.mechanism)},
      {"allow_degraded", strings(p.allow_degraded)},
  };
  toml::table sizes;  // --tmpfs PATH:size=SIZE
  for (const auto& g : p.tmpfs)
    if (g.size_bytes) sizes.insert(g.path, as_int(g.size_bytes));
  if (!sizes.empty()) t["limits"].as_table()->insert("tmpfs_sizes", std::move(sizes));
  if (!p.env.secrets.empty()) {  // name and source only: the value is never known here
    toml::array secrets;
    for (const auto& s : p.env.secrets) secrets.push_back(s.name + " from " + s.source);
    t["env"].as_table()->insert("secret", std::move(secrets));
  }
  // What changes the sandbox is hashed; labels and the run id only name the run. Absent when unset,
  // so hashes of policies without them stay as they were.
  if (p.scratch) t.insert("scratch", p.scratch->name);
  if (p.run_as) t.insert("uid", std::to_string(p.run_as->uid) + ":" + std::to_string(p.run_as->gid));
  if (!p.exec.empty()) t.insert("exec", paths(p.exec));  // --exec: what the workload may execute
  if (p.argv_pattern) {                                   // [exec] run: the pinned command line
    toml::array words;
    for (const auto& w : p.argv_pattern->words) words.push_back(w.text);
    t.insert("exec_run", std::move(words));
  }
  if (used) t.insert("enforced", toml::table{{"mechanism", used->mechanism}, {"degraded", strings(used->degraded)}});
  return t;
}

std::string policy_hash(const Policy& p, const Enforcement* used) {
  return "sha256:" + sha256_hex(audit::to_json_line(canonical_table(p, used)));
}

}  // namespace cage::policy
