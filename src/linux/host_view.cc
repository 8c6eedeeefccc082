// The real HostView: lstat/stat/realpath/readlink on the host, and the Landlock ABI the kernel offers.
// Read-only questions; nothing here changes the host.
#include "linux/host_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"
#include "linux/namespace_probe.h"

namespace cage::lx {

namespace {

FileInfo info_of(int rc, const struct stat& st) {
  FileInfo fi;
  if (rc != 0) {
    fi.err = errno;
    return fi;
  }
  fi.mode = st.st_mode & 07777;
  fi.size = static_cast<uint64_t>(st.st_size);
  fi.uid = st.st_uid;
  switch (st.st_mode & S_IFMT) {
    case S_IFDIR: fi.kind = FileKind::dir; break;
    case S_IFREG: fi.kind = FileKind::file; break;
    case S_IFLNK: fi.kind = FileKind::symlink; break;
    case S_IFSOCK: fi.kind = FileKind::socket; break;
    case S_IFIFO: fi.kind = FileKind::fifo; break;
    default: fi.kind = FileKind::device; break;
  }
  return fi;
}

constexpr size_t kMost = 4u << 20;  // read_file's limit

// Reads fd to its end into out (len bytes already there, out.size() > len), doubling the buffer as
// needed; stops early once exactly `known` bytes are read by a read that could have returned more.
// nullopt past kMost bytes.
std::optional<std::string> read_rest(int fd, std::string out, size_t len, size_t known) {
  for (;;) {
    if (len == out.size()) {
      if (len > kMost) return std::nullopt;
      out.resize(len * 2);
    }
    ssize_t n = ::read(fd, out.data() + len, out.size() - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
    if (len == known && len < out.size()) break;
  }
  if (len > kMost) return std::nullopt;
  out.resize(len);
  return out;
}

// A directory's entries but . and .., in getdents64 batches of 2 KiB, so that a directory of hundreds
// of entries (ssl/certs) is not read whole only to learn that it is large: add(name, d_type) keeps
// one and returns how many it holds. true once all are read, false past `most` (stopped after that
// batch), nullopt on an error.
template <class Add>
std::optional<bool> read_entries(int fd, size_t most, Add add) {
  alignas(8) char buf[2048];
  for (;;) {
    long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return true;
    size_t held = 0;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + off);
      off += d->d_reclen;
      std::string_view name = d->d_name;
      if (name != "." && name != "..") held = add(name, d->d_type);
    }
    if (held > most) return false;
  }
}

class RealHostView final : public HostView {
 public:
  FileInfo lstat(const std::string& path) const override {
    struct stat st {};
    int rc = ::lstat(path.c_str(), &st);
    return info_of(rc, st);
  }
  FileInfo stat(const std::string& path) const override {
    struct stat st {};
    int rc = ::stat(path.c_str(), &st);
    return info_of(rc, st);
  }
  std::optional<std::string> realpath(const std::string& path) const override {
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf)) return std::nullopt;
    return std::string(buf);
  }
  std::optional<std::string> readlink(const std::string& path) const override {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
    if (n < 0 || n == static_cast<ssize_t>(sizeof buf)) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
  }
  std::optional<std::string> read_file(const std::string& path) const override {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid()) return std::nullopt;
    // Most of /etc fits the stack buffer (one copy out); a larger file is read into a buffer of its
    // size plus one byte (to see the end): growing a string 8 KiB at a time would copy and touch
    // several times the ~150 KiB that a copy of /etc reads.
    char small[16384];
    size_t len = 0;
    for (;;) {
      ssize_t n = ::read(fd.get(), small + len, sizeof small - len);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::string(small, len);
      len += static_cast<size_t>(n);
      if (len == sizeof small) break;
    }
    struct stat st {};
    size_t want = 2 * sizeof small;
    if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) >= len)
      want = std::min(static_cast<size_t>(st.st_size), kMost) + 1;
    std::string out(std::max(want, len + 1), '\0');
    std::memcpy(out.data(), small, len);
    return read_rest(fd.get(), std::move(out), len, SIZE_MAX);
  }
  // The size is known from the lstat just made: one buffer of that size plus one byte, read into
  // directly, and no read for the end when the first returns exactly that many bytes (a regular
  // file's read returns less than asked only at its end). O_NOFOLLOW: a link swapped in since the
  // lstat is not followed.
  std::optional<std::string> read_regular(const std::string& path, uint64_t size) const override {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW));
    if (!fd.valid()) return std::nullopt;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size, kMost));
    return read_rest(fd.get(), std::string(want + 1, '\0'), 0, want);
  }
  // One read: a regular file's read returns less than asked only at its end. The path is looked at
  // (O_PATH: no open of a device or fifo, nothing of its own happens) and opened for reading only
  // if what is there now is a regular file, through that very descriptor: a name swapped since the
  // caller's stat cannot make cage open something else (found by review attack9). Without /proc
  // the head is not read (it only words an error).
  std::optional<std::string> read_head(const std::string& path, size_t most) const override {
    UniqueFd at(::open(path.c_str(), O_PATH | O_CLOEXEC));
    struct stat st {};
    if (!at.valid() || ::fstat(at.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    const std::string self = "/proc/self/fd/" + std::to_string(at.get());
    UniqueFd fd(::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd.valid()) return std::nullopt;
    std::string out(most, '\0');
    ssize_t n;
    do n = ::read(fd.get(), out.data(), most);
    while (n < 0 && errno == EINTR);
    if (n < 0) return std::nullopt;
    out.resize(static_cast<size_t>(n));
    return out;
  }
  bool readable(const std::string& path) const override {
    return ::faccessat(AT_FDCWD, path.c_str(), R_OK, AT_EACCESS) == 0;
  }
  std::optional<std::vector<std::string>> list_dir(const std::string& path) const override {
    DIR* d = ::opendir(path.c_str());
    if (!d) return std::nullopt;
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }
  // Sorted when complete; past `most`, the names read so far (read_entries).
  std::optional<std::vector<std::string>> list_dir_upto(const std::string& path, size_t most) const override {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid()) return std::nullopt;
    std::vector<std::string> names;
    auto all = read_entries(fd.get(), most, [&](std::string_view name, unsigned char) {
      names.emplace_back(name);
      return names.size();
    });
    if (!all) return std::nullopt;
    if (*all) std::sort(names.begin(), names.end());
    return names;
  }
  // The same batches, then one fstatat (and a readlinkat for a link) per entry relative to the
  // directory's descriptor: no lookup of the whole path again for each entry. O_NOFOLLOW: `path` was
  // lstat'ed as a directory, and a link swapped in since is not followed.
  std::optional<std::vector<DirEntry>> scan_dir_upto(const std::string& path, size_t most) const override {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW));
    if (!fd.valid()) return std::nullopt;
    std::vector<DirEntry> out;
    auto all = read_entries(fd.get(), most, [&](std::string_view name, unsigned char type) {
      out.push_back(DirEntry{std::string(name), {}, {}});
      // d_type says link: readlinkat alone (a link's mode is always 0777, its size the length of
      // its text); if that fails (no longer a link, gone) the entry is stat'ed like any other.
      if (type == DT_LNK) out.back().info.kind = FileKind::symlink;
      return out.size();
    });
    if (!all) return std::nullopt;
    if (!*all) {
      for (auto& e : out) e.info.kind = FileKind::missing;
      return out;
    }
    std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    char target[PATH_MAX];
    for (auto& e : out) {
      if (e.info.kind == FileKind::symlink) {
        ssize_t len = ::readlinkat(fd.get(), e.name.c_str(), target, sizeof target);
        if (len > 0 && len < static_cast<ssize_t>(sizeof target)) {
          e.info.mode = 0777;
          e.info.size = static_cast<uint64_t>(len);
          e.link.assign(target, static_cast<size_t>(len));
          continue;
        }
      }
      struct stat st {};
      int rc = ::fstatat(fd.get(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
      e.info = info_of(rc, st);
      if (e.info.kind != FileKind::symlink) continue;
      ssize_t len = ::readlinkat(fd.get(), e.name.c_str(), target, sizeof target);
      if (len > 0 && len < static_cast<ssize_t>(sizeof target)) e.link.assign(target, static_cast<size_t>(len));
    }
    return out;
  }
  bool writable(const std::string& path) const override { return ::access(path.c_str(), W_OK) == 0; }
  std::optional<StdioFile> stdio_file(int fd) const override {
    struct stat st{};
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_PATH) || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    auto path = readlink("/proc/self/fd/" + std::to_string(fd));
    if (!path || path->empty() || (*path)[0] != '/' || path->ends_with(" (deleted)")) return std::nullopt;
    const int mode = fl & O_ACCMODE;
    return StdioFile{fd, *path, mode == O_RDONLY || mode == O_RDWR, mode == O_WRONLY || mode == O_RDWR};
  }
  uint32_t uid() const override { return ::getuid(); }
  uint32_t gid() const override { return ::getgid(); }
  bool user_namespaces_allowed() const override {
    auto first = [this](const char* path) -> int {
      auto t = read_file(path);
      return t && !t->empty() ? std::atoi(t->c_str()) : -1;
    };
    if (first("/proc/sys/user/max_user_namespaces") == 0) return false;
    if (::getuid() != 0 && first("/proc/sys/kernel/unprivileged_userns_clone") == 0) return false;
    // Ubuntu 23.10+ (AppArmor denies it unless a profile, cage's own from the package, grants userns)
    // and containers whose seccomp filter refuses unshare/clone: only there is a probe worth its
    // fork; elsewhere the sysctls above decide.
    // Containers that lift the seccomp filter (docker --security-opt seccomp=unconfined) still mask
    // parts of /proc, and then no new proc mount is allowed: the probe builds the whole view.
    auto status = read_file("/proc/self/status");
    bool filtered = status && status->find("Seccomp:\t2") != std::string::npos;
    if ((::getuid() != 0 && first("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1) || filtered ||
        proc_has_overmounts())
      return probe_namespaces() == 0;
    return true;
  }
  std::optional<std::string> self_exe() const override { return realpath("/proc/self/exe"); }
  bool socket_netns_cookie() const override {
    int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return false;
    uint64_t cookie = 0;
    socklen_t l = sizeof cookie;
    bool ok = ::getsockopt(s, SOL_SOCKET, 71 /* SO_NETNS_COOKIE */, &cookie, &l) == 0;
    ::close(s);
    return ok;
  }
  int landlock_abi() const override {
    long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : static_cast<int>(abi);
  }
};

}  // namespace

std::unique_ptr<HostView> make_real_host_view() { return std::make_unique<RealHostView>(); }

}  // namespace cage::lx
