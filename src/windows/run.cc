// run.cc: one Windows run from a validated Policy (parent side). With --net: the machine's setup is
// checked (refused unless complete), a crashed run's journals are replayed, a slot is claimed and the
// proxy bound to its port (net_slot_lock.cc), all before compile, since the slot names the container
// and the port; then compile, execute, and the slot is let go only after execute has removed the
// run's grants. The proxy runs on a thread of cage's own process, outside the AppContainer.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "proxy/loopback.h"
#include "windows/execute.h"
#include "windows/mechanisms.h"

namespace cage::win {

namespace {

// The same LoopbackProxy as on macOS and Linux's Landlock-only mechanism, with the run's secret in
// the *_PROXY URLs, on 127.0.0.1 at the slot's port: the one address cage's WFP filters let the
// slot's container reach (docs/windows.md).
Result<std::unique_ptr<proxy::LoopbackProxy>> start_proxy(const policy::Policy& pol, uint16_t port) {
  proxy::ServerOptions opt;
  opt.max_connections = proxy::connection_limit(pol.limits.memory_bytes);
  return proxy::LoopbackProxy::start(proxy::Allowlist(pol.net), proxy::print_denials, opt, port);
}

struct NetRun {
  std::unique_ptr<NetSlotClaim> slot;  // released after the proxy stops (declared first: destroyed last)
  std::unique_ptr<proxy::LoopbackProxy> proxy;
  std::vector<std::string> notes;
};

Result<NetSlotRequest> slot_request(const WinHostFacts& facts) {
  auto user = caller_user_sid();
  if (!user) return user.error();
  const std::string local =
      facts.localappdata.empty() ? facts.userprofile + "\\AppData\\Local" : facts.localappdata;
  char run[40];
  std::snprintf(run, sizeof run, "%u-%08x%08x", facts.pid, facts.nonce[0], facts.nonce[1]);
  return NetSlotRequest{facts.programdata, local + "\\cage\\restore", *user, run};
}

// Refuses --net unless the install is complete, then claims the first usable slot: never a run
// with an exempt container that cage's filters do not confine.
Status start_net(const policy::Policy& pol, const WinHostFacts& facts, NetRun& net) {
  const NetInstallReport state = assess_net_install(read_net_install(facts.programdata));
  if (state.state != NetInstall::ok) return net_not_installed(state);
  auto req = slot_request(facts);
  if (!req) return req.error();
  // A crashed run of this user may have left ACEs for a slot's SID: its journal is replayed first,
  // so that slot is clean again before it is judged (judge_slot).
  for (const auto& problem : restore_orphaned_journals(req->journal_dir))
    std::cerr << "cage: warning: " << problem << "\n";
  std::vector<SlotAttempt> attempts;
  auto claim = claim_net_slot(
      *req,
      [&](int, uint16_t port, std::string& why) {
        auto p = start_proxy(pol, port);
        if (!p) {
          why = p.error().reason;
          return false;
        }
        net.proxy = std::move(*p);
        return true;
      },
      attempts);
  if (!claim) return claim.error();
  net.slot = std::move(*claim);
  for (const auto& a : attempts) net.notes.push_back(describe_attempt(a));
  return Ok{};
}

}  // namespace

Result<int> run(const policy::Policy& pol, const Environ& env) {
  WinHostFacts facts = real_host_facts(pol, env, 0);
  NetRun net;
  if (!pol.net.empty() && !pol.share_net) {
    if (auto s = start_net(pol, facts, net); !s) return s.error();
    facts.net_slot = net.slot->slot();
    facts.net_slot_notes = net.notes;
    facts.proxy_port = net_slot_port(facts.net_slot);
    facts.proxy_secret = net.proxy->secret();
  }
  auto plan = compile(pol, facts, env);
  if (!plan) return plan.error();
  // What this run cannot enforce is said at every run, not only by --dry-run: never a silently
  // weaker sandbox (as Linux warns of a limit no cgroup enforces).
  for (const auto& g : plan->gaps) std::cerr << "cage: warning: not enforced on Windows: " << g << "\n";
  // Once the grants are removed (execute's cleanup) and only then may another run take this slot's
  // SID; done inside execute's cleanup, so that closing the console (Windows ends cage when the
  // handler returns) still marks the slot released.
  auto let_go = [&net] {
    net.proxy.reset();
    if (net.slot) net.slot->release();
  };
  auto status = execute(*plan, let_go);
  let_go();  // execute may fail before its cleanup is armed
  return status;
}

Result<std::string> dry_run(const policy::Policy& pol, const Environ& env, bool json, bool verbose) {
  WinHostFacts facts = real_host_facts(pol, env, 0);
  if (!pol.net.empty() && !pol.share_net) {
    // What a run would decide now, claiming nothing: the install's state and the slots up to the
    // first free one.
    const NetInstallReport state = assess_net_install(read_net_install(facts.programdata));
    facts.net_slot_notes.push_back(std::string("install: ") + to_string(state.state) + " (" + state.detail +
                                   ")");
    if (state.state == NetInstall::ok)
      if (auto req = slot_request(facts))
        for (const auto& a : preview_net_slots(*req)) facts.net_slot_notes.push_back(describe_attempt(a));
  }
  auto plan = compile(pol, facts, env);
  if (!plan) return plan.error();
  return json ? render_json(*plan) : verbose ? render_text(*plan) : render_summary(*plan, pol);
}

}  // namespace cage::win
