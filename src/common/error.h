// The one error type of cage: a class from a closed set, a reason, a remedy and the input at fault.
// Rendered once, at the top (main.cc), as a line or as JSON (--json-errors).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace cage {

enum class ErrorClass {
  usage_error,
  invalid_policy,
  spawn_sandbox_unavailable,
  capability_denied,
  exec_failed,
  not_found,
  internal_error,
};

struct Error {
  ErrorClass cls = ErrorClass::internal_error;
  std::string reason;
  std::string remedy;
  std::string input;  // the flag, profile key or path at fault: "--rw ./out", "cage.toml:12 net"
  int sys_errno = 0;
};

template <class T>
using Result = Expected<T, Error>;
using Status = Expected<Ok, Error>;

std::string_view to_string(ErrorClass cls);
std::string render_error_text(const Error& e);
std::string render_error_json(const Error& e);
// The run's id and labels once known (main.cc): --json-errors prints them next to the error, so a
// caller running many sandboxes can tell whose error it is.
void set_error_context(std::string run_id, std::vector<std::pair<std::string, std::string>> labels = {});
// 125 for cage's own errors; 126 when the command cannot be executed, 127 when it is not found.
int exit_status_of(const Error& e);

inline Error usage(std::string input, std::string reason, std::string remedy = {}) {
  return Error{ErrorClass::usage_error, std::move(reason), std::move(remedy), std::move(input), 0};
}
inline Error invalid(std::string input, std::string reason, std::string remedy = {}) {
  return Error{ErrorClass::invalid_policy, std::move(reason), std::move(remedy), std::move(input), 0};
}
inline Error unavailable(std::string input, std::string reason, std::string remedy, int err = 0) {
  return Error{ErrorClass::spawn_sandbox_unavailable, std::move(reason), std::move(remedy), std::move(input),
               err};
}

}  // namespace cage
