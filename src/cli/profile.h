// TOML profiles: `--profile FILE|NAME`, `--script FILE` and `--print-profile`. profile.cc is the one
// translation unit that parses TOML for the CLI (with toml++); it turns a profile into the same
// policy::PolicyInput the flags fill, each value carrying "file:line:col key" as its origin, and
// merges sources in order: profiles, then the script's own block, then the command-line flags.
// Tests: tests/unit/profile_test.cc, tests/integration/profile_*.sh, tests/fuzz/profile_fuzz.cc.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/options.h"
#include "common/error.h"
#include "policy/policy.h"

namespace cage::cli {

struct BuiltinProfile {
  const char* name;  // "npm"
  const char* text;  // the TOML, from profiles/NAME.toml (generated builtin_profiles.cc)
};
extern const BuiltinProfile kBuiltinProfiles[];  // ends with {nullptr, nullptr}

// What loading needs from the calling process; main fills it from the real environment.
struct ProfileContext {
  std::string cwd;   // absolute: base of built-in profiles' relative paths, and of ${PWD}
  std::string home;  // $HOME, may be empty
  std::vector<std::pair<std::string, std::string>> environ;  // for ${VAR}
  std::string user_dir;                                      // $XDG_CONFIG_HOME/cage/profiles
  std::string system_dir = "/etc/cage/profiles";
  // --print-profile: an optional path absent here is kept (it may exist where the printed profile
  // is used); otherwise it is dropped when the profile is loaded.
  bool keep_missing_optional = false;
};
ProfileContext make_profile_context(const std::string& cwd,
                                    const std::vector<std::pair<std::string, std::string>>& environ);

// One loaded source: its values, plus `run` if it has one.
struct Layer {
  policy::PolicyInput input;
  std::optional<std::vector<std::string>> run;
};

// Parse TOML text as a profile named `display` (for messages), with relative paths resolved against
// base_dir. line_offset/col_offset shift reported positions (a block embedded in a script).
Result<Layer> load_profile_text(std::string_view text, const std::string& display, const std::string& base_dir,
                                const ProfileContext& ctx, int line_offset = 0, int col_offset = 0);
// Load `ref`: a NAME (no '/', no .toml suffix) looked up in user_dir, system_dir, then the built-ins;
// otherwise a path, relative to ref.base.
Result<Layer> load_profile(const policy::Value& ref, const ProfileContext& ctx);

// Later sources extend lists and replace scalars; a path given by a later source replaces the same
// path given by an earlier one in another list (--rw . after a profile's ro "."); a later env pass or
// set of NAME cancels an earlier unset of exactly NAME.
void merge_into(policy::PolicyInput& into, const policy::PolicyInput& later, const std::string& home);

// Loads inv.profiles and inv.script (--script: its block, the script line's options), merges them
// under the caller's flags into inv.input. Reads files (never to decide whether a run is a script's:
// only --script says that); everything else is pure.
Status apply_profiles(Invocation& inv, const ProfileContext& ctx);

// The TOML equivalent of a (merged) input, for a file kept in `cwd`: strings as written (${VAR},
// "~", optional = true kept), relative paths relative to cwd (a profile's from elsewhere rebased).
std::string print_profile(const policy::PolicyInput& in, const std::string& home, const std::string& cwd);

// Inline script blocks (script.cc): the TOML between `# /// cage` and `# ///` (or `// /// cage` and
// `// ///`), each line stripped of its comment prefix. nullopt when the script has no block.
struct ScriptBlock {
  std::string toml;
  int first_line = 0;  // 1-based line of the script that holds the block's first TOML line
  int prefix = 0;      // columns removed from each line ("# " is 2, "// " is 3)
};
Result<std::optional<ScriptBlock>> extract_script_block(std::string_view script, const std::string& display);

}  // namespace cage::cli
