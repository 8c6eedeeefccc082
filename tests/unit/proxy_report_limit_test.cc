// ReportLimit (report_limit.h): the first refusal of each destination is printed, repeats of it are
// held back for kRepeat, at most kBurst lines a second pass, and the held-back count is said.
#include "proxy/report_limit.h"

#include <gtest/gtest.h>

using cage::proxy::ReportLimit;

namespace {

TEST(ProxyReportLimit, FirstOfEachDestinationThenRepeatsHeldBack) {
  ReportLimit l;
  auto t0 = ReportLimit::Clock::time_point{} + std::chrono::hours(1);
  size_t held = 0;
  EXPECT_TRUE(l.admit("denied evil.com:443 403", t0, held));
  EXPECT_EQ(held, 0u);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(l.admit("denied evil.com:443 403", t0 + std::chrono::seconds(5), held));
  // Another destination is its own line, and says what was held back.
  EXPECT_TRUE(l.admit("denied other.com:443 403", t0 + std::chrono::seconds(5), held));
  EXPECT_EQ(held, 100u);
  // The same destination again once kRepeat has passed.
  EXPECT_TRUE(l.admit("denied evil.com:443 403", t0 + ReportLimit::kRepeat, held));
  EXPECT_EQ(held, 0u);
}

TEST(ProxyReportLimit, AtMostABurstASecond) {
  ReportLimit l;
  auto t0 = ReportLimit::Clock::time_point{} + std::chrono::hours(1);
  size_t held = 0, printed = 0;
  for (int i = 0; i < 50; ++i) printed += l.admit("denied h" + std::to_string(i) + ":443 403", t0, held);
  EXPECT_EQ(printed, ReportLimit::kBurst);
  EXPECT_TRUE(l.admit("denied late:443 403", t0 + std::chrono::seconds(1), held));
  EXPECT_EQ(held, 50u - ReportLimit::kBurst);
}

}  // namespace
