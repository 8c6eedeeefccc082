// Where a run's result and audit events go (--result, --audit, --audit-required, --quiet, --run-id).
// The CLI fills it; the backends' report sessions read it. It sits below both so that the include
// graph flows one way: cli -> backend -> linux/macos/windows -> common.
#pragma once
#include <string>

namespace cage {

struct ReportOptions {
  std::string result, audit;  // "FILE" or "fd:N", or empty
  bool audit_required = false;
  bool quiet = false;  // --quiet: no notes of cage's own on stderr (why the command died, ...); errors still
  std::string run_id;  // --run-id or generated (main.cc), before the session opens
};

}  // namespace cage
