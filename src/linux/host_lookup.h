// What the host has at a path the workload named, for --explain's judgement after the run
// (report.cc). The names are the workload's choice, so the lookup must not become a channel out of
// the sandbox or a way to stall cage: a lookup on an NFS, SMB, sshfs/FUSE or autofs mount asks a
// file server (or the network) for the name, and may block without end. The path is resolved
// here component by component (links followed by hand, at most 40), and a component that lies on a
// filesystem not known to be local is never looked up: the answer is then "unchecked". Found by an
// attack review of --explain (a FUSE server outside saw the names a run without --net chose).
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cage::lx::host_lookup {

enum class Kind { absent, file, dir, unchecked };

struct Answer {
  Kind kind = Kind::unchecked;
  std::string canonical;  // links resolved; a missing last part kept as named
};

// Mount points of the host with whether their filesystem is local (a fixed list of kernel-local
// types; everything else, fuse.* and network filesystems among them, is not).
struct Mounts {
  std::vector<std::pair<std::string, bool>> points;
  static Mounts parse(std::string_view mountinfo);  // /proc/self/mountinfo's text
  static Mounts of_this_process();
  bool local(const std::string& path) const;  // the mount holding path (longest prefix) is local
  // path is itself a mount point: the walk reaches it through the dentry the mount pins, without
  // asking the filesystem beneath for the name (an admin's name, not one the workload chose).
  bool mount_point(const std::string& path) const;
};

bool local_fs_type(std::string_view type);

// The calls the walk makes, replaceable in unit tests.
struct Fs {
  // 0: absent, 1: other, 2: directory, 3: symbolic link (lstat)
  std::function<int(const std::string&)> lstat_kind;
  std::function<bool(const std::string&, std::string*)> readlink;
  static Fs real();
};

Answer lookup(const std::string& path, const Mounts& mounts, const Fs& fs);

}  // namespace cage::lx::host_lookup
