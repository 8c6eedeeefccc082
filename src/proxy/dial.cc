// Happy Eyeballs v2's order and schedule (dial.h). Pure: no sockets, no clock of its own.
#include "proxy/dial.h"

#include <algorithm>

namespace cage::proxy {

bool is_ipv4(const Address& a) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::equal(a.begin(), a.begin() + 12, kMapped);
}

std::vector<Address> dial_order(const std::vector<Address>& sorted) {
  if (sorted.empty()) return {};
  const bool first_v4 = is_ipv4(sorted.front());
  std::vector<Address> first, second, out;
  for (const auto& a : sorted) (is_ipv4(a) == first_v4 ? first : second).push_back(a);
  out.reserve(sorted.size());
  for (size_t i = 0; i < std::max(first.size(), second.size()); ++i) {
    if (i < first.size()) out.push_back(first[i]);
    if (i < second.size()) out.push_back(second[i]);
  }
  return out;
}

std::optional<size_t> Dial::start(Clock::time_point now) {
  if (next_ == count_) return std::nullopt;
  if (now < next_at_) return std::nullopt;
  ++in_flight_;
  next_at_ = now + kAttemptDelay;
  return next_++;
}

void Dial::failed() {
  if (in_flight_ > 0) --in_flight_;
  next_at_ = Clock::time_point::min();  // RFC 8305 section 5: a failure starts the next one at once
}

Dial::Clock::time_point Dial::wake_at() const {
  return next_ == count_ ? Clock::time_point::max() : next_at_;
}

}  // namespace cage::proxy
