// lx::compile: Policy + HostView -> Plan. Decides every mount, rule and setting of a Linux run; pure
// (asks the host only through HostView). A policy the host cannot enforce is an error, never a
// smaller plan. render_summary (--dry-run), render_text (--dry-run --verbose) and render_table
// (--dry-run --json) print a Plan.
#pragma once
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "common/error.h"
#include "common/toml.h"
#include "linux/host_view.h"
#include "linux/plan.h"

namespace cage::lx {

Result<Plan> compile(const policy::Policy& policy, const HostView& host,
                     const std::vector<std::pair<std::string, std::string>>& caller_env);
std::string render_summary(const Plan& plan);  // render_summary.cc: what a user checks first
std::string render_text(const Plan& plan);     // every step, with its why
toml::table render_table(const Plan& plan);    // the whole plan; files by size and SHA-256, not content
// The environment as printed: plan.env with each --secret as "NAME=<secret from SOURCE>", never a value.
std::vector<std::string> shown_environment(const Plan& plan);
// render.cc's pieces that both texts print the same way.
std::string quoted_argv(const std::vector<std::string>& argv);
std::string platform_line(const Plan& plan);
void render_unenforced_text(std::ostream& o, const CgroupPlan& cg);
void render_network_text(std::ostream& o, const Plan& plan, bool detail);  // detail: the transparent routes
// The run's id and labels, --uid and --scratch: a line each, only when asked for (goldens stay put).
void render_identity_text(std::ostream& o, const Plan& plan, const char* indent);

// compile_landlock.cc: the view where user namespaces are blocked (Landlock + seccomp alone).
Status compile_landlock_view(const policy::Policy& p, const HostView& host, Plan& plan);
bool is_private_dir_rule(const LandlockRule& r);
// A --hide of a path that does not exist hides nothing: a typo (--hide ./.evn) would leave the real
// secret (./.env) in view, so it is refused. A profile marks a path that may be absent optional.
Error nothing_to_hide(const policy::Grant& g, int err);
bool cwd_too_wide(const std::string& cwd, const std::string& home);
// Plan::cwd_note for a working directory cwd_too_wide() kept out and no grant covers.
std::string cwd_not_granted_note(const std::string& cwd, const std::string& home);
// The git repository (the nearest ancestor below $HOME's level holding .git) of a working directory
// shown read-only that is not the repository's root, or empty. `shown` says whether a grant already
// shows a path; the note then names the grant that would make git work.
std::string repository_note(const HostView& host, const std::string& cwd, const std::string& home,
                            const std::function<bool(const std::string&)>& shown);
// A --ro or --rw grant whose path reaches, through a link on the way, the root, $HOME or an ancestor,
// a system directory, or $HOME outside the project: refused (compile.cc). Both mechanisms.
Status refuse_link_escape(const policy::Policy& p, const HostView& host, const policy::Grant& g,
                          const std::string& real);
Status refuse_link_inside_rw(const policy::Policy& p, const HostView& host, const policy::Grant& g,
                             const std::string& real);
// The /etc entries of the default view (compile.cc).
const char* const* default_etc_entries();
// The deepest step of `mounts` that mounts something over `path` (not a symlink, file or dir step).
const MountStep* covering_mount(const std::vector<MountStep>& mounts, const std::string& path);
// Whether the plan shows a host path inside, by the plan's words alone (no host lookup): anything at
// its place, or a program that can be run there (compile.cc).
enum class Shown { any, to_run };
bool shown_from_host(const Plan& plan, const std::string& path, Shown how);
// What keeps plan.exec_path from running when it is a script whose #! interpreter is missing, outside
// the view or not runnable there; nullopt when its first line is not the cause. Asked after the
// exec failed (execute.cc) and by --dry-run, never on a run that starts (compile.cc).
std::optional<Error> interpreter_problem(const Plan& plan, const HostView& host);
// compile_exec.cc: --exec and [exec] run, after the view and the command are decided.
Status compile_exec(const policy::Policy& p, const HostView& host, Plan& plan);

// layers.cc: the kernel each mechanism needs, and the layers a plan puts in force (named the same
// way by --dry-run, --check, --result and the audit).
inline constexpr int kLandlockOnlyMinAbi = 6;
int namespaces_landlock_abi(int host_abi);
Status check_namespaces_kernel(const HostView& host);
Status check_landlock_only_abi(const HostView& host);
std::string landlock_layer(const Plan& plan);
std::vector<std::string> layers_in_force(const Plan& plan);

// The size of each writable private tmpfs without one given: 1/8 of the host's RAM (compile.cc).
uint64_t default_tmpfs_bytes(const HostView& host);

// The default shim port inside the sandbox's own network namespace.
inline constexpr uint16_t kShimPort = 3128;

}  // namespace cage::lx
