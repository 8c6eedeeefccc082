// The --timeout sequence shared by the Linux and macOS supervisors (common/deadline.h): when SIGTERM
// and SIGKILL are due and how long a poll may sleep meanwhile. The signals themselves reach real
// processes in tests/integration/exit_notes.sh and tests/unit/macos_execute_test.cc.
#include "common/deadline.h"

#include <gtest/gtest.h>

#include <climits>

namespace cage {
namespace {

using Step = Deadline::Step;

TEST(Deadline, WithoutATimeoutNothingIsEverDue) {
  Deadline d(1000, std::nullopt);
  EXPECT_EQ(d.poll_ms(1000), -1);
  EXPECT_EQ(d.due(1000), Step::none);
  EXPECT_EQ(d.due(INT64_MAX / 2), Step::none);
  EXPECT_FALSE(d.timed_out());
}

TEST(Deadline, PollSleepsUntilTheDeadlineAndNoLonger) {
  Deadline d(1000, 300);
  EXPECT_EQ(d.poll_ms(1000), 300);
  EXPECT_EQ(d.poll_ms(1250), 50);
  EXPECT_EQ(d.poll_ms(1400), 0);  // overdue: look at once
  EXPECT_EQ(d.due(1299), Step::none);
  EXPECT_FALSE(d.timed_out());
}

TEST(Deadline, TermAtTheDeadlineThenKillAfterTheGraceCountedFromTheTerm) {
  Deadline d(0, 300);
  EXPECT_EQ(d.due(310), Step::terminate);  // a late wake-up: the grace starts at 310, not 300
  EXPECT_TRUE(d.timed_out());
  EXPECT_EQ(d.poll_ms(310), Deadline::kGraceMs);
  EXPECT_EQ(d.due(310 + Deadline::kGraceMs - 1), Step::none);
  EXPECT_EQ(d.poll_ms(310 + Deadline::kGraceMs - 1), 1);
  EXPECT_EQ(d.due(310 + Deadline::kGraceMs), Step::kill);
}

TEST(Deadline, EachStepIsDueOnceAndNothingIsPendingAfterTheKill) {
  Deadline d(0, 10);
  EXPECT_EQ(d.due(10), Step::terminate);
  EXPECT_EQ(d.due(11), Step::none);
  EXPECT_EQ(d.due(10 + Deadline::kGraceMs), Step::kill);
  EXPECT_EQ(d.due(20 + Deadline::kGraceMs), Step::none);
  EXPECT_EQ(d.poll_ms(20 + Deadline::kGraceMs), -1);  // wait for the exit, not a busy loop
  EXPECT_TRUE(d.timed_out());
}

TEST(Deadline, AYearLongTimeoutFitsPollsInt) {
  Deadline d(0, 365ULL * 24 * 3600 * 1000);
  EXPECT_EQ(d.poll_ms(0), INT_MAX);
  EXPECT_EQ(d.due(1), Step::none);
}

}  // namespace
}  // namespace cage
