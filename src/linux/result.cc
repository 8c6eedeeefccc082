// Result class and JSON shapes of the result and the audit events (see result.h). Pure; each class
// is reached by tests/integration/limits_*.sh and the shapes are checked in tests/unit/report_test.cc
// against docs/schema/*.schema.json.
#include "common/exit_status.h"
#include "linux/result.h"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include "common/audit.h"
#include "linux/compile.h"
#include "policy/canonical.h"

namespace cage::lx::report {

int signal_of(const RunFacts& f) {
  if (!f.outcome) return 0;
  int st = f.outcome->wait_status;
  return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

RunClass classify(const RunFacts& f) {
  if (f.error) return run_class_of(f.error->cls);
  if (!f.outcome || f.outcome->aborted) return RunClass::sandbox_unavailable;
  const RunOutcome& o = *f.outcome;
  if (o.timed_out) return RunClass::timed_out;
  int sig = signal_of(f);
  if (sig == SIGSYS) return RunClass::seccomp_killed;
  bool success = WIFEXITED(o.wait_status) && WEXITSTATUS(o.wait_status) == 0;
  if (!success && o.cgroup.oom_kills > 0) return RunClass::oom_killed;
  if (!success && o.cgroup.pids_refused > 0) return RunClass::pids_exhausted;
  if (sig != 0) return RunClass::signaled;
  if (success) return RunClass::completed;
  if (std::any_of(o.tmpfs.begin(), o.tmpfs.end(), [](const TmpfsUsage& t) { return t.full; }))
    return RunClass::disk_quota_exceeded;
  if (f.net.denied > 0) return RunClass::network_denied;
  return RunClass::completed;
}

namespace {

std::string human_ms(uint64_t ms) {
  if (ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string human_bytes(uint64_t b) {
  for (auto [unit, shift] : {std::pair{"G", 30}, std::pair{"M", 20}, std::pair{"K", 10}})
    if (b % (1ULL << shift) == 0) return std::to_string(b >> shift) + unit;
  return std::to_string(b);
}

// Each death cage can explain, once: what killed the command and what to change.
struct DeathNote {
  RunClass cls;
  const char* what;    // "{}" is replaced by the detail built below
  const char* remedy;
};
constexpr DeathNote kDeathNotes[] = {
    {RunClass::seccomp_killed, "was killed by the seccomp filter (SIGSYS, exit 159): {}",
     "if the command needs that call, run it with --seccomp relaxed"},
    {RunClass::timed_out, "was stopped by {} (exit 124)",
     "give it longer with --timeout"},
    {RunClass::oom_killed, "was killed by the kernel's OOM killer: the sandbox reached {} (SIGKILL, exit 137)",
     "raise --memory"},
    {RunClass::disk_quota_exceeded, "exited non-zero with a private filesystem full: {}",
     "give it more with --tmpfs-size SIZE, or --tmpfs PATH:size=SIZE for one of yours"},
    {RunClass::network_denied, "exited non-zero after --net denied {}",
     "allow what it needs with --net HOST:PORT (each denial is printed as 'cage: net: denied')"},
};

}  // namespace

std::string death_note(RunClass cls, const policy::Policy& p, std::string_view killing_calls, const RunFacts* f) {
  const std::string profile(policy::to_string(p.seccomp));
  std::string detail;
  if (cls == RunClass::seccomp_killed)
    detail = killing_calls.empty() ? "a system call the '" + profile + "' profile forbids, or a SIGSYS sent to it"
                                   : "a system call the '" + profile + "' profile kills: one of " +
                                         std::string(killing_calls) + " (cage cannot tell which)";
  else if (cls == RunClass::timed_out)
    detail = p.limits.timeout_ms ? "--timeout " + human_ms(*p.limits.timeout_ms) : "--timeout";
  else if (cls == RunClass::oom_killed)
    detail = p.limits.memory_bytes ? "--memory " + human_bytes(*p.limits.memory_bytes) : "its memory limit";
  else if (cls == RunClass::disk_quota_exceeded && f && f->outcome)
    for (const auto& t : f->outcome->tmpfs)
      if (t.full)
        detail += (detail.empty() ? "" : ", ") + t.path + " (size " + human_bytes(static_cast<uint64_t>(t.size_bytes)) + ")";
  if (cls == RunClass::network_denied && f)
    detail = std::to_string(f->net.denied) + (f->net.denied == 1 ? " connection or lookup" : " connections or lookups");
  for (const auto& n : kDeathNotes)
    if (n.cls == cls) {
      std::string what = n.what;  // every entry has one "{}"
      what.replace(what.find("{}"), 2, detail);
      return "cage: the command " + what + "; " + n.remedy;
    }
  return {};
}

toml::table unenforced_fields(const Unenforced& u) {
  toml::table t{{"limit", u.limit}, {"reason", u.why}};
  if (!u.fallback.empty()) t.insert("fallback", u.fallback);
  return t;
}

toml::table result_table(const RunFacts& f) {
  RunClass cls = classify(f);
  int exit_code = f.error ? exit_status_of(*f.error) : f.outcome ? f.outcome->exit_status : exit_status::kCageError;
  toml::table t{{"schema", audit::kResultSchema},
                {"run_id", f.run_id},
                {"class", std::string(to_string(cls))},
                {"exit_code", exit_code},
                {"wall_ms", f.wall_ms}};
  if (int sig = signal_of(f)) {
    t.insert("signal", sig);
    t.insert("signal_name", signal_name(sig));
  }
  if (f.outcome && WIFEXITED(f.outcome->wait_status) && f.outcome->have_wait_status)
    t.insert("workload_exit_code", WEXITSTATUS(f.outcome->wait_status));
  if (!f.policy_hash.empty()) t.insert("policy_hash", f.policy_hash);
  if (!f.labels.empty()) t.insert("labels", f.labels);
  if (!f.enforced.mechanism.empty()) {
    toml::array degraded;
    for (const auto& d : f.enforced.degraded) degraded.push_back(d);
    t.insert("mechanism", f.enforced.mechanism);
    t.insert("degraded", std::move(degraded));
  }
  if (f.user_ms >= 0) t.insert("cpu", toml::table{{"user_ms", f.user_ms}, {"system_ms", f.system_ms}});
  toml::table mem;
  if (f.outcome && f.outcome->cgroup.memory_peak >= 0) {
    mem.insert("peak_bytes", f.outcome->cgroup.memory_peak);
    mem.insert("source", "cgroup");
  } else if (f.maxrss_bytes >= 0) {
    mem.insert("peak_bytes", f.maxrss_bytes);
    mem.insert("source", "ru_maxrss");  // the largest single process, not the sandbox's total
  }
  if (!mem.empty()) t.insert("memory", std::move(mem));
  toml::table limits;
  if (f.outcome && f.outcome->cgroup.oom_kills >= 0) limits.insert("oom_kills", f.outcome->cgroup.oom_kills);
  if (f.outcome && f.outcome->cgroup.pids_refused >= 0) limits.insert("pids_refused", f.outcome->cgroup.pids_refused);
  if (f.outcome && !f.outcome->cgroup.path.empty()) limits.insert("cgroup", f.outcome->cgroup.path);
  toml::array unenforced;
  for (const auto& u : f.unenforced) unenforced.push_back(unenforced_fields(u));
  limits.insert("not_enforced", std::move(unenforced));
  t.insert("limits", std::move(limits));
  if (f.explained) {  // --explain
    toml::array found;
    for (const auto& e : *f.explained) found.push_back(explain::finding_fields(e));
    t.insert("explain", toml::table{{"findings", std::move(found)},
                                    {"not_recorded", static_cast<int64_t>(f.explain_dropped)}});
  }
  if (f.learned) t.insert("learn", toml::table{{"file", f.learned->file}, {"written", f.learned->written}});
  if (f.outcome && !f.outcome->output.empty()) {  // each capped stream (--max-output)
    toml::table output;
    for (const auto& o : f.outcome->output)
      output.insert(o.name, toml::table{{"cap_bytes", static_cast<int64_t>(o.cap)},
                                        {"written_bytes", static_cast<int64_t>(o.written)},
                                        {"dropped_bytes", static_cast<int64_t>(o.dropped)},
                                        {"sha256", o.sha256},
                                        {"reader_left", o.broken}});
    t.insert("output", std::move(output));
  }
  t.insert("network", record::net_totals_fields(f.net));
  if (f.outcome && !f.outcome->tmpfs.empty()) {
    toml::array fs;
    for (const auto& u : f.outcome->tmpfs)
      fs.push_back(toml::table{
          {"path", u.path}, {"size_bytes", u.size_bytes}, {"used_bytes", u.used_bytes}, {"full", u.full}});
    t.insert("tmpfs", std::move(fs));
  }
  toml::table audit{{"requested", f.audit_requested}, {"ok", f.audit_ok}};
  if (!f.audit_error.empty()) audit.insert("error", f.audit_error);
  t.insert("audit", std::move(audit));
  if (!f.layers.empty()) {
    toml::array layers;
    for (const auto& l : f.layers) layers.push_back(l);
    t.insert("layers", std::move(layers));
  }
  if (f.error) t.insert("error", error_fields(*f.error));
  return t;
}

policy::Enforcement enforcement_of(const Plan& plan) {
  policy::Enforcement e;
  e.mechanism = plan.mechanism == Mechanism::landlock_only ? "landlock" : "namespaces";
  for (const auto& d : plan.degraded) e.degraded.push_back(d.substr(0, d.find(':')));  // "pid: no pid namespace..."
  return e;
}

// The spawn event's cgroup: where the limits are to live (a user scope is named by its manager).
toml::table cgroup_fields(const CgroupPlan& cg, toml::array dirs) {
  const char* via = cg.via == CgroupVia::user_scope ? "user_scope" : cg.via == CgroupVia::direct ? "direct" : "none";
  toml::table t{{"version", cg.version}, {"via", via}, {"dirs", std::move(dirs)}};
  if (cg.via == CgroupVia::user_scope) t.insert("manager", cg.scope.socket);
  return t;
}

toml::table spawn_fields(const policy::Policy& p, const Plan& plan, const std::string& hash, const std::string& kernel,
                         const std::string& arch) {
  // The namespaces execute.cc actually creates: none at all for the Landlock-only mechanism.
  const policy::Enforcement used = enforcement_of(plan);
  toml::array ns;
  for (const auto& n : plan.init.namespaces) ns.push_back(n);
  toml::array degraded;
  for (const auto& d : used.degraded) degraded.push_back(d);
  toml::array hatches;
  if (plan.seccomp.profile == policy::SeccompProfile::none) hatches.push_back("--seccomp none");
  if (plan.net.mode == NetPlan::Mode::host) hatches.push_back("--share-net");
  toml::array dirs, unenforced;
  for (const auto& d : plan.cgroup.dirs)
    dirs.push_back(toml::table{{"controller", d.controller}, {"parent", d.parent}});
  for (const auto& u : plan.cgroup.unenforced) unenforced.push_back(unenforced_fields(u));
  const char* net = plan.net.mode == NetPlan::Mode::proxy ? "proxy" : plan.net.mode == NetPlan::Mode::host ? "host" : "none";
  toml::array layers;
  for (const auto& l : layers_in_force(plan)) layers.push_back(l);
  toml::table mech{{"mechanism", used.mechanism},
                   {"degraded", std::move(degraded)},
                   {"namespaces", std::move(ns)},
                   {"landlock_abi", plan.landlock.abi},
                   {"landlock", landlock_layer(plan)},
                   {"layers", std::move(layers)},
                   {"seccomp", std::string(policy::to_string(plan.seccomp.profile))},
                   {"network", net},
                   {"cgroup", cgroup_fields(plan.cgroup, std::move(dirs))},
                   {"limits_not_enforced", std::move(unenforced)},
                   {"escape_hatches", std::move(hatches)}};
  return toml::table{{"policy", policy::canonical_table(p, &used)},
                     {"policy_hash", hash},
                     {"cage_version", CAGE_VERSION},
                     {"platform", toml::table{{"os", "linux"}, {"kernel", kernel}, {"arch", arch}}},
                     {"mechanisms", std::move(mech)}};
}

}  // namespace cage::lx::report
