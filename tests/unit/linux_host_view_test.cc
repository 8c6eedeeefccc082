// HostView::scan_dir_upto and read_regular (the curated /etc's walk): the real one on a temporary
// tree gives the answers of list_dir_upto, lstat, readlink and read_file asked one by one, without
// following a link; the defaults a FakeHostView inherits do the same; curated_etc asks each once.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "fake_host_view.h"
#include "linux/etc_view.h"
#include "linux/host_view.h"

namespace cage::testing {
namespace {

using lx::FileKind;

class TempTree {
 public:
  TempTree() {
    char tmpl[] = "/tmp/cage-host-view-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~TempTree() { std::filesystem::remove_all(root_); }
  std::string path(const std::string& rel) const { return root_ + "/" + rel; }
  void file(const std::string& rel, const std::string& content, mode_t mode = 0644) const {
    std::ofstream(path(rel), std::ios::binary) << content;
    ::chmod(path(rel).c_str(), mode);
  }

 private:
  std::string root_;
};

void expect_same_info(const lx::FileInfo& got, const lx::FileInfo& want, const std::string& what) {
  EXPECT_EQ(got.kind, want.kind) << what;
  EXPECT_EQ(got.mode, want.mode) << what;
  EXPECT_EQ(got.size, want.size) << what;
  if (want.kind != FileKind::symlink) {  // a link's owner is not told
    EXPECT_EQ(got.uid, want.uid) << what;
  }
}

TEST(LinuxHostView, ScanGivesTheAnswersOfListLstatAndReadlink) {
  TempTree t;
  auto host = lx::make_real_host_view();
  ::mkdir(t.path("d").c_str(), 0755);
  t.file("d/b-file", "twelve bytes", 0640);
  ::mkdir(t.path("d/a-dir").c_str(), 0711);
  ASSERT_EQ(::symlink("../elsewhere/x", t.path("d/c-link").c_str()), 0);  // dangling: still a link
  ASSERT_EQ(::symlink("b-file", t.path("d/d-link").c_str()), 0);
  ASSERT_EQ(::mkfifo(t.path("d/e-fifo").c_str(), 0600), 0);

  auto scanned = host->scan_dir_upto(t.path("d"), 64);
  auto names = host->list_dir_upto(t.path("d"), 64);
  ASSERT_TRUE(scanned && names);
  ASSERT_EQ(scanned->size(), names->size());
  for (size_t i = 0; i < names->size(); ++i) {
    const auto& e = (*scanned)[i];
    EXPECT_EQ(e.name, (*names)[i]);  // the same names, in the same (sorted) order
    const std::string child = t.path("d/" + e.name);
    expect_same_info(e.info, host->lstat(child), child);
    EXPECT_EQ(e.link, host->readlink(child).value_or("")) << child;
  }
  EXPECT_EQ((*scanned)[0].info.kind, FileKind::dir);
  EXPECT_EQ((*scanned)[2].link, "../elsewhere/x");
  EXPECT_EQ((*scanned)[4].info.kind, FileKind::fifo);
}

TEST(LinuxHostView, ScanDoesNotFollowALinkToADirectory) {
  TempTree t;
  auto host = lx::make_real_host_view();
  ::mkdir(t.path("d").c_str(), 0755);
  t.file("d/f", "x");
  ASSERT_EQ(::symlink("d", t.path("via").c_str()), 0);
  EXPECT_TRUE(host->list_dir_upto(t.path("via"), 64));  // the plain listing follows it
  EXPECT_FALSE(host->scan_dir_upto(t.path("via"), 64));
  EXPECT_FALSE(host->scan_dir_upto(t.path("missing"), 64));
}

TEST(LinuxHostView, ScanPastMostGivesOnlyNames) {
  TempTree t;
  auto host = lx::make_real_host_view();
  ::mkdir(t.path("d").c_str(), 0755);
  for (int i = 0; i < 200; ++i) t.file("d/f" + std::to_string(i), "x");
  auto scanned = host->scan_dir_upto(t.path("d"), 64);
  ASSERT_TRUE(scanned);
  EXPECT_GT(scanned->size(), 64u);
  for (const auto& e : *scanned) EXPECT_EQ(e.info.kind, FileKind::missing) << e.name;
}

TEST(LinuxHostView, ReadRegularReadsWhatReadFileReads) {
  TempTree t;
  auto host = lx::make_real_host_view();
  const std::string big(100000, 'b');  // past read_file's stack buffer
  t.file("empty", "");
  t.file("small", "hello\n");
  t.file("big", big);
  for (const char* f : {"empty", "small", "big"}) {
    auto want = host->read_file(t.path(f));
    ASSERT_TRUE(want) << f;
    EXPECT_EQ(host->read_regular(t.path(f), host->lstat(t.path(f)).size), want) << f;
  }
}

// The size is the lstat's, taken before the open: a file that has grown or shrunk since is read whole.
TEST(LinuxHostView, ReadRegularReadsAFileThatChangedSinceItsLstat) {
  TempTree t;
  auto host = lx::make_real_host_view();
  t.file("f", "grown since the lstat said 3");
  EXPECT_EQ(host->read_regular(t.path("f"), 3), "grown since the lstat said 3");
  EXPECT_EQ(host->read_regular(t.path("f"), 0), "grown since the lstat said 3");
  EXPECT_EQ(host->read_regular(t.path("f"), 1000), "grown since the lstat said 3");
  const std::string big(50000, 'g');
  t.file("g", big);
  EXPECT_EQ(host->read_regular(t.path("g"), 16384), big);
}

TEST(LinuxHostView, ReadRegularDoesNotFollowALink) {
  TempTree t;
  auto host = lx::make_real_host_view();
  t.file("secret", "behind a link");
  ASSERT_EQ(::symlink("secret", t.path("link").c_str()), 0);
  EXPECT_EQ(host->read_file(t.path("link")), "behind a link");  // read_file follows it
  EXPECT_FALSE(host->read_regular(t.path("link"), 13));
  EXPECT_FALSE(host->read_regular(t.path("missing"), 0));
}

TEST(LinuxHostView, TheDefaultsAFakeInheritsComposeTheOneByOneCalls) {
  FakeHostView host;
  host.add_dir("/etc/d");
  host.add_file("/etc/d/f", 0640, "content");
  host.add_link("/etc/d/l", "/usr/share/x");
  host.add_link("/etc/via", "d");
  auto scanned = host.scan_dir_upto("/etc/d", 64);
  ASSERT_TRUE(scanned);
  ASSERT_EQ(scanned->size(), 2u);
  EXPECT_EQ((*scanned)[0].name, "f");
  EXPECT_EQ((*scanned)[0].info.kind, FileKind::file);
  EXPECT_EQ((*scanned)[0].info.mode, 0640u);
  EXPECT_EQ((*scanned)[0].info.size, 7u);
  EXPECT_EQ((*scanned)[1].info.kind, FileKind::symlink);
  EXPECT_EQ((*scanned)[1].link, "/usr/share/x");
  EXPECT_FALSE(host.scan_dir_upto("/etc/via", 64));  // a link is not followed
  EXPECT_EQ(host.read_regular("/etc/d/f", 7), "content");
  EXPECT_FALSE(host.read_regular("/etc/d/l", 0));
}

// The walk asks each directory's scan and each file's readability once, however deep the directory
// (copy_is_bind looks below a directory again for each level above it).
class CountingHost : public FakeHostView {
 public:
  std::optional<std::vector<lx::DirEntry>> scan_dir_upto(const std::string& path, size_t most) const override {
    ++scans[path];
    return FakeHostView::scan_dir_upto(path, most);
  }
  bool readable(const std::string& path) const override {
    ++reads[path];
    return FakeHostView::readable(path);
  }
  std::optional<std::string> read_regular(const std::string& path, uint64_t size) const override {
    ++reads[path];
    return FakeHostView::read_regular(path, size);
  }
  mutable std::map<std::string, int> scans, reads;
};

TEST(LinuxHostView, TheEtcWalkAsksEachQuestionOnce) {
  CountingHost host;
  host.add_dir("/etc/perl");  // copied: five entries, three levels
  host.add_dir("/etc/perl/Net");
  host.add_file("/etc/perl/Net/libnet.cfg", 0644, "cfg");
  host.add_dir("/etc/perl/XML");
  host.add_dir("/etc/perl/XML/SAX");
  host.add_file("/etc/perl/XML/SAX/ParserDetails.ini", 0644, "ini");
  host.add_dir("/etc/fonts");  // bound: nine entries
  for (int i = 0; i < 9; ++i) host.add_file("/etc/fonts/f" + std::to_string(i), 0644, "x");
  auto steps = lx::curated_etc(host);
  EXPECT_EQ(host.scans["/etc/perl/XML/SAX"], 1);
  EXPECT_EQ(host.scans["/etc/perl"], 1);
  EXPECT_EQ(host.scans["/etc/fonts"], 1);
  for (const auto& [path, n] : host.reads) EXPECT_LE(n, 2) << path;  // readable once, then read once
  EXPECT_EQ(host.reads["/etc/fonts/f0"], 1);                         // bound: asked, never read
  bool copied = false;
  for (const auto& s : steps) copied |= s.target == "/etc/perl/XML/SAX/ParserDetails.ini" && s.content == "ini";
  EXPECT_TRUE(copied);
}

}  // namespace
}  // namespace cage::testing
