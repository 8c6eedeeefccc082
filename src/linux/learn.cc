// --learn's view and profile (see learn.h): pure, no system calls.
#include "linux/learn.h"

#include <algorithm>
#include <map>

#include "linux/compile.h"

namespace cage::lx::learn {
namespace {

using policy::is_beneath;

// Three or more granted entries of one directory become the directory, as explain.cc folds refusals.
constexpr size_t kFold = 3;

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// A grant of / or of a home (or an ancestor of one) hands over every credential in it.
bool too_wide(const std::string& path, const std::string& home) {
  return path == "/" || (!home.empty() && is_beneath(home, path));
}

// cage makes /proc and /dev itself, and /sys is never shown: not the profile's to grant.
bool cage_owned(const std::string& path) {
  return is_beneath(path, "/proc") || is_beneath(path, "/dev") || is_beneath(path, "/sys");
}

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\', out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789ABCDEF";
      out += "\\u00", out += hex[c >> 4], out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// A comment line carries nothing the workload chose that could end it early: a newline or control
// character in a path would otherwise start a line of TOML of the workload's own.
std::string comment_safe(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
  return out;
}

// explain's remedy ("--ro /a", "--rw '/a b'") back to the path it names.
std::string remedy_path(const std::string& remedy) {
  std::string arg = remedy.substr(remedy.find(' ') + 1);
  if (arg.empty() || arg[0] != '\'') return arg;
  std::string out;
  for (size_t i = 1; i < arg.size(); ++i) {
    if (arg.compare(i, 4, "'\\''") == 0) {
      out += '\'', i += 3;
    } else if (arg[i] != '\'') {
      out += arg[i];
    }
  }
  return out;
}

struct Entry {
  std::string path;
  std::string note;  // not empty: written commented out, with this reason
};
using Entries = std::map<std::string, Entry>;  // by path: sorted and unique

void add(Entries& to, const std::string& path, std::string note) {
  auto [it, fresh] = to.emplace(path, Entry{path, note});
  if (!fresh && it->second.note.empty() == false && note.empty()) it->second.note.clear();
}

// What the learned grant would be: granted, or commented out and why.
std::string note_for(const Observed& o, const std::string& path, bool write) {
  if (is_secret(path, o.home))
    return "a credential store, hidden while learning: grant it only if the command needs it";
  if (too_wide(path, o.home)) return "would grant the root or a whole home directory";
  if (write && (is_beneath(path, "/tmp") || is_beneath(path, "/var/tmp") || is_beneath(path, "/run")))
    return "a private tmpfs while learning: the host's directory is not granted";
  if (write && std::none_of(o.writable.begin(), o.writable.end(),
                            [&](const std::string& w) { return is_beneath(path, w); }))
    return "written while learning and refused there (only the working directory and --rw were writable)";
  return "";
}

// Granted siblings fold into their directory, unless that is too wide; repeated for deeper trees.
void fold(Entries& ro, const std::string& home) {
  for (bool again = true; again;) {
    again = false;
    std::map<std::string, size_t> per_dir;
    for (const auto& [p, e] : ro)
      if (e.note.empty()) ++per_dir[parent_of(p)];
    for (const auto& [dir, n] : per_dir) {
      if (n < kFold || too_wide(dir, home) || is_secret(dir, home) || cage_owned(dir)) continue;
      std::erase_if(ro, [&](const auto& kv) { return kv.second.note.empty() && is_beneath(kv.first, dir); });
      ro.emplace(dir, Entry{dir, ""});
      again = true;
      break;
    }
  }
}

// A granted path beneath another granted one adds nothing.
void drop_covered(Entries& e, const Entries& by) {
  std::erase_if(e, [&](const auto& kv) {
    if (!kv.second.note.empty()) return false;
    return std::any_of(by.begin(), by.end(), [&](const auto& o) {
      return o.second.note.empty() && o.first != kv.first && is_beneath(kv.first, o.first);
    });
  });
}

void write_array(std::string& out, const char* key, const Entries& e,
                 const std::vector<std::string>& extra = {}) {
  if (e.empty() && extra.empty()) return;
  out += std::string(key) + " = [\n";
  for (const auto& x : extra) out += "  " + x + ",\n";
  for (const auto& [p, entry] : e)
    if (entry.note.empty()) out += "  " + toml_string(p) + ",\n";
  for (const auto& [p, entry] : e)
    if (!entry.note.empty()) out += "  # " + comment_safe(toml_string(p)) + ",  # " + entry.note + "\n";
  out += "]\n";
}

// Secret locations beneath a grant, hidden in the profile (optional: skipped while absent).
// The limits closing the profile, commented out: a ceiling is the user's choice, and one set at
// the figure itself would fail the next run that uses a little more.
void write_limits(std::string& out, const Observed& o) {
  if (o.memory_peak < 0 && o.tasks_peak < 0) return;
  constexpr int64_t kMiB = int64_t{1} << 20;
  out += "\n# Limits reached while learning, not enforced: uncomment [limits] and a line to enforce one.\n"
         "# Each suggested ceiling leaves headroom (cage(1) LEARN), so a rerun does not fail on variance.\n"
         "# [limits]\n";
  if (o.memory_peak >= 0)
    out += "# memory = \"" + std::to_string(memory_suggested(o.memory_peak) / kMiB) + "M\"  # peak " +
           std::to_string((o.memory_peak + kMiB - 1) / kMiB) + " MiB: " + comment_safe(o.memory_source) + "\n";
  if (o.tasks_peak >= 0)
    out += "# pids = " + std::to_string(tasks_suggested(o.tasks_peak)) + "  # " + std::to_string(o.tasks_peak) +
           ": " + comment_safe(o.tasks_source) + "\n";
}

std::vector<std::string> hides_for(const Entries& ro, const Entries& rw, const std::string& home) {
  std::vector<std::string> out;
  if (home.empty()) return out;
  for (const auto& rel : secret_locations()) {
    const std::string s = home + "/" + rel;
    auto covers = [&](const Entries& e) {
      return std::any_of(e.begin(), e.end(),
                         [&](const auto& kv) { return kv.second.note.empty() && is_beneath(s, kv.first); });
    };
    if (covers(ro) || covers(rw)) out.push_back("{ path = " + toml_string(s) + ", optional = true }");
  }
  return out;
}

}  // namespace

int64_t memory_suggested(int64_t peak_bytes) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  return std::max<int64_t>(64 * kMiB, (2 * peak_bytes + kMiB - 1) / kMiB * kMiB);
}

int64_t tasks_suggested(int64_t tasks) {
  return std::max<int64_t>(64, 4 * tasks);
}

const std::vector<std::string>& secret_locations() {
  static const std::vector<std::string> kList = {".ssh",
                                                 ".gnupg",
                                                 ".aws",
                                                 ".azure",
                                                 ".config/gcloud",
                                                 ".kube",
                                                 ".docker/config.json",
                                                 ".netrc",
                                                 ".npmrc",
                                                 ".pypirc",
                                                 ".git-credentials",
                                                 ".config/gh",
                                                 ".config/hub",
                                                 ".local/share/keyrings",
                                                 ".password-store",
                                                 ".cargo/credentials",
                                                 ".cargo/credentials.toml",
                                                 ".vault-token",
                                                 ".pgpass",
                                                 ".my.cnf",
                                                 ".gem/credentials",
                                                 ".terraform.d/credentials.tfrc.json"};
  return kList;
}

bool is_secret(const std::string& path, const std::string& home) {
  const std::string base = path.substr(path.rfind('/') + 1);
  if (base == ".env" || base.rfind(".env.", 0) == 0) return true;
  if (home.empty() || home == "/") return false;
  return std::any_of(secret_locations().begin(), secret_locations().end(),
                     [&](const std::string& rel) { return is_beneath(path, home + "/" + rel); });
}

Result<policy::Policy> learning_view(const policy::Policy& base,
                                     const std::vector<std::string>& present_secrets) {
  const std::string& in = base.learn_origin;
  if (base.explain)
    return usage(in, "--explain judges a run against its policy, --learn runs a wider view",
                 "use one of them");
  if (base.share_net)
    return invalid(in, "with --share-net the destinations the command reaches are not observed",
                   "drop --share-net; grant each destination with --net while learning");
  if (!base.system_view)
    return invalid(in, "--no-system cannot be learned: the learning view starts from the host",
                   "drop --no-system");
  if (!base.exec.empty())
    return invalid(in, "--exec cannot be learned: the learning view executes from the whole host",
                   "drop --exec");
  if (cwd_too_wide(base.cwd, base.home))
    return invalid(in,
                   "the working directory " + base.cwd +
                       " is writable while learning and holds far more than "
                       "a project (the root, $HOME, a shared or a system directory)",
                   "run from the project's directory, or name it with --chdir");
  policy::Policy p = base;
  const std::string why = "--learn (learning view)";
  p.ro.push_back({"/", why + ": the host, read-only"});
  for (const char* dir : {"/tmp", "/var/tmp", "/run"}) {
    if (std::any_of(base.rw.begin(), base.rw.end(),
                    [&](const policy::Grant& g) { return is_beneath(dir, g.path); }))
      continue;
    p.tmpfs.push_back({dir, why + ": private " + dir});
    // The home stays in view (read-only, as the rest of the host) where a private directory covers it.
    if (!base.home.empty() && is_beneath(base.home, dir))
      p.ro.push_back({base.home, why + ": $HOME, read-only"});
  }
  p.rw.push_back({base.cwd, why + ": the working directory"});
  for (const auto& s : present_secrets) p.hide.push_back({s, why + ": a credential store"});
  return p;
}

Plan with_root(const Plan& baseline) {
  Plan p = baseline;
  MountStep root{MountKind::tmpfs, "", "/", "", true, true, "fresh root"};
  p.mounts.insert(p.mounts.begin(), root);
  return p;
}

std::string render_profile(const Observed& o) {
  Entries ro, rw;
  std::map<std::string, std::string> net_refused;
  bool killed = false;
  std::string refused_calls;  // the seccomp profile's errno answers, the same on every run
  for (const auto& p : o.user_ro) add(ro, p, "");
  for (const auto& p : o.user_rw) add(rw, p, "");
  for (const auto& f : o.findings) {
    if (f.verdict == explain::Verdict::killed) killed = true;
    if (f.op == explain::Op::syscall) {
      if (f.verdict == explain::Verdict::refused)
        refused_calls += (refused_calls.empty() ? "" : ", ") + f.path;
      continue;
    }
    if (f.op == explain::Op::connect) {
      net_refused[f.path] = "refused while learning: add --net " + comment_safe(f.path) + " when learning";
      continue;
    }
    const bool write =
        f.op == explain::Op::write || f.op == explain::Op::create || f.op == explain::Op::remove;
    const bool rwr = f.remedy.rfind("--rw ", 0) == 0, ror = f.remedy.rfind("--ro ", 0) == 0;
    if (!rwr && !ror) continue;
    const std::string path = remedy_path(f.remedy);
    if (cage_owned(path)) continue;
    add(rwr ? rw : ro, path, note_for(o, path, write));
  }
  fold(ro, o.home);
  drop_covered(rw, rw);
  drop_covered(ro, rw);
  drop_covered(ro, ro);
  std::erase_if(ro, [&](const auto& kv) { return kv.second.note.empty() == false && rw.count(kv.first); });

  std::string out = "# cage profile written by --learn on " + o.date + "\n";
  std::string cmd;
  for (const auto& a : o.argv) cmd += (cmd.empty() ? "" : " ") + a;
  out += "# command: " + comment_safe(cmd) + "\n";
  out +=
      "# working directory: " + comment_safe(o.cwd) + "; exit status " + std::to_string(o.exit_status) + "\n";
  out +=
      "# observed: the paths it opened, ran, wrote and listed, and the destinations cage's proxy let\n"
      "# through; paths the default view already shows are left out. Not observed: the environment\n"
      "# variables it read (a process reads its own environment; nothing outside it sees which).\n"
      "# Lines commented out were used but are not granted: read why.\n";
  if (o.offline)
    out += "# network: none while learning (no --net); name each destination with --net when learning\n";
  if (o.exit_status != 0)
    out += "# warning: the command failed while learning; this profile may be incomplete\n";
  if (killed) out += "# warning: the seccomp filter killed a process of the command; see --explain\n";
  if (!refused_calls.empty())
    out += "# seccomp: the profile refused " + comment_safe(refused_calls) +
           " with an error, as it will on every run (--explain names the profile that allows them)\n";
  if (o.dropped)
    out += "# warning: " + std::to_string(o.dropped) + " distinct accesses were not recorded (limit)\n";
  out += "version = 1\n\n[fs]\n";
  write_array(out, "ro", ro);
  write_array(out, "rw", rw);
  auto hides = hides_for(ro, rw, o.home);
  if (!hides.empty()) write_array(out, "hide", {}, hides);
  if (!o.env_pass.empty()) {
    out += "\n[env]\npass = [";
    for (size_t i = 0; i < o.env_pass.size(); ++i) out += (i ? ", " : "") + toml_string(o.env_pass[i]);
    out += "]\n";
  }
  if (!o.net_used.empty() || !net_refused.empty()) {
    out += "\n[net]\nallow = [\n";
    for (const auto& hp : o.net_used) out += "  " + toml_string(hp) + ",\n";
    for (const auto& [hp, note] : net_refused)
      out += "  # " + comment_safe(toml_string(hp)) + ",  # " + note + "\n";
    out += "]\n";
  }
  write_limits(out, o);
  return out;
}

}  // namespace cage::lx::learn
