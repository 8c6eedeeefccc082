// Coalescer (audit_coalesce.h): the first of each identity is written, its repeats come out as one
// line with `repeats` when the window closes, windows double while repeats go on, identities past
// the caps are counted by type in a `suppressed` line, and the counts always add up to the events.
#include "common/audit_coalesce.h"

#include <gtest/gtest.h>

#include <map>

using cage::audit::Coalescer;

namespace {

using namespace std::chrono_literals;
const auto t0 = Coalescer::Clock::time_point{} + std::chrono::hours(1);

toml::table denied(const std::string& host, int64_t port) {
  return toml::table{{"host", host}, {"port", port}, {"decision", "denied"}};
}
// (a helper, not name("h", static_cast<int64_t>(i)): g++ 12 warns -Wrestrict on the inlined concatenation)
std::string name(const char* prefix, int64_t i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}
int64_t repeats_of(const Coalescer::Line& l) {
  auto r = l.fields["repeats"].value<int64_t>();
  return r ? *r : 1;
}

TEST(AuditCoalesce, FirstWrittenRepeatsCountedInOneLine) {
  Coalescer c;
  EXPECT_EQ(c.offer("net", "a:1", denied("a", 1), t0), Coalescer::Offer::write);
  for (int i = 0; i < 999; ++i) EXPECT_EQ(c.offer("net", "a:1", denied("a", 1), t0 + 1ms * i), Coalescer::Offer::held);
  EXPECT_TRUE(c.due(t0 + 999ms, false).empty());  // the window is still open
  ASSERT_EQ(c.next_due(), t0 + Coalescer::kWindow);
  auto lines = c.due(t0 + Coalescer::kWindow, false);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].type, "net");
  EXPECT_EQ(lines[0].fields["host"].value<std::string>(), "a");
  EXPECT_EQ(repeats_of(lines[0]), 999);
}

TEST(AuditCoalesce, QuietIdentityForgottenThenWrittenAgain) {
  Coalescer c;
  EXPECT_EQ(c.offer("net", "a:1", denied("a", 1), t0), Coalescer::Offer::write);
  EXPECT_TRUE(c.due(t0 + Coalescer::kWindow, false).empty());  // no repeats: no line, and forgotten
  EXPECT_FALSE(c.next_due());
  EXPECT_EQ(c.offer("net", "a:1", denied("a", 1), t0 + 5s), Coalescer::Offer::write);
}

TEST(AuditCoalesce, WindowsDoubleWhileRepeatsGoOnUpToTheCap) {
  Coalescer c;
  auto t = t0;
  EXPECT_EQ(c.offer("net", "k", denied("a", 1), t), Coalescer::Offer::write);
  int64_t events = 1, counted = 1, lines = 1;
  // A flood of an hour, an event every 10 ms.
  for (auto end = t0 + std::chrono::hours(1); t < end; t += 10ms) {
    EXPECT_NE(c.offer("net", "k", denied("a", 1), t), Coalescer::Offer::write);
    ++events;
    for (const auto& l : c.due(t, false)) counted += repeats_of(l), ++lines;
  }
  for (const auto& l : c.due(t, true)) counted += repeats_of(l), ++lines;
  EXPECT_EQ(counted, events);
  // 1+2+...+32 s windows, then one a minute: about 60 lines for an hour, not 360000.
  EXPECT_LE(lines, 3600 / 60 + 10);
  EXPECT_GE(lines, 3600 / 60);
}

TEST(AuditCoalesce, DistinctIdentitiesEachWrittenUpToTheRate) {
  Coalescer c;
  int written = 0;
  for (size_t i = 0; i < Coalescer::kNewBurst; ++i)
    written += c.offer("net", name("h", static_cast<int64_t>(i)), denied(name("h", static_cast<int64_t>(i)), 1), t0) == Coalescer::Offer::write;
  EXPECT_EQ(written, static_cast<int>(Coalescer::kNewBurst));
  // Past the rate: counted by type, in one suppressed line.
  EXPECT_EQ(c.offer("net", "late1", denied("late1", 1), t0), Coalescer::Offer::held_new);
  EXPECT_EQ(c.offer("net", "late2", denied("late2", 1), t0), Coalescer::Offer::held);
  // Then kNewPerSecond a second.
  int later = 0;
  for (int i = 0; i < 50; ++i) later += c.offer("net", name("n", i), denied("n", i), t0 + 999ms) == Coalescer::Offer::write;
  EXPECT_EQ(later, static_cast<int>(Coalescer::kNewPerSecond) - 1);
  auto lines = c.due(t0 + 999ms, false);
  EXPECT_TRUE(lines.empty());
  lines = c.due(t0 + 1s, false);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].type, "suppressed");
  EXPECT_EQ(lines[0].fields["event"].value<std::string>(), "net");
  EXPECT_EQ(repeats_of(lines[0]), 2 + 50 - (Coalescer::kNewPerSecond - 1));
}

TEST(AuditCoalesce, IdentitiesCappedManyDistinctAddUp) {
  Coalescer c;
  int64_t events = 0, counted = 0, lines = 0;
  auto t = t0;
  // 20000 distinct refusals in 10 s, each repeated once: memory and lines stay bounded.
  for (int i = 0; i < 20000; ++i, t += 500us) {
    for (int rep = 0; rep < 2; ++rep) {
      ++events;
      if (c.offer("net", std::to_string(i), denied("h", i), t) == Coalescer::Offer::write) ++counted, ++lines;
    }
    for (const auto& l : c.due(t, false)) counted += repeats_of(l), ++lines;
  }
  for (const auto& l : c.due(t, true)) counted += repeats_of(l), ++lines;
  EXPECT_EQ(counted, events);
  // At most kNewPerSecond new lines and their repeats a second, and a suppressed line a window.
  EXPECT_LE(lines, 2 * static_cast<int64_t>(Coalescer::kNewBurst) + 11 * (2 * static_cast<int64_t>(Coalescer::kNewPerSecond) + 1));
  EXPECT_FALSE(c.next_due());
}

TEST(AuditCoalesce, AtMostKMaxKeysTrackedTheRestCountedByType) {
  Coalescer c;
  int64_t events = 0, counted = 0, tracked_new = 0;
  auto t = t0;
  // Ten new identities a second (the bucket's rate), each repeated every second after: they stay tracked (their windows
  // keep closing with repeats) until kMaxKeys are; past that a new one is only counted.
  std::vector<std::string> keys;
  for (int sec = 0; sec < 40; ++sec, t += 1s) {
    for (int i = 0; i < 10; ++i) {
      keys.push_back(std::to_string(sec * 10 + i));
      ++events;
      if (c.offer("net", keys.back(), denied("h", sec * 10 + i), t) == Coalescer::Offer::write) ++counted, ++tracked_new;
    }
    for (const auto& k : keys) ++events, c.offer("net", k, denied("h", 0), t);
    for (const auto& l : c.due(t, false)) counted += repeats_of(l);
  }
  for (const auto& l : c.due(t, true)) counted += repeats_of(l);
  EXPECT_EQ(counted, events);
  EXPECT_EQ(tracked_new, static_cast<int64_t>(Coalescer::kMaxKeys));
}

TEST(AuditCoalesce, TypeIsPartOfTheIdentityAndFieldsOfTheLastRepeatKept) {
  Coalescer c;
  EXPECT_EQ(c.offer("net", "k", denied("a", 1), t0), Coalescer::Offer::write);
  EXPECT_EQ(c.offer("explain", "k", toml::table{{"path", "/x"}}, t0), Coalescer::Offer::write);
  auto later = denied("a", 1);
  later.insert_or_assign("duration_ms", int64_t{7});
  EXPECT_EQ(c.offer("net", "k", later, t0 + 1ms), Coalescer::Offer::held);
  auto lines = c.due(t0, true);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].fields["duration_ms"].value<int64_t>(), 7);
  EXPECT_EQ(repeats_of(lines[0]), 1);
}

}  // namespace
