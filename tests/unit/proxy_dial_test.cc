// Happy Eyeballs v2 (dial.h): the order a name's addresses are tried in and when each attempt
// starts, with time passed in. The sockets side is tests/integration/net_dual_stack.sh.
#include "proxy/dial.h"

#include <gtest/gtest.h>

using namespace cage::proxy;
using namespace std::chrono_literals;

namespace {

Address v4(uint8_t last) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, last}; }
Address v6(uint8_t last) { return Address{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last}; }

}  // namespace

TEST(ProxyDial, InterleavesFamiliesStartingWithTheResolversFirst) {
  EXPECT_EQ(dial_order({v6(1), v6(2), v6(3), v4(1), v4(2)}),
            (std::vector<Address>{v6(1), v4(1), v6(2), v4(2), v6(3)}));
  EXPECT_EQ(dial_order({v4(1), v4(2), v6(1)}), (std::vector<Address>{v4(1), v6(1), v4(2)}));
}

TEST(ProxyDial, OneFamilyKeepsTheResolversOrder) {
  EXPECT_EQ(dial_order({v4(3), v4(1), v4(2)}), (std::vector<Address>{v4(3), v4(1), v4(2)}));
  EXPECT_EQ(dial_order({v6(1)}), (std::vector<Address>{v6(1)}));
  EXPECT_TRUE(dial_order({}).empty());
}

TEST(ProxyDial, TheNextAttemptWaitsForTheDelay) {
  Dial::Clock::time_point t0{1s};
  Dial d(3);
  EXPECT_EQ(d.start(t0), 0u);
  EXPECT_EQ(d.start(t0), std::nullopt);  // the first attempt is still in flight
  EXPECT_EQ(d.wake_at(), t0 + kAttemptDelay);
  EXPECT_EQ(d.start(t0 + kAttemptDelay - 1ms), std::nullopt);
  EXPECT_EQ(d.start(t0 + kAttemptDelay), 1u);  // both now in flight: the first is not abandoned
  EXPECT_EQ(d.in_flight(), 2u);
  EXPECT_EQ(d.start(t0 + 2 * kAttemptDelay), 2u);
  EXPECT_EQ(d.start(t0 + 10s), std::nullopt);  // none left
  EXPECT_EQ(d.wake_at(), Dial::Clock::time_point::max());
  EXPECT_FALSE(d.exhausted());  // three attempts still in flight: one may yet connect
  EXPECT_EQ(d.started(), 3u);
}

TEST(ProxyDial, AFailureStartsTheNextAttemptAtOnce) {
  Dial::Clock::time_point t0{1s};
  Dial d(3);
  EXPECT_EQ(d.start(t0), 0u);
  d.failed();  // refused, unreachable: no need to wait out the delay
  EXPECT_EQ(d.start(t0 + 1ms), 1u);
  EXPECT_EQ(d.start(t0 + 2ms), std::nullopt);
  EXPECT_EQ(d.start(t0 + 1ms + kAttemptDelay), 2u);
  d.failed();  // the later one failed while the earlier one is still in flight
  EXPECT_EQ(d.in_flight(), 1u);
  EXPECT_FALSE(d.exhausted());
  d.failed();
  EXPECT_TRUE(d.exhausted());
}

TEST(ProxyDial, NoAddressIsExhaustedAtOnce) {
  Dial d(0);
  EXPECT_EQ(d.start(Dial::Clock::time_point{1s}), std::nullopt);
  EXPECT_TRUE(d.exhausted());
}
