// The Low label of --rw paths under concurrent runs (label_refs.h): the first live run saves the
// label, the last one restores it and only if it is still cage's; a crashed run's entry (its pid gone,
// or reused by a process started at another time) is dropped by the next cage that opens the lock.
#include <gtest/gtest.h>

#include <set>

#include "windows/label_refs.h"

namespace cage::testing {
namespace {

using win::LabelHolder;
using win::LabelState;

const std::string kPath = "C:\\Users\\ann\\proj\\out";
const std::string kSet = "S:(ML;OICI;NW;;;LW)";  // what compile sets on a --rw directory
const std::string kNone = "";                    // no label: Medium, implicitly
const LabelHolder kA{100, 1000, "100-a"}, kB{200, 2000, "200-b"}, kC{300, 3000, "300-c"};

// Holders alive as listed by pid and start time; everything else is gone.
win::HolderAlive alive(std::set<std::pair<uint32_t, uint64_t>> live) {
  return [live](const LabelHolder& h) { return live.count({h.pid, h.started}) > 0; };
}

std::vector<std::string> runs_of(const LabelState& s) {
  std::vector<std::string> out;
  for (const auto& h : s.holders) out.push_back(h.run);
  return out;
}

TEST(WindowsLabel, TwoOverlappingRunsLeaveTheOriginalLabel) {
  // A starts, B starts, A ends, B ends: the order that left the Low label behind before the count.
  auto a = win::acquire_label(std::nullopt, kPath, kSet, kNone, kA, alive({{100, 1000}}));
  EXPECT_TRUE(a.set_label);
  EXPECT_EQ(a.next.original, kNone);
  auto b = win::acquire_label(a.next, kPath, kSet, kSet, kB, alive({{100, 1000}, {200, 2000}}));
  EXPECT_FALSE(b.set_label) << "the label is already cage's";
  EXPECT_EQ(b.next.original, kNone) << "B must not save A's Low label as the original";
  EXPECT_EQ(runs_of(b.next), (std::vector<std::string>{"100-a", "200-b"}));
  auto ra = win::release_label(b.next, "100-a", kSet, alive({{100, 1000}, {200, 2000}}));
  EXPECT_FALSE(ra.restore) << "B still writes there";
  ASSERT_TRUE(ra.next);
  EXPECT_EQ(runs_of(*ra.next), (std::vector<std::string>{"200-b"}));
  auto rb = win::release_label(ra.next, "200-b", kSet, alive({{200, 2000}}));
  EXPECT_TRUE(rb.restore);
  EXPECT_EQ(rb.restore_to, kNone);
  EXPECT_FALSE(rb.next) << "the lock file goes with the last holder";
}

TEST(WindowsLabel, EndingInStartOrderAlsoRestores) {
  auto a = win::acquire_label(std::nullopt, kPath, kSet, "S:(ML;OICI;NW;;;ME)", kA, alive({{100, 1000}}));
  auto b = win::acquire_label(a.next, kPath, kSet, kSet, kB, alive({{100, 1000}, {200, 2000}}));
  auto rb = win::release_label(b.next, "200-b", kSet, alive({{100, 1000}, {200, 2000}}));
  EXPECT_FALSE(rb.restore);
  auto ra = win::release_label(rb.next, "100-a", kSet, alive({{100, 1000}}));
  EXPECT_TRUE(ra.restore);
  EXPECT_EQ(ra.restore_to, "S:(ML;OICI;NW;;;ME)") << "the user's own Medium label comes back exactly";
}

TEST(WindowsLabel, ACrashedHolderIsDroppedByTheNextRun) {
  // A crashed while holding the label; its pid is gone. C joins later and ends: the label goes back.
  LabelState crashed{kPath, kSet, kNone, {kA}};
  auto c = win::acquire_label(crashed, kPath, kSet, kSet, kC, alive({{300, 3000}}));
  EXPECT_EQ(c.next.original, kNone) << "the saved original survives the crash";
  EXPECT_EQ(runs_of(c.next), (std::vector<std::string>{"300-c"}));
  EXPECT_FALSE(c.set_label);
  auto rc = win::release_label(c.next, "300-c", kSet, alive({{300, 3000}}));
  EXPECT_TRUE(rc.restore);
  EXPECT_EQ(rc.restore_to, kNone);
}

TEST(WindowsLabel, AReusedPidIsNotTheHolder) {
  // A's pid now names a process started later: that process is not A, so A's entry is stale.
  LabelState crashed{kPath, kSet, kNone, {kA}};
  auto r = win::release_label(crashed, "300-c", kSet, alive({{100, 9999}}));
  EXPECT_TRUE(r.restore);
  EXPECT_FALSE(r.next);
}

TEST(WindowsLabel, OrphanedJournalReleasesOnlyItsOwnRun) {
  // The next cage undoes a crashed run's journal (label_ref entry for A) while B is alive.
  LabelState s{kPath, kSet, kNone, {kA, kB}};
  auto r = win::release_label(s, "100-a", kSet, alive({{200, 2000}}));
  EXPECT_FALSE(r.restore);
  ASSERT_TRUE(r.next);
  EXPECT_EQ(runs_of(*r.next), (std::vector<std::string>{"200-b"}));
  EXPECT_EQ(r.next->original, kNone);
}

TEST(WindowsLabel, ALabelChangedByHandIsNotOverwritten) {
  LabelState s{kPath, kSet, kNone, {kA}};
  auto r = win::release_label(s, "100-a", std::string("S:(ML;OICI;NW;;;HI)"), alive({{100, 1000}}));
  EXPECT_FALSE(r.restore) << "someone set another label meanwhile: theirs stays";
  EXPECT_FALSE(r.next);
  // After a crash the same: a label changed since is the new original, not the stale saved one.
  auto c = win::acquire_label(s, kPath, kSet, "S:(ML;OICI;NW;;;HI)", kC, alive({{300, 3000}}));
  EXPECT_EQ(c.next.original, "S:(ML;OICI;NW;;;HI)");
  EXPECT_TRUE(c.set_label);
}

TEST(WindowsLabel, AGonePathOrNoStateRestoresNothing) {
  LabelState s{kPath, kSet, kNone, {kA}};
  auto gone = win::release_label(s, "100-a", std::nullopt, alive({}));
  EXPECT_FALSE(gone.restore);
  EXPECT_FALSE(gone.next);
  auto none = win::release_label(std::nullopt, "100-a", kSet, alive({}));
  EXPECT_FALSE(none.restore) << "the run died before it joined the count";
  EXPECT_FALSE(none.next);
}

TEST(WindowsLabel, ARunJoinsOnce) {
  // One run granting a path twice (or retrying) holds it once, and one release frees it.
  auto a = win::acquire_label(std::nullopt, kPath, kSet, kNone, kA, alive({{100, 1000}}));
  auto again = win::acquire_label(a.next, kPath, kSet, kSet, kA, alive({{100, 1000}}));
  EXPECT_EQ(runs_of(again.next), (std::vector<std::string>{"100-a"}));
  EXPECT_TRUE(win::release_label(again.next, "100-a", kSet, alive({{100, 1000}})).restore);
}

TEST(WindowsLabel, CageLabelIgnoresSaclControlFlags) {
  EXPECT_TRUE(win::is_cage_label("S:AI(ML;OICI;NW;;;LW)", kSet));
  EXPECT_TRUE(win::is_cage_label(kSet, kSet));
  EXPECT_FALSE(win::is_cage_label("S:(ML;OICIID;NW;;;LW)", kSet)) << "inherited from a parent: not cage's";
  EXPECT_FALSE(win::is_cage_label("S:(ML;;NW;;;LW)", kSet));
  EXPECT_FALSE(win::is_cage_label("", kSet));
  EXPECT_FALSE(win::is_cage_label("S:", kSet));
}

TEST(WindowsLabel, StateRoundTripsAndOddFilesAreRefused) {
  LabelState s{kPath, kSet, "S:(ML;OICI;NW;;;ME)", {kA, {7, 133444555666777888ull, "7-00000abc00000012"}}};
  std::optional<LabelState> back;
  ASSERT_TRUE(win::parse_label_state(win::format_label_state(s), back));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->path, s.path);
  EXPECT_EQ(back->set, s.set);
  EXPECT_EQ(back->original, s.original);
  ASSERT_EQ(back->holders.size(), 2u);
  EXPECT_EQ(back->holders[1].pid, 7u);
  EXPECT_EQ(back->holders[1].started, 133444555666777888ull);
  EXPECT_EQ(back->holders[1].run, "7-00000abc00000012");
  std::optional<LabelState> empty;
  EXPECT_TRUE(win::parse_label_state("", empty)) << "a lock file just created";
  EXPECT_FALSE(empty);
  const std::string good = win::format_label_state(s);
  std::optional<LabelState> bad;
  EXPECT_FALSE(win::parse_label_state("cage-label-refs 2\n" + good.substr(good.find('\n') + 1), bad));
  EXPECT_FALSE(win::parse_label_state(good.substr(0, good.size() - 1), bad)) << "a torn line";
  EXPECT_FALSE(win::parse_label_state(good + "holder\t1 99999999999999999999999 x\n", bad)) << "over 64 bits";
  EXPECT_FALSE(win::parse_label_state(good + "holder\t1 2\n", bad)) << "no run";
  EXPECT_FALSE(win::parse_label_state(good + "extra\tx\n", bad));
  EXPECT_FALSE(win::parse_label_state(good + "path\tC:\\other\n", bad)) << "two paths";
}

TEST(WindowsLabel, LockNamesAreCaseInsensitiveAndLiveBesideTheJournals) {
  EXPECT_EQ(win::label_lock_name("C:\\Users\\Ann\\Proj"), win::label_lock_name("c:\\users\\ann\\proj\\"));
  EXPECT_NE(win::label_lock_name("C:\\a"), win::label_lock_name("C:\\b"));
  EXPECT_EQ(win::label_lock_name("C:\\a").size(), 64u + 5u);
  EXPECT_EQ(win::label_lock_dir("C:\\Users\\ann\\AppData\\Local\\cage\\restore"),
            "C:\\Users\\ann\\AppData\\Local\\cage\\labels");
  EXPECT_TRUE(win::same_windows_path("C:\\A\\b\\", "c:\\a\\B"));
}

}  // namespace
}  // namespace cage::testing
