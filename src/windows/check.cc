// check.cc: `cage --check` on Windows. Tries each mechanism a run needs, as a run would, and undoes
// it at once: a restricted Low token, a job object with limits, a dynamic WFP session with cage's
// sublayer (the same rights as adding filters). Exit 0 only if a run without --share-net can start.
// Under Wine (tests/cross/wine_smoke.sh) WFP is reported missing.
#include <iostream>
#include <string>
#include <vector>

#include "common/exit_status.h"
#include "common/json.h"
#include "windows/execute.h"
#include "windows/mechanisms.h"

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
  TokenPlan token;
  token.run_sid = run_sid_of(facts);
  auto t = make_restricted_token(token);
  probes.push_back(
      {"token", static_cast<bool>(t), t ? "restricted token at Low integrity: created" : t.error().reason});
  JobPlan job;
  job.limit_flags |= kJobLimitActiveProcess;
  job.active_processes = 8;
  auto j = make_job(job);
  probes.push_back({"job", static_cast<bool>(j),
                    j ? "job object with kill-on-close and limits: created" : j.error().reason});
  WfpPlan wfp;
  wfp.enabled = true;
  auto w = WfpSession::open(wfp);
  probes.push_back({"wfp", static_cast<bool>(w),
                    w ? "dynamic WFP session and sublayer: added (and removed)"
                      : w.error().reason + " (" + w.error().remedy + ")"});
  bool all = true;
  for (const auto& p : probes) all = all && p.ok;
  const bool wine = under_wine();
  if (json) {
    toml::table mechs;
    for (const auto& p : probes) mechs.insert(p.name, toml::table{{"available", p.ok}, {"detail", p.detail}});
    toml::table out{
        {"platform", "windows"}, {"wine", wine}, {"full_confinement", all}, {"mechanisms", std::move(mechs)}};
    std::cout << to_json(out) << "\n";
  } else {
    for (const auto& p : probes)
      std::cout << (p.ok ? "ok      " : "MISSING ") << p.name << ": " << p.detail << "\n";
    if (wine)
      std::cout << "note    wine: Wine runs these calls but enforces none of them; use a Windows host\n";
    std::cout << (all ? "full confinement: available (enforcement: run cage --self-test)\n"
                      : "full confinement: NOT available (cage will refuse runs without --share-net)\n");
  }
  return all ? 0 : exit_status::kCageError;
}

}  // namespace cage::win
