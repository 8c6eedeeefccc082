// Command-line parsing: every flag declared once, in one table (option_table.cc), bound to CLI11 in
// options.cc. CLI11 throws; parse() catches at this boundary and returns a usage_error naming the flag.
#pragma once
#include <string>
#include <vector>

#include "common/error.h"
#include "common/report_options.h"
#include "policy/policy.h"

namespace cage::cli {

enum class Mode {
  run,
  dry_run,
  check,
  self_test,
  version,
  help,
  print_profile,
  scratch_list,
  scratch_remove,
  install_windows_network,    // --install-windows-network (Windows builds only; refused elsewhere)
  uninstall_windows_network,  // --uninstall-windows-network
};

struct Invocation {
  Mode mode = Mode::run;
  bool json = false;         // --json: machine-readable --dry-run / --check output
  bool json_errors = false;  // --json-errors: errors as one JSON object on stderr
  bool verbose = false;      // --verbose: --dry-run prints the whole plan, not the summary
  std::string target;        // --target linux|macos|windows (dry-run only; default: this OS)
  policy::PolicyInput input;
  ReportOptions report;
  std::vector<policy::Value> profiles;    // --profile FILE|NAME, in order (loaded by cli::apply_profiles)
  // --script [OPTIONS] [-- INTERPRETER] FILE [ARGS...]: the explicit script mode (see parse()).
  std::string script;                     // FILE, as given
  std::string script_interpreter;         // INTERPRETER, or empty: run = [...] of the block or a profile
  std::vector<std::string> script_args;   // ARGS, passed to the script
  policy::PolicyInput script_line;        // OPTIONS, relative paths based on FILE's directory
  std::string help_text;     // filled for Mode::help
  std::string scratch_name;  // --scratch-remove NAME
};

// argv excludes nothing: argv[0] is the program name. cwd is the base of relative paths on the
// command line, except for the options after --script (the script line's), based on the script's
// directory. Nothing is read from any file here: shebang use is known only from --script.
Result<Invocation> parse(const std::vector<std::string>& args, const std::string& cwd);
// True if the arguments ask for JSON errors (checked before parsing, so parse errors honour it).
bool wants_json_errors(const std::vector<std::string>& args);

}  // namespace cage::cli
