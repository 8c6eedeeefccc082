// What to say for an option cage does not have: the flag people type from bubblewrap, firejail or a
// container runtime gets cage's way of doing the same (one table), a near miss of one of cage's own
// options gets "did you mean" (edit distance), anything else the pointer to --help.
#include "cli/suggest.h"

#include <algorithm>
#include <string_view>

namespace cage::cli {

namespace {

struct Habit {
  const char* flag;  // as the other tool spells it, without "=VALUE"
  const char* remedy;
};

const char* const kSameInside = "cage grants a path at the same path inside: --ro PATH (read-only) or --rw PATH";
const char* const kDefaultNs = "not needed: cage unshares every namespace by default (--share-net is the one escape hatch)";
const char* const kNoNetwork =
    "not needed: the sandbox has no network by default; --net HOST:PORT allows one destination";
const char* const kNoDevices =
    "device nodes cannot be granted: the sandbox has its own minimal /dev (cage(1), DEFAULT FILESYSTEM VIEW)";
const char* const kNoPrivilege = "not needed: the command runs with no capabilities and no_new_privs by default";

// bwrap(1), firejail(1) and docker-run(1) options, and cage's equivalent.
const Habit kHabits[] = {
    {"--ro-bind", kSameInside},
    {"--ro-bind-try", kSameInside},
    {"--bind", kSameInside},
    {"--bind-try", kSameInside},
    {"--dev-bind", kNoDevices},
    {"--dev-bind-try", kNoDevices},
    {"--unshare-all", kDefaultNs},
    {"--unshare-net", kNoNetwork},
    {"--unshare-user", kDefaultNs},
    {"--unshare-user-try", kDefaultNs},
    {"--unshare-pid", kDefaultNs},
    {"--unshare-ipc", kDefaultNs},
    {"--unshare-uts", kDefaultNs},
    {"--unshare-cgroup", kDefaultNs},
    {"--unshare-cgroup-try", kDefaultNs},
    {"--die-with-parent", "not needed: the sandbox and everything in it end when cage does"},
    {"--clearenv", "not needed: the command starts from a minimal environment; pass variables with --env NAME"},
    {"--proc", "not needed: cage mounts the sandbox's own /proc"},
    {"--dev", "not needed: cage builds the sandbox's own /dev"},
    {"--cap-drop", kNoPrivilege},
    {"--caps.drop", kNoPrivilege},
    {"--nonewprivs", kNoPrivilege},
    {"--noroot", kNoPrivilege},
    {"--private", "not needed: the home directory is private by default; grant what the program needs with --ro/--rw"},
    {"--whitelist", "nothing is visible unless granted: --ro PATH or --rw PATH"},
    {"--read-only", "--ro PATH"},
    {"--read-write", "--rw PATH"},
    {"--blacklist", "--hide PATH"},
    {"--noprofile", "not needed: no profile applies unless --profile names one"},
    {"--rlimit-as", "--memory SIZE (by cgroup)"},
    {"--rlimit-nproc", "--pids N (by cgroup)"},
    {"--rlimit-nofile", "--rlimit nofile=N"},
    {"-v", "-V or --version for cage's version; for a volume as in docker run, --ro PATH or --rw PATH"},
    {"-e", "--setenv NAME=VALUE, or --env NAME to pass the caller's"},
    {"-w", "--chdir DIR"},
    {"--volume", kSameInside},
    {"--mount", kSameInside},
    {"--workdir", "--chdir DIR"},
    {"--network", kNoNetwork},
    {"--pids-limit", "--pids N"},
    {"--cpus", "--cpu FRACTION"},
    {"--rm", "not needed: cage leaves nothing behind"},
};

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string option_name(std::string_view word) { return std::string(word.substr(0, word.find('='))); }

std::string unknown_option_remedy(std::string_view word, const std::vector<std::string>& known) {
  const std::string name = option_name(word);
  for (const auto& h : kHabits)
    if (name == h.flag) return h.remedy;
  // A prefix of exactly one of cage's options, or the one nearest within a typo's reach.
  std::vector<std::string> prefixed;
  for (const auto& k : known)
    if (name.size() > 3 && k.rfind(name, 0) == 0) prefixed.push_back(k);
  if (prefixed.size() == 1) return "did you mean " + prefixed[0] + "?";
  const size_t reach = name.size() <= 5 ? 1 : 2;
  std::string best;
  size_t best_d = reach + 1;
  for (const auto& k : known) {
    size_t d = edit_distance(name, k);
    if (d < best_d) best = k, best_d = d;
  }
  if (!best.empty()) return "did you mean " + best + "?";
  return "see cage --help";
}

}  // namespace cage::cli
