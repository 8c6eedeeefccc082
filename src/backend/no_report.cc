// Reporting for backends without --result/--audit support (Windows, unsupported OSes): those options are
// refused, never silently dropped, and errors are rendered straight to stderr.
#include <iostream>

#include "backend/backend.h"

namespace cage::backend {

Status open_report(const ReportOptions& opts, bool for_run) {
  if (!for_run) return Ok{};
  const char* flag = !opts.result.empty() ? "--result" : !opts.audit.empty() ? "--audit" : nullptr;
  if (!flag && opts.audit_required) flag = "--audit-required";
  if (!flag) return Ok{};
  return unavailable(flag, std::string("not implemented on ") + host_os() + " yet", std::string("drop ") + flag);
}

void report_policy(const policy::Policy&) {}

int fail(const Error& e, bool json) {
  std::cerr << (json ? render_error_json(e) : render_error_text(e)) << std::endl;
  return exit_status_of(e);
}

}  // namespace cage::backend
