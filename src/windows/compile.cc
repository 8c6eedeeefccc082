// win::compile: decides a whole Windows run. Writes are scoped by integrity (a Low token cannot write
// Medium objects; --rw paths get a Low label, --hide paths a Medium no-read-up label), processes by a
// job object, the network by WFP filters; reads are NOT scoped beyond that (see gaps and
// man/sections/platforms.roff). Tested by tests/unit/windows_plan_test.cc.
#include "windows/compile.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "proxy/env.h"

namespace cage::win {

namespace {

using policy::is_beneath;

// Passed through when set: what Windows programs need to start (SystemRoot for DLL loading, ComSpec,
// PATHEXT) and the terminal/locale set of the Linux build.
const char* const kPassedEnv[] = {"PATH",
                                  "PATHEXT",
                                  "SYSTEMROOT",
                                  "SYSTEMDRIVE",
                                  "WINDIR",
                                  "COMSPEC",
                                  "NUMBER_OF_PROCESSORS",
                                  "PROCESSOR_ARCHITECTURE",
                                  "PROCESSOR_IDENTIFIER",
                                  "OS",
                                  "USERNAME",
                                  "TERM",
                                  "COLORTERM",
                                  "LANG",
                                  "LC_*",
                                  "TZ",
                                  "NO_COLOR",
                                  "COLUMNS",
                                  "LINES",
                                  nullptr};

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
Status add_grant(WinPlan& plan, const policy::Grant& g, AclChange::Kind kind, const WinHostFacts& facts) {
  auto path = to_windows_path(g.path, facts, g.origin);
  if (!path) return path.error();
  char k = facts.kind ? facts.kind(*path) : 'd';
  if (k == 0 && kind != AclChange::Kind::no_read_up)
    return invalid(g.origin, "no such file or directory (" + *path + ")",
                   "create it first, or check the path");
  if (k == 0) return Ok{};  // nothing to hide
  const bool dir = k == 'd';
  const char* inherit = dir ? "OICI" : "";
  switch (kind) {
    case AclChange::Kind::low_label:
      // The Low label lets the Low token write; the explicit ACE covers grants only reachable through
      // a group, which the token holds deny-only.
      plan.acl.push_back(
          AclChange{kind, *path, dir, std::string("S:(ML;") + inherit + ";NW;;;LW)", g.origin});
      plan.acl.push_back(AclChange{AclChange::Kind::allow_user, *path, dir,
                                   std::string("D:(A;") + inherit + ";0x1301bf;;;<USER>)", g.origin});
      break;
    case AclChange::Kind::allow_user:
      plan.acl.push_back(
          AclChange{kind, *path, dir, std::string("D:(A;") + inherit + ";0x1200a9;;;<USER>)", g.origin});
      break;
    case AclChange::Kind::no_read_up:
      plan.acl.push_back(
          AclChange{kind, *path, dir, std::string("S:(ML;") + inherit + ";NWNRNX;;;ME)", g.origin});
      break;
  }
  return Ok{};
}

// WFP cannot match "this process tree", but ALE_USER_ID runs an access check of the connecting token
// against a security descriptor. The run's token carries run_sid as a restricting SID, and a deny ACE
// for a restricting SID fails the token's second (restricted) access check: so "D:(D;;CC;;;run)(A;;CC;;;WD)"
// grants every token except the run's. Every other process is permitted by the weight-15 filter in
// cage's sublayer (other sublayers still decide for it as before); the run falls through to the proxy
// permit and the blocks below it.
void network(WinPlan& plan, const policy::Policy& p, uint16_t port) {
  using F = WfpFilter;
  using C = WfpCondition;
  if (p.share_net) {
    plan.gaps.push_back("--share-net: the host network, unfiltered");
    return;
  }
  plan.wfp.enabled = true;
  if (!p.net.empty() && p.net_mode == policy::Policy::NetMode::both)
    plan.gaps.push_back(
        "--net: proxy only; programs that ignore HTTPS_PROXY get no network (no transparent "
        "mode on Windows)");
  // Owner and group too: an access check refuses a descriptor without them.
  const std::string not_this_run = "O:SYG:SYD:(D;;CC;;;" + plan.token.run_sid + ")(A;;CC;;;WD)";
  for (auto layer : {F::Layer::ale_auth_connect_v4, F::Layer::ale_auth_connect_v6})
    plan.wfp.filters.push_back(F{layer,
                                 F::Action::permit,
                                 15,
                                 {C{C::Field::ale_user_id, 0, not_this_run}},
                                 "any other process: not cage's business"});
  if (plan.proxy)
    plan.wfp.filters.push_back(
        F{F::Layer::ale_auth_connect_v4,
          F::Action::permit,
          14,
          {C{C::Field::ip_protocol, 6, ""}, C{C::Field::ip_remote_address_v4, 0x7f000001, ""},
           C{C::Field::ip_remote_port, port, ""}},
          "--net: TCP to cage's proxy on 127.0.0.1:" + std::to_string(port)});
  for (auto layer : {F::Layer::ale_auth_connect_v4, F::Layer::ale_auth_connect_v6})
    plan.wfp.filters.push_back(
        F{layer, F::Action::block, 0, {}, "the run: no network but the proxy", kFilterFlagClearActionRight});
  plan.gaps.push_back(
      "network: on a real Windows host only --self-test shows that WFP tells the run's "
      "connections apart from the rest of the machine's");
}

void limits(WinPlan& plan, const policy::Limits& l, const WinHostFacts& facts) {
  if (l.pids) {
    plan.job.limit_flags |= kJobLimitActiveProcess;
    plan.job.active_processes = static_cast<uint32_t>(std::min<uint64_t>(*l.pids, 0xffffffffu));
  }
  if (l.memory_bytes) {
    plan.job.limit_flags |= kJobLimitJobMemory;
    plan.job.job_memory = *l.memory_bytes;
  }
  if (l.cpu) {
    double share = *l.cpu / std::max(1u, facts.cpu_count) * 10000.0;
    plan.job.cpu_rate_flags = kCpuRateEnable | kCpuRateHardCap;
    plan.job.cpu_rate = static_cast<uint32_t>(std::clamp(share, 1.0, 10000.0));
  }
  if (l.timeout_ms) plan.timeout_ms = *l.timeout_ms;
  for (const auto& r : l.rlimits)
    plan.gaps.push_back(r.origin + ": Windows has no resource limit of this kind");
}

// `path` is `dir` or inside it, compared as Windows compares names (case-insensitively).
bool windows_beneath(const std::string& path, const std::string& dir) {
  std::string p = upper(path), d = upper(dir);
  while (d.size() > 3 && d.back() == '\\') d.pop_back();
  return p == d ||
         (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && (d.back() == '\\' || p[d.size()] == '\\'));
}

std::string run_id(const WinHostFacts& facts) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%u-%08x%08x", facts.pid, facts.nonce[0], facts.nonce[1]);
  return buf;
}

}  // namespace

std::string run_sid_of(const WinHostFacts& facts) {
  return "S-1-9-" + std::to_string(facts.nonce[0]) + "-" + std::to_string(facts.nonce[1]) + "-" +
         std::to_string(facts.pid);
}

std::string insert_ace(const std::string& dacl, const std::string& ace) {
  if (dacl.rfind("D:", 0) != 0) return "D:" + ace;  // no DACL part at all: an empty one plus ours
  if (dacl.find("NO_ACCESS_CONTROL") != std::string::npos) return dacl;  // NULL DACL: all allowed already
  size_t pos = dacl.find('(');
  if (pos == std::string::npos) return dacl + ace;  // "D:P" alone: an empty DACL
  // Explicit deny ACEs come first; ours goes before the first ACE that is not one.
  while (pos < dacl.size() && dacl[pos] == '(') {
    size_t end = dacl.find(')', pos);
    if (end == std::string::npos) break;
    std::string body = dacl.substr(pos + 1, end - pos - 1);
    std::string type = body.substr(0, body.find(';'));
    std::string flags = body.substr(type.size() + 1, body.find(';', type.size() + 1) - type.size() - 1);
    if ((type != "D" && type != "OD") || flags.find("ID") != std::string::npos) break;
    pos = end + 1;
  }
  return dacl.substr(0, pos) + ace + dacl.substr(pos);
}

std::string posix_form(const std::string& text) {
  std::string s = text;
  std::replace(s.begin(), s.end(), '\\', '/');
  if (s.size() >= 2 && std::isalpha(static_cast<unsigned char>(s[0])) && s[1] == ':') {
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return "/" + s.substr(0, 2) + (s.size() > 2 && s[2] != '/' ? "/" : "") + s.substr(2);
  }
  return s;
}

void normalize_input(policy::PolicyInput& in) {
  for (auto* list : {&in.ro, &in.rw, &in.tmpfs, &in.hide})
    for (auto& v : *list) {
      v.text = posix_form(v.text);
      v.base = posix_form(v.base);
    }
  if (in.chdir) {
    in.chdir->text = posix_form(in.chdir->text);
    in.chdir->base = posix_form(in.chdir->base);
  }
}

Result<std::string> to_windows_path(const std::string& posix, const WinHostFacts& facts,
                                    const std::string& input) {
  auto backslashed = [](std::string s) {
    std::replace(s.begin(), s.end(), '/', '\\');
    return s;
  };
  if (posix.size() >= 3 && posix[0] == '/' && std::isalpha(static_cast<unsigned char>(posix[1])) &&
      posix[2] == ':') {
    std::string rest = posix.substr(3);
    return std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(posix[1])))) + ":" +
           (rest.empty() ? "\\" : backslashed(rest));
  }
  if (!facts.on_windows && !facts.home_posix.empty() && is_beneath(posix, facts.home_posix))
    return facts.userprofile + backslashed(posix.substr(facts.home_posix.size()));
  if (!facts.on_windows && !posix.empty() && posix[0] == '/') return "Z:" + backslashed(posix);
  return invalid(input, "cannot be mapped to a Windows path (" + posix + ")",
                 "use a drive path such as C:/work/src, or ~/... for %USERPROFILE%");
}

std::string quote_argument(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n\v\"") == std::string::npos) return arg;
  std::string out = "\"";
  size_t backslashes = 0;
  for (char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    // Backslashes are literal unless they precede a quote: then each is doubled and the quote escaped.
    out.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
    backslashes = 0;
    out += c;
  }
  out.append(backslashes * 2, '\\');  // before the closing quote
  return out + "\"";
}

std::vector<std::string> build_environment(const policy::EnvPolicy& env,
                                           const std::vector<std::pair<std::string, std::string>>& host,
                                           const std::vector<std::pair<std::string, std::string>>& forced) {
  return policy::build_environment(env, host, forced, kPassedEnv, /*fold_case=*/true);
}

Result<WinPlan> compile(const policy::Policy& p, const WinHostFacts& facts,
                        const std::vector<std::pair<std::string, std::string>>& caller_env) {
  if (auto s = policy::refuse_linux_only(p, "Windows"); !s) return s.error();  // never a silent drop
  if (!p.tmpfs.empty())
    return unavailable(p.tmpfs.front().origin, "Windows has no private tmpfs mounts",
                       "use --rw on a scratch directory instead");
  if (p.limits.tmpfs_bytes)  // its private TMPDIR is a directory on the host's disk: nothing to size
    return unavailable("--tmpfs-size", "Windows has no private tmpfs mounts to size",
                       "drop --tmpfs-size (the run's TMPDIR is a directory on the host's disk)");
  if (!p.net.empty() && !p.share_net && p.net_mode == policy::Policy::NetMode::transparent)
    return unavailable("--net-mode transparent", "Windows has no transparent mode: only the proxy is carried",
                       "use --net-mode proxy (clients that honour HTTPS_PROXY)");
  WinPlan plan;
  plan.argv = p.argv;
  plan.proxy_port = facts.proxy_port ? facts.proxy_port : 3128;
  plan.proxy = !p.net.empty() && !p.share_net;
  plan.token.run_sid = run_sid_of(facts);
  const std::string local =
      facts.localappdata.empty() ? facts.userprofile + "\\AppData\\Local" : facts.localappdata;
  const std::string id = run_id(facts);
  plan.journal.dir = local + "\\cage\\restore";
  plan.journal.file = plan.journal.dir + "\\run-" + id + ".journal";
  // Only the caller and SYSTEM, not inherited from LOCALAPPDATA, labelled Low so the run can write it.
  plan.temp.path = local + "\\cage\\tmp\\run-" + id;
  plan.temp.sddl = "D:P(A;OICI;FA;;;<USER>)(A;OICI;FA;;;SY)S:(ML;OICI;NW;;;LW)";
  for (const auto& a : p.argv)
    plan.command_line += (plan.command_line.empty() ? "" : " ") + quote_argument(a);
  auto cwd = to_windows_path(p.cwd, facts, "--chdir " + p.cwd);
  if (!cwd) return cwd.error();
  plan.cwd = *cwd;
  for (const auto& g : p.ro)
    if (auto s = add_grant(plan, g, AclChange::Kind::allow_user, facts); !s) return s.error();
  for (const auto& g : p.rw)
    if (auto s = add_grant(plan, g, AclChange::Kind::low_label, facts); !s) return s.error();
  // A workload that could write the restore journals could make the next cage change any descriptor
  // or delete any tree of the user's: no write grant may cover cage's own directory.
  const std::string own = local + "\\cage";
  for (const auto& a : plan.acl)
    if (a.kind == AclChange::Kind::low_label &&
        (windows_beneath(own, a.path) || windows_beneath(a.path, own)))
      return invalid(a.why, "would make cage's restore journals (" + own + ") writable by the sandbox",
                     "grant a directory that does not contain " + own);
  for (const auto& g : p.hide)
    if (auto s = add_grant(plan, g, AclChange::Kind::no_read_up, facts); !s) return s.error();
  plan.gaps.push_back(
      "reads: the Low-integrity token reads whatever your account can read (the home "
      "included) and the registry, except --hide paths");
  plan.gaps.push_back(
      "writes: what Windows labels Low (AppData\\LocalLow) stays writable; other Low-integrity "
      "processes of yours can write the --rw paths during the run");
  if (!p.system_view) plan.gaps.push_back("--no-system: Windows system directories stay readable");
  network(plan, p, plan.proxy_port);
  limits(plan, p.limits, facts);
  if (p.limits.strict && !p.limits.rlimits.empty())
    return unavailable(p.limits.rlimits.front().origin, "Windows has no resource limits of this kind",
                       "drop the limit or --strict-limits");
  std::string profile = facts.userprofile;
  if (!p.home.empty())
    if (auto h = to_windows_path(p.home, facts, "HOME"); h) profile = *h;
  std::vector<std::pair<std::string, std::string>> forced = {{"USERPROFILE", profile},
                                                              {policy::kInsideMarker, "1"}};
  if (!p.run_id.empty()) forced.emplace_back(policy::kRunIdVariable, p.run_id);
  forced.emplace_back("TEMP", plan.temp.path);
  forced.emplace_back("TMP", plan.temp.path);
  if (plan.proxy)
    // cage's proxy listens on the host's loopback, where any local process could reach it: with a
    // secret it serves only clients that present it (the URLs carry it).
    for (auto& kv : facts.proxy_secret.empty()
                        ? proxy::proxy_environment(plan.proxy_port, p.net)
                        : proxy::proxy_environment_with_secret(std::to_string(plan.proxy_port),
                                                               facts.proxy_secret, p.net))
      forced.push_back(std::move(kv));
  plan.env = win::build_environment(p.env, caller_env, forced);
  return plan;
}

}  // namespace cage::win
