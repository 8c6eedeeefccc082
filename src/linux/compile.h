// lx::compile: Policy + HostView -> Plan. Decides every mount, rule and setting of a Linux run; pure
// (asks the host only through HostView). A policy the host cannot enforce is an error, never a
// smaller plan. render_text/render_json print a Plan for --dry-run.
#pragma once
#include <string>

#include "common/error.h"
#include "common/toml.h"
#include "linux/host_view.h"
#include "linux/plan.h"

namespace cage::lx {

Result<Plan> compile(const policy::Policy& policy, const HostView& host,
                     const std::vector<std::pair<std::string, std::string>>& caller_env);
std::string render_text(const Plan& plan);
toml::table render_table(const Plan& plan);

// compile_landlock.cc: the view where user namespaces are blocked (Landlock + seccomp alone).
Status compile_landlock_view(const policy::Policy& p, const HostView& host, Plan& plan);
bool is_private_dir_rule(const LandlockRule& r);
bool cwd_too_wide(const std::string& cwd, const std::string& home);
Status refuse_link_inside_rw(const policy::Policy& p, const HostView& host, const policy::Grant& g,
                             const std::string& real);
// The /etc entries of the default view (compile.cc).
const char* const* default_etc_entries();

// The default shim port inside the sandbox's own network namespace.
inline constexpr uint16_t kShimPort = 3128;

}  // namespace cage::lx
