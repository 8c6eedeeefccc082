// The run's result (--result, "cage.result/2") and the fields of each audit event ("cage.audit/1"),
// built from what a run produced. Pure: report.cc gathers the facts, this file decides the class and
// the shape (docs/schema/result.schema.json, audit-event.schema.json).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/run_record.h"
#include "common/toml.h"
#include "linux/execute.h"
#include "linux/explain.h"
#include "linux/plan.h"
#include "policy/canonical.h"
#include "policy/policy.h"
#include "proxy/event.h"

namespace cage::lx::report {

// The class, the signal names and the net and error fields are shared with the other backends.
using record::NetTotals;
using record::RunClass;
using record::error_fields;
using record::net_fields;
using record::run_class_of;
using record::signal_name;
using record::to_string;

struct RunFacts {
  std::string run_id, policy_hash;          // hash empty when the policy never validated
  toml::table labels;                       // --label, once the policy validated
  std::optional<Error> error;               // cage's own error: the workload never started
  std::optional<RunOutcome> outcome;        // the run, when it happened
  int64_t wall_ms = 0;
  int64_t user_ms = -1, system_ms = -1;     // getrusage(RUSAGE_CHILDREN): every reaped process of the sandbox
  int64_t maxrss_bytes = -1;                // the largest single process (ru_maxrss)
  NetTotals net;
  std::vector<Unenforced> unenforced;
  std::vector<std::string> layers;          // the plan's layers in force (layers_in_force), once compiled
  bool audit_requested = false, audit_ok = true;
  std::string audit_error;
  policy::Enforcement enforced;  // the mechanism used and the accepted losses; empty before compile
  // --explain: what the policy refused or hid (explain.h), and the distinct accesses not recorded.
  std::optional<std::vector<explain::Finding>> explained;
  uint64_t explain_dropped = 0;
  // --learn: the profile's file, and whether it was written.
  struct Learned {
    std::string file;
    bool written = false;
  };
  std::optional<Learned> learned;
};

// The class decision, in this order: cage's error, each ErrorClass to its own class (kErrorClasses
// in result.cc; sandbox_unavailable also when --audit-required aborted the run); timed_out; the
// workload died of SIGSYS: seccomp_killed; then, for a workload that did not exit 0, oom_killed if
// the kernel OOM-killed any process of the run's cgroup, pids_exhausted if pids.max refused any fork;
// signaled for any other death by signal; then, for a workload that exited non-zero,
// disk_quota_exceeded if a sized private tmpfs was full when it ended, network_denied if --net
// denied at least one of its connections or lookups; completed otherwise (whatever its exit code).
// A workload that exits 0 is completed whatever was denied or filled: the counts say it.
RunClass classify(const RunFacts& f);
int signal_of(const RunFacts& f);  // the signal the workload died of, or 0

// The one line cage prints on stderr (unless --quiet) when the run died of something cage or the
// kernel did to it, naming what and the remedy: seccomp_killed, timed_out, oom_killed,
// disk_quota_exceeded (naming the full mounts), network_denied (the count); empty for
// every other class. `killing_calls` is seccomp::killing_calls(p.seccomp): the parent of a process
// SECCOMP_RET_KILL_PROCESS killed learns no syscall number (only the dying thread's siginfo and the
// kernel's audit log carry it), so the note names the calls the profile kills instead.
std::string death_note(RunClass cls, const policy::Policy& p, std::string_view killing_calls,
                       const RunFacts* facts = nullptr);

toml::table result_table(const RunFacts& f);
// What the plan enforces: "namespaces" or "landlock", and the element of each accepted loss.
policy::Enforcement enforcement_of(const Plan& plan);
toml::table spawn_fields(const policy::Policy& p, const Plan& plan, const std::string& hash,
                         const std::string& kernel, const std::string& arch);
toml::table unenforced_fields(const Unenforced& u);

}  // namespace cage::lx::report
