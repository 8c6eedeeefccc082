// Every option that describes the sandbox, once (kOptions in option_table.cc): its flag and --help
// text, its profile key, how a profile spells its value, how a later source merges over an earlier
// one and how --print-profile writes it back. options.cc binds the flags from it; profile.cc reads,
// merges and prints profiles from it; tests/unit/option_table_test.cc checks the completions and the
// man page against it. Adding an option is one row here (and its docs, which that test asks for).
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "policy/policy.h"

namespace cage::cli {

// How a profile spells the value, and how --print-profile writes it.
enum class Kind {
  boolean,        // true or false; on the command line a flag without a value
  text,           // a string
  integer_text,   // a string or an integer (memory = "512M", pids = 64)
  number_text,    // a string or a number (cpu = 1.5)
  path,           // a string, printed relative to the printed file's directory (fs.chdir)
  file_or_fd,     // a path, or "fd:N" printed as it is (audit.file)
  paths,          // an array of "PATH" or { path = "PATH", optional = true }
  words,          // an array of strings
  pairs,          // a table of NAME = "VALUE"; the values read NAME=VALUE, as the flag's do
  integer_pairs,  // a table of NAME = VALUE or "TEXT" (rlimits)
};

// How a later source's list combines with an earlier one's (merge_into); a scalar is replaced.
enum class Merge {
  append,
  path_wins,      // a path given here drops the same path from the other path_wins lists
  key_wins,       // a KEY=... given here drops an earlier KEY=... of this list (labels)
  cancels_unset,  // a NAME given here drops an earlier env unset of exactly NAME
};

struct OptionSpec {
  const char* flag;        // "--ro"; nullptr: a profile key only
  const char* value_name;  // "PATH" in --help; "" for a flag without a value
  const char* group;       // its group in --help
  const char* help;
  const char* section;     // its profile table ("fs"), "" at the top level; nullptr: no profile key
  const char* key;         // its key in that table
  Kind kind;
  std::vector<policy::Value> policy::PolicyInput::*list = nullptr;  // repeatable: lists
  std::optional<policy::Value> policy::PolicyInput::*scalar = nullptr;
  Merge merge = Merge::append;  // lists only
  // What the completions offer for the value: "file", "dir", or the words to choose from; nullptr:
  // free text. For pairs kinds, what the profile's table must look like (the type error's text).
  const char* complete = nullptr;
  const char* expected = nullptr;
};

// A profile table and its keys in the order the unknown-key error lists them (checked against
// kOptions by option_table_test.cc). The first, "", is the top level. The keys read by hand in
// profile.cc are among them: version, include and run at the top level, run in [exec].
struct SectionSpec {
  const char* name;
  const char* keys;
};

std::span<const OptionSpec> options();
std::span<const SectionSpec> sections();
const OptionSpec* find_option(std::string_view section, std::string_view key);
const SectionSpec* find_section(std::string_view name);

}  // namespace cage::cli
