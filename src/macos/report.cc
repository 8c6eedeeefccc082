// The macOS records (see report.h). Pure: no Mac needed, so every field is tested on Linux against
// the published schemas (tests/unit/macos_report_test.cc).
#include "macos/report.h"

#include "common/audit.h"
#include "common/exit_status.h"
#include "common/sha256.h"

namespace cage::macos::report {

namespace {

std::string human_bytes(uint64_t b) {
  for (auto [unit, shift] : {std::pair{"G", 30}, std::pair{"M", 20}, std::pair{"K", 10}})
    if (b % (1ULL << shift) == 0) return std::to_string(b >> shift) + unit;
  return std::to_string(b);
}

std::string cpu_text(double cores) {
  std::string s = std::to_string(cores);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// "--memory 512M": the flag as the schema names it, with the value asked for.
std::string limit_text(const policy::Policy& p, const std::string& flag) {
  if (flag == "--memory" && p.limits.memory_bytes) return flag + " " + human_bytes(*p.limits.memory_bytes);
  if (flag == "--pids" && p.limits.pids) return flag + " " + std::to_string(*p.limits.pids);
  if (flag == "--cpu" && p.limits.cpu) return flag + " " + cpu_text(*p.limits.cpu);
  return flag + " ";
}

const char* network_of(const policy::Policy& p) {
  return !p.net.empty() ? "proxy" : p.share_net ? "host" : "none";
}

}  // namespace

RunClass classify(const RunFacts& f) {
  if (f.error) return record::run_class_of(f.error->cls);
  if (!f.ended || f.ended->aborted) return RunClass::sandbox_unavailable;
  if (f.ended->timed_out) return RunClass::timed_out;
  if (f.ended->signal != 0) return RunClass::signaled;
  if (f.ended->exit_code == 0) return RunClass::completed;
  if (f.net.denied > 0) return RunClass::network_denied;
  return RunClass::completed;
}

std::vector<toml::table> unenforced_fields(const policy::Policy& p,
                                           const std::vector<std::string>& unenforced) {
  std::vector<toml::table> out;
  for (const auto& u : unenforced) {
    const size_t colon = u.find(": ");
    const std::string flag = u.substr(0, colon);
    out.push_back(toml::table{{"limit", limit_text(p, flag)},
                              {"reason", colon == std::string::npos ? u : u.substr(colon + 2)}});
  }
  return out;
}

policy::Enforcement enforcement() {
  return policy::Enforcement{kMechanism, {}};
}

toml::table spawn_fields(const policy::Policy& p, const MacPlan& plan, const std::string& hash,
                         const std::string& kernel, const std::string& arch) {
  const policy::Enforcement used = enforcement();
  toml::array unenforced, hatches, layers;
  for (auto& u : unenforced_fields(p, plan.unenforced)) unenforced.push_back(std::move(u));
  if (p.share_net) hatches.push_back("--share-net");
  layers.push_back("seatbelt: sandbox-exec, deny-default SBPL profile");
  layers.push_back(std::string("network: ") + network_of(p));
  // The digest names the exact profile sandbox-exec was given (the proxy's port and the private
  // directories make it differ run to run); --dry-run --target macos -v prints one like it.
  toml::table mech{{"mechanism", kMechanism},
                   {"profile_sha256", sha256_hex(plan.sbpl)},
                   {"private_home", plan.private_home},
                   {"layers", std::move(layers)},
                   {"network", network_of(p)},
                   {"limits_not_enforced", std::move(unenforced)},
                   {"escape_hatches", std::move(hatches)}};
  return toml::table{{"policy", policy::canonical_table(p, &used)},
                     {"policy_hash", hash},
                     {"cage_version", CAGE_VERSION},
                     {"platform", toml::table{{"os", "macos"}, {"kernel", kernel}, {"arch", arch}}},
                     {"mechanisms", std::move(mech)}};
}

toml::table exit_fields(const RunFacts& f) {
  const int code = f.ended ? f.ended->exit_status : exit_status::kCageError;
  toml::table t{
      {"class", std::string(record::to_string(classify(f)))}, {"exit_code", code}, {"wall_ms", f.wall_ms}};
  if (f.ended && f.ended->signal) t.insert("signal", record::signal_name(f.ended->signal));
  return t;
}

toml::table result_table(const RunFacts& f) {
  const int exit_code = f.error   ? exit_status_of(*f.error)
                        : f.ended ? f.ended->exit_status
                                  : exit_status::kCageError;
  toml::table t{{"schema", audit::kResultSchema},
                {"run_id", f.run_id},
                {"class", std::string(record::to_string(classify(f)))},
                {"exit_code", exit_code},
                {"wall_ms", f.wall_ms}};
  if (f.ended && f.ended->signal) {
    t.insert("signal", f.ended->signal);
    t.insert("signal_name", record::signal_name(f.ended->signal));
  }
  if (f.ended && f.ended->exit_code) t.insert("workload_exit_code", *f.ended->exit_code);
  if (!f.policy_hash.empty()) t.insert("policy_hash", f.policy_hash);
  if (!f.labels.empty()) t.insert("labels", f.labels);
  if (f.compiled) {
    t.insert("mechanism", kMechanism);
    t.insert("degraded", toml::array{});
  }
  if (f.user_ms >= 0) t.insert("cpu", toml::table{{"user_ms", f.user_ms}, {"system_ms", f.system_ms}});
  if (f.maxrss_bytes >= 0)  // the largest single process, not the sandbox's total: macOS has no cgroup
    t.insert("memory", toml::table{{"peak_bytes", f.maxrss_bytes}, {"source", "ru_maxrss"}});
  toml::array unenforced;
  for (const auto& u : f.unenforced) unenforced.push_back(u);
  t.insert("limits", toml::table{{"not_enforced", std::move(unenforced)}});
  t.insert("network", record::net_totals_fields(f.net));
  toml::table audit{{"requested", f.audit_requested}, {"ok", f.audit_ok}};
  if (!f.audit_error.empty()) audit.insert("error", f.audit_error);
  t.insert("audit", std::move(audit));
  if (f.error) t.insert("error", record::error_fields(*f.error));
  return t;
}

}  // namespace cage::macos::report
