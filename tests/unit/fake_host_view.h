// A HostView for unit tests: an in-memory file tree with symlinks, and a record of what was asked.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "linux/host_view.h"
#include "policy/policy.h"

namespace cage::testing {

class FakeHostView : public lx::HostView {
 public:
  FakeHostView() {
    add_dir("/");
    add_dir("/usr");
    add_dir("/usr/bin");
    add_file("/usr/bin/make", 0755);
    add_file("/usr/bin/sh", 0755);
    add_file("/usr/bin/sudo", 04755);
    add_link("/bin", "usr/bin");
    add_dir("/etc");
    add_dir("/etc/ssl");
    add_file("/etc/hosts");
    add_file("/etc/shadow", 0600);
    add_file("/etc/passwd", 0644, "root:x:0:0:root:/root:/bin/bash\nann:x:1000:1000:Ann:/home/ann:/bin/bash\n");
    add_file("/etc/group", 0644, "root:x:0:\nann:x:1000:\n");
    add_dir("/proc");
    add_dir("/proc/sys");
    add_file("/proc/keys", 0444);
    add_dir("/tmp");
    add_dir("/home");
    add_dir("/home/ann");
    add_dir("/home/ann/.ssh");
    add_dir("/home/ann/proj");
    add_dir("/home/ann/proj/src");
    add_dir("/home/ann/proj/out");
    add_file("/home/ann/proj/.env");
  }
  void add_dir(const std::string& p, uint32_t mode = 0755) { files_[p] = {lx::FileKind::dir, mode, ""}; }
  void add_file(const std::string& p, uint32_t mode = 0644, std::string content = "") {
    files_[p] = {lx::FileKind::file, mode, std::move(content)};
  }
  void add_socket(const std::string& p) {  // and its parent directories
    for (size_t at = p.find('/', 1); at != std::string::npos; at = p.find('/', at + 1))
      if (!files_.count(p.substr(0, at))) add_dir(p.substr(0, at));
    files_[p] = {lx::FileKind::socket, 0600, ""};
  }
  void add_link(const std::string& p, const std::string& target) { files_[p] = {lx::FileKind::symlink, 0777, target}; }
  void set_landlock_abi(int abi) { abi_ = abi; }
  void set_socket_netns_cookie(bool on) { netns_cookie_ = on; }

  lx::FileInfo lstat(const std::string& path) const override {
    asked.push_back(path);
    auto it = files_.find(path);
    if (it == files_.end()) return lx::FileInfo{lx::FileKind::missing, 0, 2};
    return lx::FileInfo{it->second.kind, it->second.mode, 0, it->second.content.size()};
  }
  lx::FileInfo stat(const std::string& path) const override {
    auto r = realpath(path);
    if (!r) return lx::FileInfo{lx::FileKind::missing, 0, 2};
    return lstat(*r);
  }
  std::optional<std::string> realpath(const std::string& path) const override {
    std::string out;
    size_t i = 1;
    int hops = 0;
    std::string rest = path;
    while (i <= rest.size()) {
      size_t j = rest.find('/', i);
      if (j == std::string::npos) j = rest.size();
      std::string part = rest.substr(i, j - i);
      i = j + 1;
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        out = out.substr(0, out.rfind('/'));
        continue;
      }
      std::string next = out + "/" + part;
      auto it = files_.find(next);
      if (it == files_.end()) return std::nullopt;
      if (it->second.kind == lx::FileKind::symlink) {
        if (++hops > 8) return std::nullopt;
        const std::string& t = it->second.content;
        std::string base = t[0] == '/' ? "" : out;
        rest = base + "/" + t + (j < rest.size() ? rest.substr(j) : "");
        out.clear();
        i = 1;
        continue;
      }
      out = next;
    }
    return out.empty() ? "/" : out;
  }
  std::optional<std::string> readlink(const std::string& path) const override {
    auto it = files_.find(path);
    if (it == files_.end() || it->second.kind != lx::FileKind::symlink) return std::nullopt;
    return it->second.content;
  }
  std::optional<std::string> read_file(const std::string& path) const override {
    auto it = files_.find(path);
    if (it == files_.end() || it->second.kind != lx::FileKind::file || unreadable_.count(path)) return std::nullopt;
    return it->second.content;
  }
  std::optional<std::vector<std::string>> list_dir(const std::string& path) const override {
    auto it = files_.find(path);
    if (it == files_.end() || it->second.kind != lx::FileKind::dir) return std::nullopt;
    std::vector<std::string> names;
    const std::string prefix = path == "/" ? "/" : path + "/";
    for (const auto& [p, n] : files_)
      if (p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0 &&
          p.find('/', prefix.size()) == std::string::npos)
        names.push_back(p.substr(prefix.size()));
    return names;
  }
  bool writable(const std::string& path) const override { return writable_.count(path) > 0; }
  std::optional<lx::StdioFile> stdio_file(int fd) const override {
    auto it = stdio_.find(fd);
    return it == stdio_.end() ? std::nullopt : std::optional<lx::StdioFile>(it->second);
  }
  void add_stdio(int fd, const std::string& path, bool read, bool write) { stdio_[fd] = {fd, path, read, write}; }
  void add_writable(const std::string& p) { writable_.insert(p); }
  // A file whose mode lets others read it that cage still cannot open (an ACL, the owner's or the
  // group's bits for the caller).
  void add_unreadable(const std::string& p) { unreadable_.insert(p); }
  void set_uid(uint32_t uid) { uid_ = uid; }
  uint32_t uid() const override { return uid_; }
  uint32_t gid() const override { return 1000; }
  int landlock_abi() const override { return abi_; }
  bool socket_netns_cookie() const override { return netns_cookie_; }
  bool user_namespaces_allowed() const override { return userns_; }
  void set_user_namespaces(bool allowed) { userns_ = allowed; }

  mutable std::vector<std::string> asked;

 private:
  bool userns_ = true;
  struct Node {
    lx::FileKind kind;
    uint32_t mode;
    std::string content;  // file content, or symlink target
  };
  std::map<std::string, Node> files_;
  int abi_ = 7;
  bool netns_cookie_ = false;
  std::set<std::string> unreadable_;
  std::set<std::string> writable_;  // cgroup directories and files we may write
  std::map<int, lx::StdioFile> stdio_;
  uint32_t uid_ = 1000;
};

// Builds a Policy from command-line words as cage would, with cwd /home/ann/proj and HOME /home/ann.
policy::Policy policy_of(std::vector<std::string> words);

}  // namespace cage::testing
