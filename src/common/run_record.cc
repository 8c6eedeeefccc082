// The shared parts of the result and the audit events (see run_record.h). Pure.
#include "common/run_record.h"

#include <csignal>
#include <cstring>

#if defined(__APPLE__)
#include <cctype>
#endif

namespace cage::record {

namespace {

constexpr std::pair<RunClass, const char*> kRunClassNames[] = {
    {RunClass::completed, "completed"},
    {RunClass::timed_out, "timed_out"},
    {RunClass::oom_killed, "oom_killed"},
    {RunClass::pids_exhausted, "pids_exhausted"},
    {RunClass::seccomp_killed, "seccomp_killed"},
    {RunClass::signaled, "signaled"},
    {RunClass::disk_quota_exceeded, "disk_quota_exceeded"},
    {RunClass::network_denied, "network_denied"},
    {RunClass::usage_error, "usage_error"},
    {RunClass::invalid_policy, "invalid_policy"},
    {RunClass::sandbox_unavailable, "sandbox_unavailable"},
    {RunClass::capability_denied, "capability_denied"},
    {RunClass::exec_failed, "exec_failed"},
    {RunClass::not_found, "not_found"},
    {RunClass::internal_error, "internal_error"},
};

// cage's own error, one class each: the result tells a mistyped flag from a missing --rw path, a
// refused setuid program, a host that cannot sandbox, and a command that is not there.
constexpr std::pair<ErrorClass, RunClass> kErrorClasses[] = {
    {ErrorClass::usage_error, RunClass::usage_error},
    {ErrorClass::invalid_policy, RunClass::invalid_policy},
    {ErrorClass::spawn_sandbox_unavailable, RunClass::sandbox_unavailable},
    {ErrorClass::capability_denied, RunClass::capability_denied},
    {ErrorClass::exec_failed, RunClass::exec_failed},
    {ErrorClass::not_found, RunClass::not_found},
    {ErrorClass::internal_error, RunClass::internal_error},
};

}  // namespace

std::string_view to_string(RunClass c) {
  for (const auto& [cls, name] : kRunClassNames)
    if (cls == c) return name;
  return "internal_error";
}

RunClass run_class_of(ErrorClass e) {
  for (const auto& [err, cls] : kErrorClasses)
    if (err == e) return cls;
  return RunClass::internal_error;
}

std::string signal_name(int sig) {
#if defined(__linux__)
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "SIG" + std::to_string(sig);
#elif defined(__APPLE__)
  // The BSDs name signals in lower case ("kill") in sys_signame.
  if (sig <= 0 || sig >= NSIG) return "SIG" + std::to_string(sig);
  std::string s = "SIG";
  for (const char* c = sys_signame[sig]; *c; ++c)
    s += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  return s;
#else
  return "SIG" + std::to_string(sig);
#endif
}

void NetTotals::count(const proxy::NetEvent& e) {
  (e.decision == proxy::Decision::allowed  ? allowed
   : e.decision == proxy::Decision::denied ? denied
                                           : failed)++;
  bytes_up += static_cast<int64_t>(e.bytes_up);
  bytes_down += static_cast<int64_t>(e.bytes_down);
}

toml::table net_totals_fields(const NetTotals& n) {
  return toml::table{{"allowed", n.allowed},
                     {"denied", n.denied},
                     {"failed", n.failed},
                     {"bytes_up", n.bytes_up},
                     {"bytes_down", n.bytes_down}};
}

toml::table error_fields(const Error& e) {
  toml::table t{{"class", std::string(cage::to_string(e.cls))}, {"reason", e.reason}, {"input", e.input}};
  if (!e.remedy.empty()) t.insert("remedy", e.remedy);
  if (e.sys_errno) t.insert("errno", e.sys_errno);
  return t;
}

toml::table net_fields(const proxy::NetEvent& e) {
  toml::table t{{"protocol", e.protocol},
                {"host", e.host},
                {"port", static_cast<int64_t>(e.port)},
                {"decision", std::string(proxy::to_string(e.decision))},
                {"bytes_up", static_cast<int64_t>(e.bytes_up)},
                {"bytes_down", static_cast<int64_t>(e.bytes_down)},
                {"duration_ms", static_cast<int64_t>(e.duration.count())}};
  if (!e.rule.empty()) t.insert("rule", e.rule);
  if (!e.reason.empty()) t.insert("reason", e.reason);
  if (!e.address.empty()) t.insert("address", e.address);
  if (e.status) t.insert("status", e.status);
  return t;
}

std::string net_identity(const proxy::NetEvent& e) {
  // Each text is length-prefixed: no bytes of the workload's host name can make two identities one.
  std::string k;
  for (const std::string* s : {&e.protocol, &e.host, &e.rule, &e.reason, &e.address}) {
    k += std::to_string(s->size()) + ':' + *s + '\0';
  }
  return k + std::string(proxy::to_string(e.decision)) + '\0' + std::to_string(e.port) + '\0' +
         std::to_string(e.status);
}

}  // namespace cage::record
