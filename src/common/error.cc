#include "common/error.h"

#include <cstring>

#include "common/exit_status.h"
#include "common/json.h"

namespace cage {

namespace {
std::string g_run_id;
std::vector<std::pair<std::string, std::string>> g_labels;
}  // namespace

void set_error_context(std::string run_id, std::vector<std::pair<std::string, std::string>> labels) {
  g_run_id = std::move(run_id);
  g_labels = std::move(labels);
}

std::string_view to_string(ErrorClass cls) {
  switch (cls) {
    case ErrorClass::usage_error: return "usage_error";
    case ErrorClass::invalid_policy: return "invalid_policy";
    case ErrorClass::spawn_sandbox_unavailable: return "spawn_sandbox_unavailable";
    case ErrorClass::capability_denied: return "capability_denied";
    case ErrorClass::exec_failed: return "exec_failed";
    case ErrorClass::not_found: return "not_found";
    case ErrorClass::internal_error: return "internal_error";
  }
  return "internal_error";
}

std::string render_error_text(const Error& e) {
  std::string s = "cage: ";
  s += to_string(e.cls);
  s += ": ";
  if (!e.input.empty()) s += e.input + ": ";
  s += e.reason;
  if (e.sys_errno != 0) s += std::string(" (") + std::strerror(e.sys_errno) + ")";
  if (!e.remedy.empty()) s += " (remedy: " + e.remedy + ")";
  return printable(s);  // an input or reason may carry a name from a file, the network or the workload
}

std::string render_error_json(const Error& e) {
  toml::table inner{{"class", std::string(to_string(e.cls))}, {"reason", e.reason}};
  if (!e.remedy.empty()) inner.insert("remedy", e.remedy);
  if (!e.input.empty()) inner.insert("input", e.input);
  if (e.sys_errno != 0) {
    inner.insert("errno", e.sys_errno);
    inner.insert("strerror", std::string(std::strerror(e.sys_errno)));
  }
  inner.insert("exit_status", exit_status_of(e));
  toml::table outer{{"error", std::move(inner)}};
  if (!g_run_id.empty()) outer.insert("run_id", g_run_id);
  if (!g_labels.empty()) {
    toml::table labels;
    for (const auto& [k, v] : g_labels) labels.insert_or_assign(k, v);
    outer.insert("labels", std::move(labels));
  }
  return to_json_line(outer);
}

int exit_status_of(const Error& e) {
  switch (e.cls) {
    case ErrorClass::exec_failed: return exit_status::kCannotExecute;
    case ErrorClass::not_found: return exit_status::kNotFound;
    case ErrorClass::usage_error:
    case ErrorClass::invalid_policy:
    case ErrorClass::spawn_sandbox_unavailable:
    case ErrorClass::capability_denied:
    case ErrorClass::internal_error: return exit_status::kCageError;
  }
  return exit_status::kCageError;
}

}  // namespace cage
