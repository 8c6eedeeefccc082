// Seccomp profile data: the parser for seccomp/*.txt (pure) and the compiler that turns a parsed
// profile into BPF with libseccomp. Used at build time by seccomp/gen_profiles.cc, and by the unit
// tests and bench/seccomp_build.cc; the cage binary itself only carries the generated BPF.
#pragma once
#include <linux/filter.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace cage::lx::seccomp {

enum class Action { eperm, enosys, kill };
enum class Op { eq, ne, any_bit, not_in, in, lt, gt };
// Non-native ABIs (i386/x32, arm): killed, or filtered alike; `native`: a supplement stacked on a
// profile that decided them already, built with libseccomp's defaults (see landlock_only.txt).
enum class Compat { deny, filter, native };

struct Condition {
  unsigned arg = 0;      // a0..a5
  bool low32 = false;    // aN:32: the kernel reads an int; compare only the low 32 bits
  uint64_t mask = 0;     // aN&MASK: compare (arg & MASK), with == and in only; 0: no mask
  Op op = Op::eq;
  std::vector<uint64_t> values;  // one for eq/ne/lt/gt/any_bit (a mask), the list for in/not_in
};

struct Rule {
  std::string name;  // a syscall name, or a number for calls newer than libseccomp ("463")
  Action action = Action::eperm;
  std::vector<Condition> conditions;  // ANDed
  std::string why;
  int line = 0;
  std::string when;  // the %when above it: "" (always), "share-net", "!allow-metadata"...
};

struct Profile {
  std::string file;  // for messages: "seccomp/default.txt"
  Compat compat = Compat::deny;
  std::vector<Rule> rules;
};

// Parses one profile file. Every entry needs a reason; unknown actions, operators and constants are
// errors naming file:line.
Result<Profile> parse_profile(std::string_view text, std::string file);

// The filter of a profile: seccomp/floor.txt's rules (what no profile lets through) and then the
// profile's own, with the profile's %compat. --seccomp none is floor.txt alone.
Profile with_floor(const Profile& floor, const Profile& p);

// The rules whose %when holds when exactly the conditions in `true_conditions` are true.
Profile select_when(const Profile& p, const std::vector<std::string>& true_conditions);
// %when conditions of the profile not in `known`: typos, which would silently drop their rules.
std::vector<std::string> unknown_conditions(const Profile& p, const std::vector<std::string>& known);

// The architectures a filter for `target` ("x86_64", "aarch64") covers natively and as compat ABIs.
struct ArchSet {
  uint32_t native = 0;
  std::vector<uint32_t> compat;
};
Result<ArchSet> arch_set(std::string_view target);

// Names in the profile that no architecture known to libseccomp has: typos, which must not
// silently drop a rule. Entries of the form "file:line name".
std::vector<std::string> unknown_everywhere(const Profile& p);

// Builds the filter with libseccomp for the given architectures and exports it as BPF.
Result<std::vector<sock_filter>> compile_profile(const Profile& p, const ArchSet& arches);

}  // namespace cage::lx::seccomp
