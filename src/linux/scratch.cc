// --scratch on the host (see scratch.h). Each directory is opened relative to its parent's fd with
// O_NOFOLLOW, so a link planted anywhere below the state directory (by an earlier run granted that
// directory, say) ends the run instead of redirecting a read-write mount to the link's target.
#include "linux/scratch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/json.h"
#include "common/unique_fd.h"
#include "linux/dirent64.h"

namespace cage::lx {

namespace {

// Removes everything beneath dirfd (left open), depth first, without allocating. openat(O_NOFOLLOW)
// and unlinkat relative to the directory fd: a symlink swapped in during the walk is unlinked, never
// followed. Passes repeat until one removes nothing (entries may shift while a directory shrinks).
void remove_beneath(int dirfd, int depth) {
  alignas(8) char buf[1024];
  for (bool removed = true; removed;) {
    removed = false;
    if (::lseek(dirfd, 0, SEEK_SET) != 0) return;
    long n;
    while ((n = ::syscall(SYS_getdents64, dirfd, buf, sizeof buf)) > 0) {
      for (long at = 0; at < n;) {
        auto* e = reinterpret_cast<Dirent64*>(buf + at);
        at += e->reclen;
        const char* name = e->name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
        if (::unlinkat(dirfd, name, 0) == 0) {
          removed = true;
          continue;
        }
        if (depth <= 0) continue;  // deeper than this is left for remove_stale, not the stack
        int sub = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        remove_beneath(sub, depth - 1);
        ::close(sub);
        if (::unlinkat(dirfd, name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
  }
}
constexpr int kMaxDepth = 1000;

// A directory on the way to a scratch directory must be the caller's and closed to others: one
// another user can write to lets that user swap what a run mounts read-write. Above cage's own
// levels (~/.local, ~/.local/state: the desktop's, often 0775 under a private group) only world-write
// is refused.
Status check_owned(int fd, const std::string& path, const std::string& why, mode_t forbidden = 022) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return unavailable(why, "cannot inspect " + path, "check its permissions", errno);
  if (st.st_uid != ::geteuid())
    return invalid(why, path + " belongs to uid " + std::to_string(st.st_uid) + ", not to you",
                   "remove it or set XDG_STATE_HOME to a directory of yours");
  if (st.st_mode & forbidden)
    return invalid(why, path + " is writable by " + (st.st_mode & 002 ? "others" : "its group"), "chmod go-w " + path);
  return Ok{};
}

Result<UniqueFd> open_root(const std::string& root, const std::string& why) {
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return Error{ErrorClass::not_found, "no scratch directories (" + root + ")", "", why, errno};
  if (auto s = check_owned(fd.get(), root, why); !s) return s.error();
  return fd;
}

}  // namespace

void remove_tree_at(int parent, const char* name) {
  int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  remove_beneath(fd, kMaxDepth);
  ::close(fd);
  ::unlinkat(parent, name, AT_REMOVEDIR);
}

Status ensure_scratch(const ScratchPlan& plan) {
  UniqueFd dir(::open(plan.base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return unavailable(plan.why, "cannot open " + plan.base, "check $HOME or $XDG_STATE_HOME", errno);
  std::string at = plan.base;
  for (size_t i = 0; i < plan.below.size(); ++i) {
    const std::string& name = plan.below[i];
    const bool cages = i + 3 >= plan.below.size();  // cage/scratch/NAME
    at += "/" + name;
    if (::mkdirat(dir.get(), name.c_str(), 0700) != 0 && errno != EEXIST)
      return unavailable(plan.why, "cannot create " + at, "check the permissions of its parent", errno);
    UniqueFd next(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      const int e = errno;
      if (e == ELOOP || e == ENOTDIR)
        return invalid(plan.why, at + " is a symbolic link or not a directory: refused, never followed",
                       "remove it (cage --scratch-remove removes a link at the scratch path)");
      return unavailable(plan.why, "cannot open " + at, "check its permissions", e);
    }
    if (auto s = check_owned(next.get(), at, plan.why, cages ? 022 : 002); !s) return s;
    dir = std::move(next);
  }
  return Ok{};
}

Result<std::string> scratch_list(const std::string& root, bool json) {
  toml::array items;
  std::string text;
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.valid()) {
    if (auto s = check_owned(fd.get(), root, "--scratch-list"); !s) return s.error();
    DIR* d = ::fdopendir(fd.release());
    while (d && (errno = 0, true)) {
      struct dirent* e = ::readdir(d);
      if (!e) break;
      struct stat st {};
      if (e->d_name[0] == '.' || ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      const char* kind = S_ISDIR(st.st_mode) ? "directory" : S_ISLNK(st.st_mode) ? "symbolic link (refused by --scratch)" : "file";
      items.push_back(toml::table{{"name", e->d_name}, {"path", root + "/" + e->d_name}, {"kind", kind}});
      text += std::string(e->d_name) + "\t" + root + "/" + e->d_name + (S_ISDIR(st.st_mode) ? "" : std::string("\t") + kind) + "\n";
    }
    if (d) ::closedir(d);
  }
  if (json) return to_json(toml::table{{"root", root}, {"scratch", std::move(items)}}) + "\n";
  return text;
}

Result<std::string> scratch_remove(const std::string& root, const std::string& name) {
  const std::string why = "--scratch-remove " + name, path = root + "/" + name;
  auto fd = open_root(root, why);
  if (!fd) return fd.error();
  struct stat st {};
  if (::fstatat(fd->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return Error{ErrorClass::not_found, "no scratch directory " + path, "see cage --scratch-list", why, errno};
  if (!S_ISDIR(st.st_mode)) {  // a link or file planted where a scratch directory goes: the entry itself goes
    if (::unlinkat(fd->get(), name.c_str(), 0) != 0) return unavailable(why, "cannot remove " + path, "", errno);
    return "removed " + path + "\n";
  }
  if (st.st_uid != ::geteuid())
    return invalid(why, path + " belongs to uid " + std::to_string(st.st_uid) + ", not to you", "leave it to its owner");
  remove_tree_at(fd->get(), name.c_str());
  if (::fstatat(fd->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    return unavailable(why, "could not remove everything in " + path, "check the permissions of what is left");
  return "removed " + path + "\n";
}

}  // namespace cage::lx
