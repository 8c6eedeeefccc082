// The Windows executor: carries out a WinPlan exactly (windows/compile.cc decides everything), and
// the host facts compile needs. Windows builds only; src/backend/windows.cc calls these.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "windows/compile.h"

namespace cage::win {

using Environ = std::vector<std::pair<std::string, std::string>>;

// The real host: path kinds, CPU count, %USERPROFILE%/%LOCALAPPDATA%, this run's pid and nonce.
WinHostFacts real_host_facts(const policy::Policy& pol, const Environ& env, uint16_t proxy_port,
                             const std::string& proxy_secret = {});
// The workload's exit status (124 on --timeout, 130 when stopped by Ctrl-C twice or a closed
// console), or an Error after everything done so far was undone.
// `cleaned` runs once everything is undone, before a closing console lets Windows end cage (the
// --net slot is let go there: run.cc).
Result<int> execute(const WinPlan& plan, const std::function<void()>& cleaned = {});
// `cage --install-windows-network` (install) or `--uninstall-windows-network`: adds (removes) cage's
// WFP filters, the --net slot lock files and the slot containers' entries on the machine's
// loopback-exemption list, every other entry kept; needs an elevated caller (capability_denied
// otherwise). The sentence saying what was done.
Result<std::string> set_up_network(bool install);
// True when running under Wine (ntdll exports wine_get_version).
bool under_wine();

}  // namespace cage::win

namespace cage::win {

// A whole run on this host: cage's proxy (with --net), the host facts, compile, execute.
Result<int> run(const policy::Policy& pol, const Environ& env);
// --dry-run on Windows itself: the plan with this host's facts (paths checked, real CPU count).
Result<std::string> dry_run(const policy::Policy& pol, const Environ& env, bool json, bool verbose);

}  // namespace cage::win
