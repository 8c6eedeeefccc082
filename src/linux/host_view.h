// What lx::compile needs to know about the host, behind an interface: path kinds and symlinks, our
// ids and passwd entry, the Landlock ABI. The real one (host_view.cc) asks the kernel; unit tests pass
// a FakeHostView.
#pragma once
#include <cstdint>
#include <optional>
#include <memory>
#include <vector>
#include <string>

#include "linux/plan.h"  // StdioFile

namespace cage::lx {

enum class FileKind { missing, dir, file, symlink, socket, fifo, device };

struct FileInfo {
  FileKind kind = FileKind::missing;
  uint32_t mode = 0;  // permission bits, including S_ISUID/S_ISGID
  int err = 0;        // errno when missing
  uint64_t size = 0;  // bytes, for a regular file
  uint32_t uid = 0;   // owner
};

// One entry of a directory as scan_dir_upto reports it.
struct DirEntry {
  std::string name;
  FileInfo info;     // its lstat (a link is not followed)
  std::string link;  // a link's text (readlink); empty when it could not be read
};

class HostView {
 public:
  virtual ~HostView() = default;
  virtual FileInfo lstat(const std::string& path) const = 0;
  virtual FileInfo stat(const std::string& path) const = 0;  // follows symlinks
  virtual std::optional<std::string> realpath(const std::string& path) const = 0;
  virtual std::optional<std::string> readlink(const std::string& path) const = 0;
  virtual std::optional<std::string> read_file(const std::string& path) const = 0;  // small files only
  // The first `most` bytes of a file, or fewer if it is shorter (a script's #! line, without reading a
  // large program whole); nullopt if it cannot be read.
  virtual std::optional<std::string> read_head(const std::string& path, size_t most) const {
    auto all = read_file(path);
    if (all && all->size() > most) all->resize(most);
    return all;
  }
  // Whether read_file(path) could open it (cage's own credentials), without reading it.
  virtual bool readable(const std::string& path) const { return read_file(path).has_value(); }
  virtual std::optional<std::vector<std::string>> list_dir(const std::string& path) const = 0;  // names
  // The same, except that a directory holding more than `most` entries may stop early: then it
  // returns more than `most` names, not all of them, in no particular order (a size test is cheap).
  virtual std::optional<std::vector<std::string>> list_dir_upto(const std::string& path, size_t most) const {
    (void)most;
    return list_dir(path);
  }
  // list_dir_upto(path, most) with each entry's lstat and, for a link, its readlink: the answers of
  // those calls made one by one, except that `path` itself is not followed (a link there: nullopt)
  // and that a link's owner is not told (uid 0). Past `most` entries only the names are filled in
  // (info.kind missing). The real one asks relative to one directory descriptor: one fstatat per
  // entry, and for a link (by its directory entry's type) one readlinkat instead.
  virtual std::optional<std::vector<DirEntry>> scan_dir_upto(const std::string& path, size_t most) const {
    if (lstat(path).kind != FileKind::dir) return std::nullopt;
    auto names = list_dir_upto(path, most);
    if (!names) return std::nullopt;
    std::vector<DirEntry> out(names->size());
    for (size_t i = 0; i < names->size(); ++i) {
      out[i].name = std::move((*names)[i]);
      if (names->size() > most) continue;
      const std::string child = path + "/" + out[i].name;
      out[i].info = lstat(child);
      if (out[i].info.kind == FileKind::symlink) out[i].link = readlink(child).value_or("");
    }
    return out;
  }
  // read_file of a path that lstat has just reported as a regular file of `size` bytes, except that a
  // link there (swapped in since) is not followed: nullopt. Whatever `size`, the bytes are the file's
  // as read_file reads them; the real one skips the read that only finds the end when the first read
  // returns exactly `size` bytes.
  virtual std::optional<std::string> read_regular(const std::string& path, uint64_t size) const {
    (void)size;
    if (lstat(path).kind != FileKind::file) return std::nullopt;
    return read_file(path);
  }
  virtual uint32_t uid() const = 0;
  virtual uint32_t gid() const = 0;
  virtual int landlock_abi() const = 0;  // 0 when Landlock is unavailable
  // Whether a socket's network namespace can be told (SO_NETNS_COOKIE, Linux 5.14): egress hand-off.
  virtual bool socket_netns_cookie() const { return false; }
  // False when a sysctl or LSM keeps this user from creating user namespaces (cheap: no probe).
  virtual bool user_namespaces_allowed() const { return true; }
  // The real path of the running cage binary (to keep it read-only inside), if known.
  virtual std::optional<std::string> self_exe() const { return std::nullopt; }
  // cgroups (cgroup_plan.cc): may we create directories in / write to path? The cgroup layout itself
  // is read through read_file("/proc/self/cgroup"), ("/proc/self/mountinfo") and the cgroup files.
  virtual bool writable(const std::string& path) const { (void)path; return false; }
  // cage's descriptor fd (0-2) when it is an open regular file (LandlockPlan::stdio).
  virtual std::optional<StdioFile> stdio_file(int fd) const { (void)fd; return std::nullopt; }
};

std::unique_ptr<HostView> make_real_host_view();

}  // namespace cage::lx
