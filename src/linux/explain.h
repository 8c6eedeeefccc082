// --explain, the pure half: what the workload tried (observed by explain_notify.cc through the one
// seccomp listener, and the proxy's refusals), judged after the run against the Plan's view, and the
// flag that would allow each refusal. The observer answers every observed call with
// SECCOMP_USER_NOTIF_FLAG_CONTINUE, so it never learns the kernel's answer: the verdict here is a
// reconstruction from the Plan and the host, and a raced path can only make it wrong, never the
// sandbox weaker. Proved by tests/unit/linux_explain_test.cc and tests/integration/explain.sh.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/toml.h"
#include "linux/plan.h"

namespace cage::lx::explain {

enum class Op { read, stat, exec, write, create, remove, connect, syscall };
std::string_view to_string(Op op);

// One distinct access (op, path): how often and who first. path is absolute, as the workload named
// it (links not followed); for connect, "HOST:PORT".
struct Seen {
  uint64_t count = 0;
  int pid = 0;  // the first process that tried (its thread id, as the supervisor sees it)
  std::string comm;
  uint64_t order = 0;  // when it was first seen, among the run's distinct accesses
};
using Key = std::pair<Op, std::string>;
using Accesses = std::map<Key, Seen>;

// What the sandbox shows at one path: the deepest mount (namespaces) or every covering Landlock
// rule (landlock_only) folded into what it lets the workload do there.
// direct: a connection the Landlock-only mechanism refused because it did not go through cage's proxy.
enum class Verdict {
  allowed, hidden, read_only, not_executable, hidden_by_policy, refused, direct, killed, probe, unknown
};
std::string_view to_string(Verdict v);

struct Finding {
  Op op = Op::read;
  std::string path;  // a directory when several of its entries were refused alike
  Verdict verdict = Verdict::allowed;
  std::string remedy;  // "--ro /home/u/.npmrc"; for hidden_by_policy, the grant that hides it
  uint64_t count = 0;
  int pid = 0;
  std::string comm;
  size_t paths = 1;  // how many distinct paths this finding folds
  uint64_t order = 0;
};

// The host's answer for a path: 0 absent, 1 a file (or anything but a directory), 2 a directory,
// -1 not looked up (it lies on a filesystem that is not local: host_lookup.h).
using HostKind = std::function<int(const std::string&)>;

// The host's path with its links resolved (the path itself when nothing resolves).
using Canonical = std::function<std::string(const std::string&)>;

// Every refused or hidden access, then the probes (absent on the host too, or an exec along PATH
// that found the same name elsewhere); allowed accesses are dropped. Sorted: refusals first.
// Landlock-only: the workload sees the host's own tree and Landlock judges the file a path leads to
// (its rules are canonical paths), so each path is resolved on the host first (/lib -> /usr/lib).
// home: the caller's home, which (with its ancestors and /) a suggestion never grants whole.
std::vector<Finding> classify(const Plan& plan, const Accesses& seen, const HostKind& host,
                              const Canonical& canonical = {}, const std::string& home = "");

// The largest number of distinct accesses one run records (the observer's and the proxy's each);
// the rest are counted as dropped.
inline constexpr size_t kMaxDistinct = 20000;

// The workload died of SIGSYS under `profile`: one of `killing_calls` (seccomp::killing_calls), which
// the kernel names only to the dying process and its own audit log, so the finding lists them all.
// The calls the profile refuses with an errno are observed apart (seccomp_observe.h).
Finding seccomp_kill(std::string_view profile, std::string_view killing_calls);

// Lines for stderr ("cage: explain: ..."), and the result's / audit's records.
std::string render_text(const std::vector<Finding>& findings, uint64_t dropped);
toml::table finding_fields(const Finding& f);

}  // namespace cage::lx::explain
