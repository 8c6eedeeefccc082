// Every flag of cage, declared once, bound with CLI11: the options of the sandbox from the option
// table (option_table.cc), the modes here. A flag's value is recorded as a
// policy::Value with its origin ("--rw") and its base directory, so validate() can name it on error.
#include "cli/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <sstream>

#include "cli/option_table.h"
#include "cli/suggest.h"

namespace cage::cli {

namespace {

using policy::PolicyInput;
using policy::Value;

struct Bound {
  bool dry_run = false, check = false, self_test = false, version = false, json = false, json_errors = false;
  bool verbose = false;
  bool audit_required = false, quiet = false;
  std::string result, audit;
  bool print_profile = false, scratch_list = false;
  bool install_windows_network = false, uninstall_windows_network = false;
  std::string scratch_remove;
  std::string target;
  bool script = false;  // only for --help: parse() splits --script off before CLI11 runs
  std::vector<std::string> profiles;
  std::vector<std::string> command;
};

// The flags of the option table (option_table.cc), each value recorded with its flag as origin.
void bind_flags(CLI::App& app, PolicyInput& in, const std::string& cwd) {
  for (const auto& f : options()) {
    if (!f.flag) continue;
    const std::string origin = f.flag;
    if (f.list) {
      auto* list = &(in.*(f.list));
      app.add_option_function<std::vector<std::string>>(
             f.flag,
             [list, origin, cwd](const std::vector<std::string>& vs) {
               for (const auto& v : vs) list->push_back(Value{v, origin, cwd});
             },
             f.help)
          ->type_name(f.value_name)
          ->group(f.group)
          ->allow_extra_args(false)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    } else if (f.kind == Kind::boolean) {
      auto* slot = &(in.*(f.scalar));
      app.add_flag_callback(f.flag, [slot, origin, cwd]() { *slot = Value{"true", origin, cwd}; }, f.help)
          ->group(f.group);
    } else {
      auto* slot = &(in.*(f.scalar));
      app.add_option_function<std::string>(
             f.flag, [slot, origin, cwd](const std::string& v) { *slot = Value{v, origin, cwd}; }, f.help)
          ->type_name(f.value_name)
          ->group(f.group)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  }
}

void bind_modes(CLI::App& app, Bound& b) {
  const char* g = "Modes";
  app.add_flag("--dry-run", b.dry_run,
               "Print a summary of the sandbox (grants and their sources, network, environment, limits, layers) "
               "and exit; needs no privileges")
      ->group(g);
  app.add_flag("-v,--verbose", b.verbose, "With --dry-run: print the whole plan (every mount, rule and variable)")
      ->group(g);
  app.add_option("--target", b.target, "With --dry-run: plan for linux, macos or windows")
      ->type_name("OS")
      ->group(g);
  app.add_flag("--check", b.check,
               "Probe this host, plan the run the other options describe and name its layers; exit 0 if it can start")
      ->group(g);
  app.add_flag("--self-test", b.self_test,
               "Run confined probes (denied and allowed reads, writes, connections) and report each")
      ->group(g);
  app.add_flag("--scratch-list", b.scratch_list, "List your --scratch directories (name, size, where) and exit")
      ->group(g);
  app.add_option("--scratch-remove", b.scratch_remove, "Delete the --scratch directory NAME and exit")
      ->type_name("NAME")
      ->group(g);
  app.add_flag("--install-windows-network", b.install_windows_network,
               "Windows, elevated, once: cage's WFP filters, the --net slot containers cage.net.0-15 on the "
               "loopback-exemption list (other entries kept): --net runs reach their proxy and nothing else")
      ->group(g);
  app.add_flag(
         "--uninstall-windows-network", b.uninstall_windows_network,
         "Windows, elevated: remove exactly what --install-windows-network added (filters, slot entries)")
      ->group(g);
  app.add_flag("--json", b.json, "Machine-readable output for --dry-run, --check and --scratch-list")->group(g);
  app.add_flag("--json-errors", b.json_errors, "Print errors as one JSON object on stderr")->group(g);
  app.add_flag("-V,--version", b.version, "Print the version and exit")->group(g);
  app.add_flag("-q,--quiet", b.quiet,
               "No notes of cage's own on stderr (what killed the command, an ungranted working directory); "
               "errors and warnings still print")
      ->group(g);
  const char* r = "Result and audit";
  app.add_option("--result", b.result, "Write the run's result as one JSON object (cage.result/2) to FILE or fd:N")
      ->type_name("FILE|fd:N")
      ->group(r);
  app.add_option("--audit", b.audit, "Append audit events as JSON lines (cage.audit/1) to FILE or fd:N")
      ->type_name("FILE|fd:N")
      ->group(r);
  app.add_flag("--audit-required", b.audit_required,
               "If the audit log cannot be written, do not start, or kill the sandbox (exit 125)")
      ->group(r);
  const char* p = "Profiles";
  app.add_option("--profile", b.profiles,
                 "Load a TOML profile: a FILE, or a NAME from ~/.config/cage/profiles, /etc/cage/profiles or "
                 "the built-ins (build cargo git-https go npm pip shell); repeatable, later sources and then flags win")
      ->type_name("FILE|NAME")
      ->group(p)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--print-profile", b.print_profile, "Print the given flags and profiles as one TOML profile and exit")
      ->group(p);
  app.add_flag("--script", b.script,
               "Run a script: --script [OPTIONS] [-- INTERPRETER] FILE [ARGS...], for #!/usr/bin/env -S cage "
               "--script ...; OPTIONS' relative paths are FILE's directory's, FILE is granted read-only, its "
               "'# /// cage' block applies, and words after FILE go to the script")
      ->group(p);
  app.add_option("command", b.command, "The command to run, after --")->type_name("COMMAND [ARG...]");
}

std::unique_ptr<CLI::App> make_app(PolicyInput& in, Bound& b, const std::string& cwd) {
  auto app = std::make_unique<CLI::App>(
      "cage " CAGE_VERSION " - confine a program to what it was granted\n"
      "Usage: cage [OPTIONS] -- COMMAND [ARG...]",
      "cage");
  app->prefix_command(true);
  app->set_help_flag("-h,--help", "Print this help and exit");
  app->get_formatter()->column_width(34);
  app->footer(
      "Exit status: the command's own; if it died of signal N, cage dies of N too (128+N if N cannot\n"
      "end a process); 124 on --timeout; 125 cage's own errors; 126 command not executable; 127\n"
      "command not found. SIGTERM or SIGHUP ends a run that ignores it 5 s later. See cage(1) for the\n"
      "default view.");
  bind_flags(*app, in, cwd);
  bind_modes(*app, b);
  return app;
}

size_t options_end(const std::vector<std::string>& words, size_t from, const CLI::App& app);

// CLI11 (2.1) prints each description on one line and adds a usage line of its own: the lines are
// wrapped here at 100 columns, continued under the description column, and its usage line dropped
// (the description's names the "--").
std::string fit_help(const std::string& text) {
  constexpr size_t width = 100, column = 34;
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Usage: cage [OPTIONS] [command...]", 0) == 0) continue;
    while (line.size() > width) {
      size_t cut = line.rfind(' ', width);
      if (cut == std::string::npos || cut <= column) break;
      out += line.substr(0, cut) + "\n";
      line = std::string(column, ' ') + line.substr(cut + 1);
    }
    out += line + "\n";
  }
  return out;
}

Error unknown_option(const std::string& word, const CLI::App& app) {
  std::vector<std::string> known;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames()) known.push_back("--" + n);
  return usage(option_name(word), "unknown option", unknown_option_remedy(word, known));
}

// CLI11's exceptions in cage's words: the option at fault is the input, no exception's class name.
Error parse_error(const CLI::ParseError& e, const CLI::App& app) {
  const std::string msg = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {  // "The following argument was not expected: WORD ..."
    auto colon = msg.find(": ");
    std::string word = colon == std::string::npos ? msg : msg.substr(colon + 2);
    return unknown_option(word.substr(0, word.find(' ')), app);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {  // "--rw: 1 required PATH missing"
    const std::string name = msg.substr(0, msg.find(':'));
    if (const CLI::Option* o = app.get_option_no_throw(name))
      return usage(name, "needs a value (" + o->get_type_name() + ")", "give it as " + name + " " + o->get_type_name());
  }
  return usage("cage", msg, "see cage --help");
}

// One run of CLI11 over cage's words, every relative path based on `base`. The --script split is
// done by parse() before this is called, so the words here hold no --script.
Result<Invocation> parse_words(const std::vector<std::string>& words, const std::string& base) {
  const std::string& cwd = base;
  Invocation inv;
  Bound b;
  auto app = make_app(inv.input, b, cwd);
  // With "--" the command is everything after it and cage's own words must all be options. Without
  // it the first word that is not an option starts the command (prefix-command mode).
  // The command's first word is found from the flag table, not by CLI11, which went on taking cage's
  // flags after it (`cage make --rw /tmp` granted /tmp): from that word on, every word is the command's.
  // A "--" counts only where cage's options end: one later on belongs to the command (`cage ./x a
  // -- b` runs ./x with "a -- b", as env(1) and sudo would).
  const size_t end = options_end(words, words.empty() ? 0 : 1, *app);
  auto stop = words.begin() + static_cast<long>(end);
  const bool dashed = end < words.size() && words[end] == "--";
  auto dash = dashed ? stop : words.end();
  std::vector<std::string> command;
  if (end < words.size()) {
    command.assign(dashed ? stop + 1 : stop, words.end());
    app->prefix_command(false);
  }
  std::vector<std::string> rest(std::make_reverse_iterator(stop),
                                words.rend() - (words.empty() ? 0 : 1));  // CLI11 wants them reversed
  try {
    app->parse(rest);
  } catch (const CLI::CallForHelp&) {
    inv.mode = Mode::help;
    inv.help_text = fit_help(app->help());
    return inv;
  } catch (const CLI::ParseError& e) {
    return parse_error(e, *app);
  }
  // Known before the report session opens, which writes it into every audit event.
  if (const auto& id = inv.input.run_id; id && !policy::valid_run_id(id->text))
    return usage("--run-id " + id->text, "not a run id",
                 "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
  inv.json = b.json;
  inv.json_errors = b.json_errors;
  inv.verbose = b.verbose;
  inv.report = ReportOptions{b.result, b.audit, b.audit_required, b.quiet, {}};
  inv.target = b.target;
  for (const auto& ref : b.profiles) inv.profiles.push_back(Value{ref, "--profile", cwd});
  inv.input.argv = b.command;
  for (auto& extra : app->remaining()) inv.input.argv.push_back(extra);
  if (stop != words.end() && dash == words.end()) {
    inv.input.argv = command;
  } else if (dash != words.end()) {
    if (!inv.input.argv.empty())
      return usage(inv.input.argv[0], "unexpected word before --", "put the command after --, options before it");
    inv.input.argv = command;
  } else if (!inv.input.argv.empty() && inv.input.argv[0].size() > 1 && inv.input.argv[0][0] == '-') {
    return unknown_option(inv.input.argv[0], *app);
  }
  if (b.version) {
    inv.mode = Mode::version;
    return inv;
  }
  if (b.check) {
    inv.mode = Mode::check;
    return inv;
  }
  if (b.self_test) {
    inv.mode = Mode::self_test;
    return inv;
  }
  if (b.install_windows_network || b.uninstall_windows_network) {
    const char* flag = b.install_windows_network ? "--install-windows-network" : "--uninstall-windows-network";
    if (b.install_windows_network && b.uninstall_windows_network)
      return usage(flag, "--install-windows-network and --uninstall-windows-network exclude each other",
                   "give one of them");
    if (!inv.input.argv.empty())
      return usage(flag, "takes no command (it changes a setting of this machine and exits)",
                   std::string("run `cage ") + flag + "` by itself");
    inv.mode = b.install_windows_network ? Mode::install_windows_network : Mode::uninstall_windows_network;
    return inv;
  }
  if (b.print_profile) {
    inv.mode = Mode::print_profile;
    return inv;
  }
  if (b.scratch_list || !b.scratch_remove.empty()) {
    inv.mode = b.scratch_list ? Mode::scratch_list : Mode::scratch_remove;
    inv.scratch_name = b.scratch_remove;
    return inv;
  }
  if (!b.target.empty() && !b.dry_run)
    return usage("--target " + b.target, "--target only applies to --dry-run", "add --dry-run");
  if (b.verbose && !b.dry_run)
    return usage("--verbose", "--verbose only applies to --dry-run", "add --dry-run, or drop --verbose");
  if (!b.target.empty() && b.target != "linux" && b.target != "macos" && b.target != "windows")
    return usage("--target " + b.target, "unknown target", "use linux, macos or windows");
  inv.mode = b.dry_run ? Mode::dry_run : Mode::run;
  return inv;
}

// The kernel runs `#!/usr/local/bin/cage --script --ro . -- python3` as
// [cage, "--script --ro . -- python3", SCRIPT, ARGS...]: everything after the interpreter's path is one
// argument (fs/binfmt_script.c). Only that explicit form is split, on blanks, as env -S would
// (kernel_script_words).
bool is_kernel_line(const std::vector<std::string>& args) {
  return args.size() >= 2 && args[1].rfind("--script", 0) == 0 && args[1].find_first_of(" \t") != std::string::npos;
}

std::vector<std::string> split_blanks(const std::string& line) {
  std::vector<std::string> out;
  for (size_t i = 0; i < line.size();) {
    size_t b = line.find_first_not_of(" \t", i);
    if (b == std::string::npos) break;
    size_t e = std::min(line.find_first_of(" \t", b), line.size());
    out.push_back(line.substr(b, e - b));
    i = e;
  }
  return out;
}

// The words after --script: its options (the shebang line's), then either FILE or
// `-- INTERPRETER FILE`, then the script's own arguments. Where the options end is read from the
// flag table (which take a value), never from the script.
struct ScriptWords {
  std::vector<std::string> options;
  std::string interpreter, file;
  std::vector<std::string> args;
};

// The index of the first word at or after `from` that is not one of cage's options or its value:
// "--", or the first other word (the command, or --script's FILE). Arity comes from the flag table,
// as `app` (any of make_app's) has bound it.
size_t options_end(const std::vector<std::string>& words, size_t from, const CLI::App& app) {
  size_t i = from;
  for (; i < words.size() && words[i] != "--" && words[i].size() > 1 && words[i][0] == '-'; ++i) {
    if (words[i].find('=') != std::string::npos) continue;
    const CLI::Option* opt = app.get_option_no_throw(words[i]);
    // A "--" right after an option that takes a value ends the options (`cage --rw -- make`, the
    // value forgotten): the option is then missing its value, a usage error naming it, instead of a
    // grant of a path called "--" and `make` run without the "--".
    if (opt && opt->get_expected_max() != 0 && i + 1 < words.size() && words[i + 1] != "--") ++i;  // flags expect 0
  }
  return i;
}

Result<ScriptWords> split_script_words(const std::vector<std::string>& after) {
  ScriptWords sw;
  PolicyInput scratch;
  Bound b;
  size_t i = options_end(after, 0, *make_app(scratch, b, "/"));
  for (size_t k = 0; k < i; ++k)
    if (after[k] == "--script" || after[k].rfind("--script=", 0) == 0)
      return usage(after[k], "--script is given twice", "give it once, before the script's options");
  sw.options.assign(after.begin(), after.begin() + static_cast<long>(i));
  if (i < after.size() && after[i] == "--") {
    if (i + 2 >= after.size())
      return usage("--script --", "needs an interpreter and the script's path", "--script [OPTIONS] -- INTERPRETER FILE");
    sw.interpreter = after[i + 1];
    i += 2;
  }
  if (i >= after.size() || after[i].empty())
    return usage("--script", "needs the script's path", "--script [OPTIONS] [-- INTERPRETER] FILE [ARGS...]");
  sw.file = after[i];
  sw.args.assign(after.begin() + static_cast<long>(i) + 1, after.end());
  return sw;
}

// The kernel's form (is_kernel_line): the #! line's words after --script are options, then optionally
// `-- INTERPRETER`; the script is always the kernel's next argument (raw[2]). Read with the general
// rules, a line ending in an option that takes a value (`--script --rw out --ro`) took the script's
// path as that value and made the caller's first argument the script, run under the line's options
// based on that argument's directory (found by review): the script's own line changed how cage read
// the caller's command line. So the line is read by itself, and an option without its value is an
// error naming it.
Result<ScriptWords> kernel_script_words(const std::vector<std::string>& raw) {
  const std::vector<std::string> line = split_blanks(raw[1]);
  const char* const form = "#!/path/to/cage --script [OPTIONS] [-- INTERPRETER]";
  if (line[0].rfind("--script=", 0) == 0)
    return usage(line[0], "on a #! line the script's path comes from the kernel", form);
  if (line[0] != "--script") return usage(line[0], "unknown option", "see cage --help");
  PolicyInput scratch;
  Bound b;
  auto app = make_app(scratch, b, "/");
  size_t i = 1;
  for (; i < line.size() && line[i] != "--"; ++i) {
    const std::string& w = line[i];
    if (w == "--script" || w.rfind("--script=", 0) == 0)
      return usage(w, "--script is given twice", "give it once, before the script's options");
    if (w.size() < 2 || w[0] != '-')
      return usage(w, "unexpected word on the #! line (the script's path comes from the kernel)", form);
    if (w.find('=') != std::string::npos) continue;
    const CLI::Option* opt = app->get_option_no_throw(w);
    if (!opt || opt->get_expected_max() == 0) continue;
    if (i + 1 >= line.size() || line[i + 1] == "--")
      return usage(w, "needs a value on the #! line (the script's path is never an option's value)",
                   "write the value after " + w + " on the #! line");
    ++i;
  }
  ScriptWords sw;
  sw.options.assign(line.begin() + 1, line.begin() + static_cast<long>(i));
  if (i < line.size()) {
    if (i + 2 != line.size())
      return usage("--script --", i + 1 == line.size() ? "needs an interpreter" : "takes one interpreter word on a #! line",
                   form);
    sw.interpreter = line[i + 1];
  }
  if (raw.size() < 3 || raw[2].empty()) return usage("--script", "needs the script's path", form);
  sw.file = raw[2];
  sw.args.assign(raw.begin() + 3, raw.end());
  return sw;
}

std::string script_dir(const std::string& file, const std::string& cwd) {
  std::string abs = policy::lexically_clean(file[0] == '/' ? file : cwd + "/" + file);
  size_t slash = abs.rfind('/');
  return slash == 0 ? "/" : abs.substr(0, slash);
}

}  // namespace

bool wants_json_errors(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--json-errors") return true;
    if (i == 1 && args[i].rfind("--script ", 0) == 0 && args[i].find(" --json-errors") != std::string::npos) return true;
  }
  return false;
}

// --script is the one way cage learns that it runs a script for the kernel: the script's content is
// never consulted for that. Options before --script are the caller's (relative to the current
// directory); options after it are the script line's, written by the script's author, and relative
// to the script's directory, like the paths in its '# /// cage' block.
namespace {
Result<Invocation> with_script(Invocation inv, ScriptWords sw, const std::string& argv0, const std::string& cwd);
}  // namespace

Result<Invocation> parse(const std::vector<std::string>& raw, const std::string& cwd) {
  if (is_kernel_line(raw)) {
    auto sw = kernel_script_words(raw);
    if (!sw) return sw.error();
    auto inv = parse_words({raw[0]}, cwd);
    if (!inv) return inv;
    return with_script(std::move(*inv), std::move(*sw), raw[0], cwd);
  }
  const std::vector<std::string>& args = raw;
  auto is_script = [](const std::string& w) { return w == "--script" || w.rfind("--script=", 0) == 0; };
  const auto first = args.begin() + (args.empty() ? 0 : 1);
  // No such word at all: the common case, without a second CLI11 app (~0.14 ms) to find where
  // cage's options end.
  if (std::none_of(first, args.end(), is_script)) return parse_words(args, cwd);
  // Only among cage's own options: a --script in the command's words is the command's.
  PolicyInput scratch;
  Bound b;
  auto end = args.begin() + static_cast<long>(options_end(args, args.empty() ? 0 : 1, *make_app(scratch, b, "/")));
  auto at = std::find_if(first, end, is_script);
  if (at == end) return parse_words(args, cwd);
  auto inv = parse_words(std::vector<std::string>(args.begin(), at), cwd);
  if (!inv) return inv;
  if (!inv->input.argv.empty())
    return usage(inv->input.argv[0], "a command and --script exclude each other",
                 "put the interpreter after --script's options: --script -- INTERPRETER FILE");
  ScriptWords sw;
  if (*at == "--script") {
    auto split = split_script_words(std::vector<std::string>(at + 1, args.end()));
    if (!split) return split.error();
    sw = std::move(*split);
  } else {
    sw.file = at->substr(9);
    sw.args.assign(at + 1, args.end());
    if (sw.file.empty()) return usage("--script", "needs the script's path", "--script FILE");
  }
  return with_script(std::move(*inv), std::move(sw), args.empty() ? "cage" : args[0], cwd);
}

namespace {

// Merges the script line's options (based on the script's directory) under the caller's.
Result<Invocation> with_script(Invocation inv, ScriptWords sw, const std::string& argv0, const std::string& cwd) {
  std::vector<std::string> line_words{argv0};
  line_words.insert(line_words.end(), sw.options.begin(), sw.options.end());
  auto line = parse_words(line_words, script_dir(sw.file, cwd));
  if (!line) return line;
  if (inv.mode == Mode::help) return inv;
  if (line->mode != Mode::run) inv.mode = line->mode;
  if (line->mode == Mode::help) inv.help_text = line->help_text;
  inv.json = inv.json || line->json;
  inv.verbose = inv.verbose || line->verbose;
  inv.json_errors = inv.json_errors || line->json_errors;
  if (inv.target.empty()) inv.target = line->target;
  const std::string dir = script_dir(sw.file, cwd);
  auto line_file = [&dir](const std::string& spec) {
    return spec.empty() || spec[0] == '/' || spec.rfind("fd:", 0) == 0 ? spec : dir + "/" + spec;
  };
  if (inv.report.result.empty()) inv.report.result = line_file(line->report.result);
  if (inv.report.audit.empty()) inv.report.audit = line_file(line->report.audit);
  inv.report.audit_required = inv.report.audit_required || line->report.audit_required;
  inv.report.quiet = inv.report.quiet || line->report.quiet;
  inv.profiles.insert(inv.profiles.begin(), line->profiles.begin(), line->profiles.end());
  inv.script_line = std::move(line->input);
  inv.script = sw.file;
  inv.script_interpreter = sw.interpreter;
  inv.script_args = std::move(sw.args);
  return inv;
}

}  // namespace

}  // namespace cage::cli
