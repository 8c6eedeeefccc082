// host_lookup: --explain's host lookups stay on local filesystems (no name the workload chose is ever
// asked of a FUSE, network or autofs mount), links are followed by hand, loops end.
#include "linux/host_lookup.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace cage::testing {
namespace {

using lx::host_lookup::Answer;
using lx::host_lookup::Fs;
using lx::host_lookup::Kind;
using lx::host_lookup::lookup;
using lx::host_lookup::Mounts;

const char* kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "23 22 0:21 / /proc rw,nosuid shared:2 - proc proc rw\n"
    "40 22 0:40 / /home/ann/remote rw,nosuid shared:30 - fuse.sshfs ann@box: rw,user_id=1000\n"
    "41 22 0:41 / /net rw,relatime shared:31 - autofs /etc/auto.net rw,fd=7\n"
    "42 22 0:42 / /mnt/my\\040disk rw shared:32 - xfs /dev/sdb1 rw\n"
    "43 22 0:43 / /srv/nfs rw shared:33 - nfs4 server:/export rw\n";

// A fake filesystem: 1 file, 2 directory, 3 link (with its target); every lstat is recorded.
struct FakeFs {
  std::map<std::string, std::pair<int, std::string>> entries;
  std::set<std::string> asked;
  Fs fs() {
    Fs f;
    f.lstat_kind = [this](const std::string& p) {
      asked.insert(p);
      auto it = entries.find(p);
      return it == entries.end() ? 0 : it->second.first;
    };
    f.readlink = [this](const std::string& p, std::string* out) {
      auto it = entries.find(p);
      if (it == entries.end() || it->second.first != 3) return false;
      *out = it->second.second;
      return true;
    };
    return f;
  }
};

TEST(HostLookup, MountinfoTypesAndEscapes) {
  auto m = Mounts::parse(kMountinfo);
  ASSERT_EQ(m.points.size(), 6u);
  EXPECT_EQ(m.points[4].first, "/mnt/my disk");
  EXPECT_TRUE(m.local("/home/ann/.npmrc"));
  EXPECT_TRUE(m.local("/mnt/my disk/x"));
  EXPECT_FALSE(m.local("/home/ann/remote"));
  EXPECT_FALSE(m.local("/home/ann/remote/a/b"));
  EXPECT_TRUE(m.local("/home/ann/remotely"));
  EXPECT_FALSE(m.local("/net/host"));
  EXPECT_FALSE(m.local("/srv/nfs/x"));
}

TEST(HostLookup, LocalFilesThroughLinks) {
  auto m = Mounts::parse(kMountinfo);
  FakeFs f;
  f.entries = {{"/lib", {3, "usr/lib"}}, {"/usr", {2, ""}}, {"/usr/lib", {2, ""}}, {"/usr/lib/libc.so.6", {1, ""}},
               {"/home", {2, ""}}, {"/home/ann", {2, ""}}, {"/home/ann/.npmrc", {3, "/home/ann/dot/npmrc"}},
               {"/home/ann/dot", {2, ""}}, {"/home/ann/dot/npmrc", {1, ""}}};
  Answer a = lookup("/lib/libc.so.6", m, f.fs());
  EXPECT_EQ(a.kind, Kind::file);
  EXPECT_EQ(a.canonical, "/usr/lib/libc.so.6");
  a = lookup("/home/ann/.npmrc", m, f.fs());
  EXPECT_EQ(a.kind, Kind::file);
  EXPECT_EQ(a.canonical, "/home/ann/dot/npmrc");
  a = lookup("/home/ann/missing/x", m, f.fs());
  EXPECT_EQ(a.kind, Kind::absent);
  EXPECT_EQ(a.canonical, "/home/ann/missing/x");
  a = lookup("/usr/lib/../lib", m, f.fs());
  EXPECT_EQ(a.kind, Kind::dir);
  EXPECT_EQ(a.canonical, "/usr/lib");
}

TEST(HostLookup, NeverAsksARemoteOrAutomountedFilesystem) {
  auto m = Mounts::parse(kMountinfo);
  FakeFs f;
  f.entries = {{"/home", {2, ""}}, {"/home/ann", {2, ""}}, {"/home/ann/remote", {2, ""}},
               {"/tmp", {2, ""}}, {"/tmp/l", {3, "/srv/nfs/secret-name"}}, {"/srv", {2, ""}}};
  for (const char* p : {"/home/ann/remote/exfil-name", "/net/exfil-host", "/net", "/tmp/l", "/srv/nfs/x"}) {
    Answer a = lookup(p, m, f.fs());
    EXPECT_EQ(a.kind, Kind::unchecked) << p;
  }
  for (const auto& asked : f.asked) {
    EXPECT_EQ(asked.find("exfil"), std::string::npos) << asked;
    EXPECT_EQ(asked.find("secret-name"), std::string::npos) << asked;
    EXPECT_NE(asked, "/net");
    EXPECT_NE(asked, "/srv/nfs");
  }
}

// A root on 9p (the kernel-matrix guests) with /tmp an ext4 mount: paths beneath /tmp are looked
// up, names in / itself are not (found running --explain's tests on Debian's 6.1 in the guest).
TEST(HostLookup, LocalMountBeneathARemoteRoot) {
  auto m = Mounts::parse(
      "22 1 0:30 / / ro shared:1 - 9p hostroot ro,trans=virtio\n"
      "23 22 254:0 /tmp /tmp rw shared:2 - ext4 /dev/vda rw\n");
  FakeFs f;
  f.entries = {{"/tmp", {2, ""}}, {"/tmp/h", {2, ""}}, {"/tmp/h/secret", {1, ""}}};
  Answer a = lookup("/tmp/h/secret", m, f.fs());
  EXPECT_EQ(a.kind, Kind::file);
  EXPECT_EQ(a.canonical, "/tmp/h/secret");
  EXPECT_EQ(lookup("/chosen-name", m, f.fs()).kind, Kind::unchecked);
  EXPECT_EQ(f.asked.count("/chosen-name"), 0u);
}

TEST(HostLookup, LinkLoopsEnd) {
  auto m = Mounts::parse(kMountinfo);
  FakeFs f;
  f.entries = {{"/a", {3, "/b"}}, {"/b", {3, "/a"}}};
  EXPECT_EQ(lookup("/a/x", m, f.fs()).kind, Kind::unchecked);
}

}  // namespace
}  // namespace cage::testing
