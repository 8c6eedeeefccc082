// A transient scope from the caller's systemd user manager: on a cgroup v2 desktop an unprivileged
// user's shell sits in a session scope it cannot write, and only user@UID.service is delegated, so
// cage asks the user manager (as `systemd-run --user --scope` does) for "cage-<pid>.scope" holding
// the sandbox's init, with the limits as unit properties. A minimal D-Bus client of its own (cage is
// static: no libsystemd). Proved by tests/unit/systemd_scope_test.cc, tests/fuzz/dbus_fuzz.cc and
// tests/kernel-matrix/limits_user_scope.sh.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "linux/plan.h"

namespace cage::lx::dbus {

// One D-Bus message as far as cage reads it: header fields and, for the bodies it needs, the
// leading string-like arguments ("o" of a method return, "s" of an error, "uoss" of JobRemoved).
struct Message {
  uint8_t type = 0;  // 1 method call, 2 method return, 3 error, 4 signal
  uint32_t serial = 0, reply_serial = 0;
  std::string path, interface, member, error_name, signature;
  std::vector<std::string> args;  // string-like arguments of the body, in order (u as decimal)
};

constexpr size_t kMaxMessage = 1 << 20;  // larger messages end the conversation (systemd's are small)

// Parses the message at the start of buf. >0: its size (out filled); 0: more bytes needed; -1: invalid.
long parse_message(std::string_view buf, Message& out);
// The StartTransientUnit call (signature ssa(sv)a(sa(sv))): mode "fail", PIDs=[pid], Delegate=yes,
// CollectMode=inactive-or-failed, OOMPolicy=continue, plus the plan's numeric properties.
std::string start_transient_unit(uint32_t serial, const std::string& unit, const std::vector<uint32_t>& pids,
                                 const std::vector<ScopeProperty>& props);
// "AUTH EXTERNAL <hex of the decimal uid>" as sent after the initial NUL byte.
std::string sasl_external(uint32_t uid);

}  // namespace cage::lx::dbus

namespace cage::lx {

// Asks the user manager at `socket` for `unit` holding pids, waits until its job is done, and
// returns the scope's cgroup path as /proc/<pids[0]>/cgroup names it ("/user.slice/.../cage-1.scope").
// Bounded by timeout_ms. The error's reason says what the manager answered.
Result<std::string> start_user_scope(const std::string& socket, const std::string& unit, std::vector<int> pids,
                                     const std::vector<ScopeProperty>& props, int timeout_ms);

}  // namespace cage::lx
