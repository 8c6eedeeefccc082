// Sources and their merge (see profile.h): the profiles, a script's block and line, then the flags,
// each later source over the earlier ones as the option table (option_table.cc) says for each
// option. Tests: tests/unit/profile_test.cc (ProfileMerge), profile_golden_test.cc, and
// tests/integration/profile_*.sh.
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "cli/option_table.h"
#include "cli/profile.h"

namespace cage::cli {

namespace {

using policy::PolicyInput;
using policy::Value;

constexpr size_t kMaxScriptBytes = 16 << 20;

std::string dirname_of(const std::string& abs) {
  auto slash = abs.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : abs.substr(0, slash);
}

std::string env_name(const std::string& text) { return text.substr(0, text.find('=')); }


std::string read_small_file(const std::string& path, std::string& err) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    err = "no such file";
    return {};
  }
  if (static_cast<size_t>(st.st_size) > kMaxScriptBytes) {
    err = "file is larger than 16 MiB";
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (!in) err = "cannot read the file";
  return buf.str();
}

}  // namespace

ProfileContext make_profile_context(const std::string& cwd,
                                    const std::vector<std::pair<std::string, std::string>>& environ) {
  ProfileContext ctx;
  ctx.cwd = cwd;
  ctx.environ = environ;
  std::string xdg;
  ctx.home = policy::home_of(environ);
  for (const auto& [k, v] : environ) {
    if (k == "XDG_CONFIG_HOME") xdg = v;
  }
  if (xdg.empty() || xdg[0] != '/') xdg = ctx.home.empty() ? "" : ctx.home + "/.config";  // XDG: ignore relative
  if (!xdg.empty()) ctx.user_dir = xdg + "/cage/profiles";
  return ctx;
}

void merge_into(PolicyInput& into, const PolicyInput& later, const std::string& home) {
  auto key = [&home](Value v) {
    v.text = policy::split_tmpfs_spec(v.text).first;  // a --tmpfs size is not part of the path
    auto abs = policy::absolute_path(v, home);
    return abs ? *abs : v.text;
  };
  // First what a later value drops from the earlier lists, then the appends (a source may set and
  // unset one name itself, or give one path twice).
  for (const auto& o : options()) {
    if (!o.list) continue;
    for (const auto& v : later.*(o.list)) {
      if (o.merge == Merge::path_wins) {
        const std::string k = key(v);
        for (const auto& other : options())
          if (other.merge == Merge::path_wins && other.list != o.list)
            std::erase_if(into.*(other.list), [&](const Value& x) { return key(x) == k; });
      } else if (o.merge == Merge::key_wins) {  // two of one key in one source are validate()'s error
        std::erase_if(into.*(o.list), [&](const Value& x) { return env_name(x.text) == env_name(v.text); });
      } else if (o.merge == Merge::cancels_unset) {
        std::erase_if(into.env_unset, [&](const Value& u) { return u.text == env_name(v.text); });
      }
    }
  }
  for (const auto& o : options()) {
    if (o.list)
      (into.*(o.list)).insert((into.*(o.list)).end(), (later.*(o.list)).begin(), (later.*(o.list)).end());
    else if (later.*(o.scalar))
      into.*(o.scalar) = later.*(o.scalar);
  }
  if (!later.argv.empty()) into.argv = later.argv;
  if (!later.exec_run.empty()) into.exec_run = later.exec_run;  // one pinned shape: the last source's
}

Status apply_profiles(Invocation& inv, const ProfileContext& ctx) {
  // --audit/--audit-required (inv.report) and [audit] are one setting: the flags join the merge as the
  // last source, and the merged value goes back to inv.report, which the audit writer reads.
  if (!inv.report.audit.empty()) inv.input.audit_file = Value{inv.report.audit, "--audit", ctx.cwd};
  if (inv.report.audit_required) inv.input.audit_required = Value{"true", "--audit-required", ""};
  PolicyInput acc;
  std::optional<std::vector<std::string>> run;
  for (const auto& ref : inv.profiles) {
    auto layer = load_profile(ref, ctx);
    if (!layer) return layer.error();
    merge_into(acc, layer->input, ctx.home);
    if (layer->run) run = layer->run;
  }
  // --script: the user asked for FILE to be run as a script, so its block is read (never to decide
  // whether this is a script run: see cli::parse). Sources: profiles, the block, the script line's
  // options, then the caller's options.
  if (!inv.script.empty()) {
    const std::string script_abs =
        policy::lexically_clean(inv.script[0] == '/' ? inv.script : ctx.cwd + "/" + inv.script);
    std::string err;
    std::string text = read_small_file(script_abs, err);
    if (!err.empty()) return usage("--script " + inv.script, err, "give the path of a script");
    auto block = extract_script_block(text, script_abs);
    if (!block) return block.error();
    if (*block) {
      auto layer = load_profile_text((*block)->toml, script_abs, dirname_of(script_abs), ctx,
                                     (*block)->first_line - 1, (*block)->prefix);
      if (!layer) return layer.error();
      if (!layer->run && inv.script_interpreter.empty() && !run)
        return invalid(script_abs + ":" + std::to_string((*block)->first_line) + " run",
                       "the cage block has no run = [...]", "add e.g. run = [\"python3\"]");
      merge_into(acc, layer->input, ctx.home);
      if (layer->run) run = layer->run;
    } else if (inv.script_interpreter.empty() && !run) {
      return usage("--script " + inv.script, "the script has no '# /// cage' block and no interpreter was given",
                   "add a block (see cage(1), SCRIPTS), or name the interpreter: --script -- INTERPRETER");
    }
    merge_into(acc, inv.script_line, ctx.home);
    acc.ro.push_back(Value{script_abs, "--script", ""});
    std::vector<std::string> argv =
        inv.script_interpreter.empty() ? *run : std::vector<std::string>{inv.script_interpreter};
    argv.push_back(script_abs);
    argv.insert(argv.end(), inv.script_args.begin(), inv.script_args.end());
    run = argv;
  }
  merge_into(acc, inv.input, ctx.home);
  if (!inv.script.empty() || (acc.argv.empty() && run)) acc.argv = run.value_or(std::vector<std::string>{});
  if (acc.audit_file) {
    const auto& f = *acc.audit_file;
    auto abs = f.text.rfind("fd:", 0) == 0 ? Result<std::string>(f.text) : policy::absolute_path(f, ctx.home);
    if (!abs) return abs.error();
    inv.report.audit = *abs;
  }
  if (acc.audit_required) inv.report.audit_required = acc.audit_required->text == "true";
  inv.input = std::move(acc);
  return Ok{};
}

}  // namespace cage::cli
