// check.cc: `cage --check` on Windows. Tries each mechanism a run needs, as a run would, and undoes
// it at once: an AppContainer profile (made and deleted), a job object with limits; and says whether
// --net can run: ok, MISSING or PARTIAL (the slot containers on the loopback-exemption list, cage's WFP
// filters and the slot locks that `cage --install-windows-network` makes; docs/windows.md). Exit 0
// only if a run without --net can start. Under Wine (tests/cross/wine_smoke.sh) the AppContainer is
// reported missing.
#include <iostream>
#include <string>
#include <vector>

#include "common/exit_status.h"
#include "common/json.h"
#include "windows/execute.h"
#include "windows/loopback.h"
#include "windows/mechanisms.h"
#include "windows/net_slots.h"

namespace cage::win {

int check(bool json) {
  struct Probe {
    std::string name;
    bool ok;
    std::string detail;
  };
  std::vector<Probe> probes;
  WinHostFacts facts;
  facts.pid = ::GetCurrentProcessId();
  facts.nonce[0] = ::GetTickCount();
  ContainerPlan plan;
  plan.name = container_name_of(facts);
  plan.sid = package_sid_of(plan.name);
  auto c = AppContainer::open(plan);
  const bool deleted = delete_container_profile(plan.name);
  probes.push_back({"appcontainer", c && deleted,
                    c ? (deleted ? "AppContainer profile " + plan.name + ": created and deleted"
                                 : "AppContainer profile " + plan.name + ": created, but not deleted")
                      : c.error().reason + " (" + c.error().remedy + ")"});
  JobPlan job;
  job.limit_flags |= kJobLimitActiveProcess;
  job.active_processes = 8;
  auto j = make_job(job);
  probes.push_back({"job", static_cast<bool>(j),
                    j ? "job object with kill-on-close and limits: created" : j.error().reason});
  bool all = true;
  for (const auto& p : probes) all = all && p.ok;
  // --net is optional: reported, not counted in "full confinement". Read only: --check changes no
  // machine-wide setting (the install command does, elevated).
  const NetInstallReport net = assess_net_install(read_net_install(program_data_dir()));
  const Error refusal = net_not_installed(net);
  probes.push_back({"net", net.state == NetInstall::ok,
                    net.state == NetInstall::ok
                        ? "--net: " + net.detail + " (cage --install-windows-network: done)"
                        : std::string(to_string(net.state)) + ": " + refusal.reason + "; " + refusal.remedy});
  const bool wine = under_wine();
  if (json) {
    toml::table mechs;
    for (const auto& p : probes) mechs.insert(p.name, toml::table{{"available", p.ok}, {"detail", p.detail}});
    if (auto* n = mechs["net"].as_table()) n->insert("state", to_string(net.state));
    toml::table out{
        {"platform", "windows"}, {"wine", wine}, {"full_confinement", all}, {"mechanisms", std::move(mechs)}};
    std::cout << to_json(out) << "\n";
  } else {
    for (const auto& p : probes)
      std::cout << (p.ok                                                  ? "ok      "
                    : p.name == "net" && net.state == NetInstall::partial ? "PARTIAL "
                                                                          : "MISSING ")
                << p.name << ": " << p.detail << "\n";
    if (wine)
      std::cout << "note    wine: Wine runs these calls but enforces none of them; use a Windows host\n";
    std::cout << (all ? "full confinement: available (enforcement: run cage --self-test)\n"
                      : "full confinement: NOT available (cage will refuse every run)\n");
  }
  return all ? 0 : exit_status::kCageError;
}

}  // namespace cage::win
