// host_lookup (see host_lookup.h): a path walk that touches only local filesystems.
#include "linux/host_lookup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace cage::lx::host_lookup {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's own limit on links in one lookup (MAXSYMLINKS)

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view o = s.substr(i + 1, 3);
      if (o.size() == 3 && std::all_of(o.begin(), o.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>((o[0] - '0') * 64 + (o[1] - '0') * 8 + (o[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool beneath(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path.compare(0, dir.size(), dir) == 0 && (path.size() == dir.size() || path[dir.size()] == '/');
}

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '/');)
    if (!p.empty() && p != ".") parts.push_back(p);
  return parts;
}

}  // namespace

bool local_fs_type(std::string_view type) {
  static constexpr std::string_view kLocal[] = {
      "ext2",  "ext3",     "ext4",   "xfs",       "btrfs",    "tmpfs",     "devtmpfs", "ramfs",   "proc",
      "sysfs", "overlay",  "squashfs", "erofs",   "vfat",     "exfat",     "msdos",    "f2fs",    "zfs",
      "bcachefs", "iso9660", "udf",  "ntfs",      "ntfs3",    "jfs",       "reiserfs", "nilfs2",  "hfs",
      "hfsplus", "devpts", "mqueue", "hugetlbfs", "cgroup",   "cgroup2",   "securityfs", "debugfs", "tracefs",
      "bpf",   "pstore",   "efivarfs", "nsfs",    "configfs", "binfmt_misc", "fusectl", "selinuxfs"};
  return std::find(std::begin(kLocal), std::end(kLocal), type) != std::end(kLocal);
}

Mounts Mounts::parse(std::string_view text) {
  Mounts m;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    // id parent major:minor root mount_point options [optional fields...] - type source super_options
    std::vector<std::string_view> f;
    size_t p = 0;
    while (p < line.size()) {
      size_t q = line.find(' ', p);
      if (q == std::string_view::npos) q = line.size();
      f.push_back(line.substr(p, q - p));
      p = q + 1;
    }
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || dash + 1 == f.end()) continue;
    m.points.emplace_back(unescape(f[4]), local_fs_type(*(dash + 1)));
  }
  return m;
}

Mounts Mounts::of_this_process() {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

bool Mounts::local(const std::string& path) const {
  const std::pair<std::string, bool>* best = nullptr;
  for (const auto& mp : points)  // the last mount at the longest prefix is the one on top
    if (beneath(path, mp.first) && (!best || mp.first.size() >= best->first.size())) best = &mp;
  return best && best->second;
}

bool Mounts::mount_point(const std::string& path) const {
  return std::any_of(points.begin(), points.end(), [&](const auto& mp) { return mp.first == path; });
}

Fs Fs::real() {
  Fs fs;
  fs.lstat_kind = [](const std::string& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return 0;
    return S_ISLNK(st.st_mode) ? 3 : S_ISDIR(st.st_mode) ? 2 : 1;
  };
  fs.readlink = [](const std::string& p, std::string* out) {
    char buf[4096];
    ssize_t n = ::readlink(p.c_str(), buf, sizeof buf);
    if (n < 0 || static_cast<size_t>(n) >= sizeof buf) return false;
    out->assign(buf, static_cast<size_t>(n));
    return true;
  };
  return fs;
}

Answer lookup(const std::string& path, const Mounts& mounts, const Fs& fs) {
  Answer a;
  if (path.empty() || path[0] != '/') return a;
  std::vector<std::string> todo = split(path);
  std::reverse(todo.begin(), todo.end());  // a stack: the next component is at the back
  std::string cur = "/";
  int links = 0, kind = 2;
  while (!todo.empty()) {
    std::string name = std::move(todo.back());
    todo.pop_back();
    if (name == "..") {
      cur = cur.substr(0, std::max<size_t>(cur.rfind('/'), 1));
      continue;
    }
    const std::string next = (cur == "/" ? "" : cur) + "/" + name;
    // The directory searched and the name's own mount (a mount point such as autofs's /net) must
    // both be local before the name is looked up; a local mount point is reached without asking the
    // directory's filesystem (a host whose / is 9p, as the kernel-matrix guests, with /tmp on ext4).
    if (!mounts.local(next) || !(mounts.local(cur) || mounts.mount_point(next))) return a;
    kind = fs.lstat_kind(next);
    if (kind == 0) {
      // Absent: the rest is named as asked, below the resolved part.
      a.kind = Kind::absent;
      a.canonical = next;
      for (auto it = todo.rbegin(); it != todo.rend(); ++it) a.canonical += "/" + *it;
      return a;
    }
    if (kind == 3) {
      std::string target;
      if (++links > kMaxLinks || !fs.readlink(next, &target)) return a;
      std::vector<std::string> parts = split(target);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
      if (!target.empty() && target[0] == '/') cur = "/";
      continue;
    }
    if (kind == 1 && !todo.empty()) {  // a file used as a directory: nothing there
      a.kind = Kind::absent;
      a.canonical = next;
      for (auto it = todo.rbegin(); it != todo.rend(); ++it) a.canonical += "/" + *it;
      return a;
    }
    cur = next;
  }
  a.kind = kind == 2 ? Kind::dir : Kind::file;
  a.canonical = cur;
  return a;
}

}  // namespace cage::lx::host_lookup
