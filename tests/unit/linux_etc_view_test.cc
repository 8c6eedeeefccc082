// lx::curated_etc: when a directory of /etc is bound instead of copied (the copy would show the same
// names and bytes), against a FakeHostView.
#include <gtest/gtest.h>

#include "fake_host_view.h"
#include "linux/etc_view.h"

namespace cage::testing {
namespace {

using lx::MountKind;

const lx::MountStep* find(const std::vector<lx::MountStep>& steps, const std::string& target) {
  for (const auto& s : steps)
    if (s.target == target) return &s;
  return nullptr;
}

// /etc/fonts as fontconfig ships it: files, links into /usr, a subdirectory; eight entries or more.
FakeHostView with_fonts() {
  FakeHostView host;
  host.add_dir("/etc/fonts");
  host.add_file("/etc/fonts/fonts.conf", 0644, "<fontconfig/>");
  host.add_dir("/etc/fonts/conf.d");
  for (int i = 0; i < 8; ++i)
    host.add_link("/etc/fonts/conf.d/" + std::to_string(10 + i) + "-x.conf", "/usr/share/fontconfig/x.conf");
  return host;
}

TEST(LinuxEtcView, ADirectoryWhoseCopyEqualsABindIsBound) {
  auto steps = lx::curated_etc(with_fonts());
  const auto* fonts = find(steps, "/etc/fonts");
  ASSERT_NE(fonts, nullptr);
  EXPECT_EQ(fonts->kind, MountKind::bind_ro);
  EXPECT_EQ(fonts->source, "/etc/fonts");
  EXPECT_EQ(find(steps, "/etc/fonts/fonts.conf"), nullptr);  // nothing below it is copied
}

TEST(LinuxEtcView, AFileOnlyRootMayReadKeepsTheCopy) {
  auto host = with_fonts();
  host.add_file("/etc/fonts/conf.d/private.conf", 0600, "secret");
  auto steps = lx::curated_etc(host);
  ASSERT_NE(find(steps, "/etc/fonts"), nullptr);
  EXPECT_EQ(find(steps, "/etc/fonts")->kind, MountKind::dir);
  EXPECT_EQ(find(steps, "/etc/fonts/fonts.conf")->kind, MountKind::file);
  // conf.d itself is copied (the file a bind would show is not), its links recreated as text.
  EXPECT_EQ(find(steps, "/etc/fonts/conf.d")->kind, MountKind::dir);
  EXPECT_EQ(find(steps, "/etc/fonts/conf.d/10-x.conf")->kind, MountKind::symlink);
  EXPECT_EQ(find(steps, "/etc/fonts/conf.d/private.conf"), nullptr);
}

TEST(LinuxEtcView, ALinkShownByContentKeepsTheCopy) {
  auto host = with_fonts();
  host.add_dir("/run");
  host.add_file("/run/local.conf", 0644, "<local/>");
  host.add_link("/etc/fonts/local.conf", "/run/local.conf");  // a bind would show a dangling link
  auto steps = lx::curated_etc(host);
  EXPECT_EQ(find(steps, "/etc/fonts")->kind, MountKind::dir);
  ASSERT_NE(find(steps, "/etc/fonts/local.conf"), nullptr);
  EXPECT_EQ(find(steps, "/etc/fonts/local.conf")->kind, MountKind::file);
  EXPECT_EQ(find(steps, "/etc/fonts/local.conf")->content, "<local/>");
}

// Found by an attack review (tests/escape/etc_bind.sh): the bind showed what the copy leaves out.
TEST(LinuxEtcView, FilesPastTheCopyBudgetKeepTheCopy) {
  auto host = with_fonts();
  for (int i = 0; i < 5; ++i)  // 10 MB in all, each under the 2 MiB a file may have
    host.add_file("/etc/fonts/big" + std::to_string(i), 0644, std::string(2000000, 'x'));
  auto steps = lx::curated_etc(host);
  EXPECT_EQ(find(steps, "/etc/fonts")->kind, MountKind::dir);
  size_t shown = 0;
  for (int i = 0; i < 5; ++i)
    if (find(steps, "/etc/fonts/big" + std::to_string(i))) ++shown;
  EXPECT_EQ(shown, 4u);  // 8 MiB hold four of them
}

TEST(LinuxEtcView, ABoundDirectoryTakesItsBytesFromTheBudget) {
  FakeHostView host;
  host.add_dir("/etc/xdg");  // bound: eight links and 6 MB
  for (int i = 0; i < 8; ++i) host.add_link("/etc/xdg/l" + std::to_string(i), "/usr/share/x");
  for (int i = 0; i < 3; ++i) host.add_file("/etc/xdg/big" + std::to_string(i), 0644, std::string(2000000, 'x'));
  host.add_dir("/etc/fonts");  // after xdg in the walk: 4 MB, of which the copy keeps one file
  for (int i = 0; i < 2; ++i) host.add_file("/etc/fonts/big" + std::to_string(i), 0644, std::string(2000000, 'y'));
  auto steps = lx::curated_etc(host);
  EXPECT_EQ(find(steps, "/etc/xdg")->kind, MountKind::bind_ro);
  EXPECT_EQ(find(steps, "/etc/fonts")->kind, MountKind::dir);
  EXPECT_NE(find(steps, "/etc/fonts/big0"), nullptr);
  EXPECT_EQ(find(steps, "/etc/fonts/big1"), nullptr);
}

TEST(LinuxEtcView, AFileCageCannotReadKeepsTheCopy) {
  auto host = with_fonts();
  host.add_file("/etc/fonts/not-mine.conf", 0604, "group may not read");
  host.add_unreadable("/etc/fonts/not-mine.conf");
  auto steps = lx::curated_etc(host);
  EXPECT_EQ(find(steps, "/etc/fonts")->kind, MountKind::dir);
  EXPECT_EQ(find(steps, "/etc/fonts/not-mine.conf"), nullptr);  // no name either
  EXPECT_EQ(find(steps, "/etc/fonts/fonts.conf")->kind, MountKind::file);
}

TEST(LinuxEtcView, ASmallDirectoryIsCopied) {
  FakeHostView host;
  host.add_dir("/etc/default");
  host.add_file("/etc/default/locale", 0644, "LANG=C.UTF-8\n");
  auto steps = lx::curated_etc(host);
  EXPECT_EQ(find(steps, "/etc/default")->kind, MountKind::dir);
  EXPECT_EQ(find(steps, "/etc/default/locale")->content, "LANG=C.UTF-8\n");
}

}  // namespace
}  // namespace cage::testing
