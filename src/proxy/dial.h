// Happy Eyeballs v2 (RFC 8305) for the proxy's upstream connects, as pure decisions: the order the
// addresses of a name are tried in, and when the next attempt starts. server.cc owns the sockets;
// every address reaching here has passed Allowlist::screen. Proven by tests/unit/proxy_dial_test.cc
// and tests/integration/net_dual_stack.sh (an unreachable IPv6 address first, a working IPv4 one).
#pragma once
#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "proxy/allowlist.h"

namespace cage::proxy {

// RFC 8305 section 5: the recommended Connection Attempt Delay (its bounds are 100 ms and 2 s).
inline constexpr std::chrono::milliseconds kAttemptDelay{250};

bool is_ipv4(const Address& a);  // held v4-mapped (allowlist.h)

// RFC 8305 section 4: getaddrinfo has already sorted by RFC 6724 (the preferred family first);
// the families are interleaved from there, one address of each in turn, so one unreachable family
// costs a single Connection Attempt Delay, not one per address. Stable within a family.
std::vector<Address> dial_order(const std::vector<Address>& sorted);

// The attempts of one connection: at most one starts per kAttemptDelay, the next one at once when
// every started attempt has failed; the first to connect wins (the caller closes the rest). Time
// is passed in, so the schedule is tested without a clock.
class Dial {
 public:
  using Clock = std::chrono::steady_clock;
  Dial() = default;
  explicit Dial(size_t addresses) : count_(addresses) {}

  // The index of the address to try now, or nullopt (none left, or the delay has not passed).
  std::optional<size_t> start(Clock::time_point now);
  void failed();  // a started attempt ended without a connection
  bool exhausted() const { return next_ == count_ && in_flight_ == 0; }
  // When start() will next have something to return; time_point::max() when never by itself.
  Clock::time_point wake_at() const;
  size_t in_flight() const { return in_flight_; }
  size_t started() const { return next_; }  // addresses 0 .. started()-1 have been tried

 private:
  size_t count_ = 0, next_ = 0, in_flight_ = 0;
  Clock::time_point next_at_ = Clock::time_point::min();
};

}  // namespace cage::proxy
