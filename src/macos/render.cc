// --dry-run --target macos: prints what a macOS run would apply, on any host. On a non-Mac host only
// the fixed /tmp, /var and /etc links are applied to paths; the proxy port is shown as 3128. Without
// --verbose, a summary (the grants with their sources, network, environment, limits).
#include <string>

#include "common/json.h"
#include "macos/compile.h"
#include "policy/summary.h"

namespace cage::macos {

namespace {

// Everything after the profile is a comment, with control characters replaced, so the output
// stays one valid profile.
std::string safe(std::string s) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

std::string argv_text(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

Result<std::string> render_dry_run(const policy::Policy& policy,
                                   const std::vector<std::pair<std::string, std::string>>& caller_env, bool json,
                                   bool verbose) {
#if defined(__APPLE__)
  const bool on_mac = true;
#else
  const bool on_mac = false;
#endif
  auto plan = compile(policy, make_real_mac_facts(on_mac), caller_env);
  if (!plan) return plan.error();
  if (json) {
    toml::table t;
    t.insert("target", "macos");
    t.insert("sbpl", plan->sbpl);
    toml::array argv, env, unenforced;
    for (const auto& a : plan->argv) argv.push_back(a);
    for (const auto& e : plan->env) env.push_back(e);
    for (const auto& u : plan->unenforced) unenforced.push_back(u);
    t.insert("argv", std::move(argv));
    t.insert("cwd", plan->cwd);
    t.insert("env", std::move(env));
    t.insert("unenforced", std::move(unenforced));
    toml::array dropped;
    for (const auto& d : plan->path_dropped) dropped.push_back(d);
    t.insert("path_dropped", std::move(dropped));
    toml::table links;
    for (const auto& l : plan->home_links) links.insert(l.name, l.target);
    t.insert("private_home", plan->private_home);
    t.insert("home_links", std::move(links));
    return to_json(t) + "\n";
  }
  if (!verbose) {
    std::string out = "platform: macos (sandbox-exec: an SBPL profile, everything not allowed is denied)\n";
    out += "command:     " + safe(argv_text(plan->argv)) + "  (in " + safe(plan->cwd) + ")\n";
    out += policy::summary_grants(policy);
    out += policy.net.empty() ? (policy.share_net ? "network: the host's (--share-net)\n" : "network: none\n")
                              : "network: cage's proxy\n";
    for (const auto& r : policy.net) out += "  allow " + r.pattern.text + "\n";
    if (plan->private_home) {
      out += "home:        private and empty, made at run time";
      for (size_t i = 0; i < plan->home_links.size(); ++i)
        out += std::string(i ? ", ~/" : "; links: ~/") + safe(plan->home_links[i].name);
      out += "\n";
    }
    out += policy::summary_environment(plan->env);
    out += "limits:      " + policy::summary_limits(plan->limits) + "\n";
    for (const auto& u : plan->unenforced) out += "not enforced: " + u + "\n";
    for (const auto& d : plan->path_dropped) out += "PATH without: " + safe(d) + " (the profile hides it)\n";
    return out + "(a summary: --verbose prints the SBPL profile and the environment)\n";
  }
  std::string out = plan->sbpl + "\n;; run: /usr/bin/sandbox-exec -p PROFILE";
  for (const auto& a : plan->argv) out += " " + safe(a);
  out += "\n;; in: " + safe(plan->cwd) + "\n";
  for (const auto& e : plan->env) out += ";; env: " + safe(e) + "\n";
  if (plan->private_home) out += ";; HOME: the run's own empty directory, with these links\n";
  for (const auto& l : plan->home_links)
    out += ";; home link: ~/" + safe(l.name) + " -> " + safe(l.target) + "\n";
  for (const auto& u : plan->unenforced) out += ";; not enforced: " + u + "\n";
  for (const auto& d : plan->path_dropped) out += ";; PATH without: " + safe(d) + " (the profile hides it)\n";
  return out;
}

}  // namespace cage::macos
