// The OS-neutral pieces of a run's records (--result "cage.result/2", --audit "cage.audit/1"): the
// result class, the signal names, and the fields of the error and net events. Each backend's report
// (linux/result.cc, macos/report.cc) builds its spawn event and result from these, so a class or an
// event reads the same whichever OS ran the command. Pure; tests/unit/report_test.cc.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/toml.h"
#include "proxy/event.h"

namespace cage::record {

// The workload's end, then one class per ErrorClass (the workload never ran, or cage killed it).
enum class RunClass {
  completed, timed_out, oom_killed, pids_exhausted, seccomp_killed, signaled, disk_quota_exceeded, network_denied,
  usage_error, invalid_policy, sandbox_unavailable, capability_denied, exec_failed, not_found, internal_error
};
std::string_view to_string(RunClass c);
RunClass run_class_of(ErrorClass e);  // one table: each ErrorClass has its own class

// "SIGKILL" (the C library's abbreviation; "SIG<N>" for a number it does not name).
std::string signal_name(int sig);

// The proxy's decisions, counted for the result's network object.
struct NetTotals {
  int64_t allowed = 0, denied = 0, failed = 0;
  int64_t bytes_up = 0, bytes_down = 0;
  void count(const proxy::NetEvent& e);
};
toml::table net_totals_fields(const NetTotals& n);

toml::table net_fields(const proxy::NetEvent& e);  // the "net" event
// A refused or failed connection's identity for the audit log's coalescing (audit_coalesce.h):
// what was asked and what was answered, not its time, bytes or duration.
std::string net_identity(const proxy::NetEvent& e);
toml::table error_fields(const Error& e);          // the "error" event's and the result's error

}  // namespace cage::record
