// --exec (compile side): with an allowlist the workload may execute only the listed files, the
// resolved command and the dynamic loader. Enforced by Landlock's execute right (checked by the kernel
// on execve of the program, of a script's interpreter and of an ELF's PT_INTERP): every other rule
// loses it. Landlock does not check mmap(PROT_EXEC), so `ld.so FILE` still maps any readable file;
// under namespaces every writable mount is noexec, where the kernel refuses that mapping (EPERM), so
// what the workload writes or downloads never runs. Tested by tests/unit/linux_compile_test.cc and
// tests/integration/exec_allowlist.sh.
#include <algorithm>

#include "linux/compile.h"

namespace cage::lx {

namespace {

using policy::is_beneath;

// The dynamic loaders of the architectures Debian, Fedora and Alpine ship (each ELF program names its
// own in PT_INTERP, which the kernel opens for execute): the ones present are allowed, or no
// dynamically linked program could start.
const char* const kLoaders[] = {
    "/lib64/ld-linux-x86-64.so.2", "/libx32/ld-linux-x32.so.2",   "/lib/ld-linux.so.2",
    "/lib/ld-linux-aarch64.so.1",  "/lib/ld-linux-armhf.so.3",    "/lib/ld-linux-riscv64-lp64d.so.1",
    "/lib64/ld64.so.2",            "/lib/ld64.so.1",              "/lib/ld-musl-x86_64.so.1",
    "/lib/ld-musl-aarch64.so.1",   nullptr};

enum class Where { invisible, read_only, writable };

Where where_inside(const Plan& plan, const std::string& real) {
  if (plan.mechanism == Mechanism::landlock_only) {
    Where w = Where::invisible;
    for (const auto& r : plan.landlock.rules) {
      if (!is_beneath(real, r.path)) continue;
      if (r.access == Access::write) return Where::writable;  // Landlock adds rights: any write rule wins
      if (r.access == Access::read_exec) w = Where::read_only;
    }
    return w;
  }
  const MountStep* m = covering_mount(plan.mounts, real);
  if (!m) return Where::invisible;
  if (m->kind == MountKind::bind_rw || (m->kind == MountKind::tmpfs && !m->read_only)) return Where::writable;
  return m->kind == MountKind::bind_ro ? Where::read_only : Where::invisible;
}

struct Allowance {
  std::string real, why;
  bool is_dir = false;
};

Status check_allowance(const Plan& plan, const Allowance& a, const std::string& input) {
  switch (where_inside(plan, a.real)) {
    case Where::read_only: return Ok{};
    case Where::invisible:
      return invalid(input, "not visible inside the sandbox (" + a.real + ")",
                     "grant it read-only as well: --ro " + a.real);
    case Where::writable:
      return invalid(input, a.real + " lies in a writable grant: the workload could put any program there and run it",
                     "allow a file outside --rw and the private directories, or copy the tool out of the writable tree");
  }
  return Ok{};
}

bool is_loader(const HostView& host, const std::string& real) {
  for (const char* const* l = kLoaders; *l; ++l)
    if (auto r = host.realpath(*l); r && *r == real) return true;
  return false;
}

std::string pattern_text(const policy::ArgvPattern& p) {
  std::string s;
  for (const auto& w : p.words) s += (s.empty() ? "" : " ") + w.text;
  return s + "  # " + p.origin;
}

}  // namespace

Status compile_exec(const policy::Policy& p, const HostView& host, Plan& plan) {
  if (p.argv_pattern) plan.argv_pattern = pattern_text(*p.argv_pattern);
  if (p.exec.empty()) return Ok{};
  std::vector<Allowance> allow;
  for (const auto& g : p.exec) {
    FileInfo fi = host.stat(g.path);
    auto real = host.realpath(g.path);
    if (fi.kind == FileKind::missing || !real)
      return Error{ErrorClass::invalid_policy, "no such file or directory", "check the path", g.origin, fi.err};
    if (fi.kind != FileKind::file && fi.kind != FileKind::dir)
      return invalid(g.origin, "neither a file nor a directory", "name a program or the directory that holds programs");
    Allowance a{*real, g.origin, fi.kind == FileKind::dir};
    if (auto s = check_allowance(plan, a, g.origin); !s) return s;
    allow.push_back(std::move(a));
  }
  // The command: the user named it to be run, so it is allowed without being listed; --dry-run says so.
  const std::string cmd = host.realpath(plan.exec_path).value_or(plan.exec_path);
  if (is_loader(host, cmd))
    return invalid("COMMAND " + plan.argv[0], "the dynamic loader as the command would run any file it is given as a program",
                   "run the program itself and allow it with --exec");
  if (std::none_of(allow.begin(), allow.end(), [&](const Allowance& a) { return is_beneath(cmd, a.real); })) {
    Allowance a{cmd, "the command (" + plan.argv[0] + "), added", false};
    if (auto s = check_allowance(plan, a, "COMMAND " + plan.argv[0]); !s) return s;
    allow.push_back(std::move(a));
  }
  for (const char* const* l = kLoaders; *l; ++l) {
    auto real = host.realpath(*l);
    if (!real || host.stat(*real).kind != FileKind::file || where_inside(plan, *real) != Where::read_only) continue;
    if (std::none_of(allow.begin(), allow.end(), [&](const Allowance& a) { return a.real == *real; }))
      allow.push_back(Allowance{*real, std::string("the dynamic loader (") + *l + "), added", false});
  }
  // What this host cannot enforce, once the policy's own errors are said.
  // A memfd has no path: Landlock's execute right never sees it, and its mount is not noexec. The
  // seccomp supplement refuses memfd_create and memfd_secret (seccomp_exec.cc), for every caller.
  const bool accept_written =
      std::find(p.allow_degraded.begin(), p.allow_degraded.end(), "exec-written") != p.allow_degraded.end();
  if (plan.landlock.abi < 2)
    return unavailable("--exec",
                       "the exec allowlist is Landlock's execute right, applied here only from ABI 2 (Linux 5.19); "
                       "this kernel offers " + (plan.landlock.host_abi < 1 ? std::string("no Landlock")
                                                                            : "ABI " + std::to_string(plan.landlock.host_abi)),
                       "upgrade the kernel, or drop --exec");
  if (plan.mechanism == Mechanism::landlock_only && !accept_written)
    return unavailable("user namespaces",
                       std::string("without user namespaces Landlock alone cannot enforce: exec-written: --rw grants "
                                   "and the private directory cannot be mounted noexec, so a file the workload writes "
                                   "there can still be run through the dynamic loader (ld.so FILE)"),
                       "allow user namespaces (see cage --check), or accept the loss with --allow-degraded=exec-written");
  // Landlock-only, no noexec mounts: a writable rule beneath an allowed directory would let a file
  // the workload writes there be executed directly (under namespaces the mount is noexec).
  if (plan.mechanism == Mechanism::landlock_only)
    for (const auto& a : allow)
      for (const auto& r : plan.landlock.rules)
        if (a.is_dir && r.access == Access::write && is_beneath(r.path, a.real))
          return invalid("--exec " + a.real, "the writable " + r.path + " (" + r.why + ") lies beneath it: without "
                         "noexec mounts (Landlock-only) a file written there could be executed",
                         "allow narrower paths with --exec, or run with user namespaces");
  for (auto& r : plan.landlock.rules)
    if (r.access == Access::read_exec) r.access = Access::read;
  for (const auto& a : allow) {
    plan.landlock.rules.push_back(LandlockRule{a.real, Access::exec, a.is_dir, a.why});
    plan.exec_summary.push_back(a.real + (a.is_dir ? "/ (everything beneath)" : "") + "  # " + a.why);
  }
  plan.landlock.exec_listed_only = true;
  plan.seccomp.no_memfd = true;
  for (auto& m : plan.mounts)
    if (m.kind == MountKind::bind_rw || m.kind == MountKind::dev ||
        (m.kind == MountKind::tmpfs && !m.read_only))
      m.noexec = true;
  if (plan.mechanism == Mechanism::landlock_only)
    plan.degraded.push_back(std::string("exec-written: files the workload writes in --rw grants and the private "
                                        "directory can still be run through the dynamic loader (ld.so FILE): no "
                                        "noexec mounts without a mount namespace"));
  return Ok{};
}

}  // namespace cage::lx
