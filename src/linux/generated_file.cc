// place_generated_file (see generated_file.h). A mount over one file inside a bind writes nothing
// to the host: the mount lives in the sandbox's private mount namespace, the file beneath keeps its
// content, and the workload cannot remove the mount (it holds no capability; unmount of a locked
// mount is refused anyway) nor rename the file from under it (EBUSY on a mount point).
#include "linux/generated_file.h"

#include <algorithm>

#include "policy/policy.h"

namespace cage::lx {

namespace {

bool mounts_something(MountKind k) { return k != MountKind::symlink && k != MountKind::file && k != MountKind::dir; }

// The deepest mount strictly above `path`: what a new entry there would be created in.
const MountStep* cover_of(const Plan& plan, const std::string& path) {
  const MountStep* best = nullptr;
  for (const auto& m : plan.mounts)
    if (mounts_something(m.kind) && m.target != path && policy::is_beneath(path, m.target) &&
        (!best || m.target.size() >= best->target.size()))
      best = &m;
  return best;
}

std::string place(Plan& plan, const HostView& host, const std::string& target, const std::string& content,
                  const std::string& why, int links_left) {
  for (auto& m : plan.mounts) {
    if (m.target != target) continue;
    if (m.kind == MountKind::file || m.kind == MountKind::symlink || m.kind == MountKind::over_file) {
      m = MountStep{m.kind == MountKind::over_file ? MountKind::over_file : MountKind::file, "", target, content,
                    false, false, why};
      return "";
    }
    return target + " is " + m.why + ": not replaced";
  }
  const MountStep* cover = cover_of(plan, target);
  if (!cover || cover->kind == MountKind::tmpfs) {
    // Created in cage's tmpfs. The bare root of --no-system has no Landlock rule that reads it.
    plan.mounts.push_back(MountStep{MountKind::file, "", target, content, false, false, why});
    if (!cover) plan.landlock.rules.push_back(LandlockRule{target, Access::read, false, why});
    return "";
  }
  if (cover->kind != MountKind::bind_ro && cover->kind != MountKind::bind_rw)
    return target + " lies beneath " + cover->why + ": not written";
  const std::string on_host = cover->source + target.substr(cover->target.size());
  FileInfo li = host.lstat(on_host);
  if (li.kind == FileKind::file) {
    plan.mounts.push_back(MountStep{MountKind::over_file, "", target, content, false, false, why});
    return "";
  }
  if (li.kind == FileKind::symlink && links_left > 0) {
    auto link = host.readlink(on_host);
    if (link && !link->empty()) {
      std::string dir = target.substr(0, target.rfind('/'));
      std::string next = policy::lexically_clean((*link)[0] == '/' ? *link : dir + "/" + *link);
      if (next != target) return place(plan, host, next, content, why, links_left - 1);
    }
  }
  return target + " in " + cover->why + " is not a regular file on the host: not written";
}

}  // namespace

std::string place_generated_file(Plan& plan, const HostView& host, const std::string& target,
                                 const std::string& content, const std::string& why) {
  return place(plan, host, target, content, why, 1);
}

}  // namespace cage::lx
