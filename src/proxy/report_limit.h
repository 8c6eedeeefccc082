// How often the default event sink (print_denials, loopback.cc) may write to the caller's stderr:
// a workload that retries a refused host in a loop (npm, apt, a health check) must not flood the
// terminal, yet the first refusal of each destination is always seen (issue 19 item 2). The audit
// log gets every event regardless. Pure; unit-tested by tests/unit/proxy_report_limit_test.cc.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>

namespace cage::proxy {

class ReportLimit {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kRepeat{10};  // the same destination and outcome: once per
  static constexpr size_t kBurst = 10;                // lines a second in all
  static constexpr size_t kKeys = 4096;               // destinations remembered (memory bound)

  // Whether a line for `key` (outcome and destination) is printed at `now`. When it is, `held`
  // is how many lines were held back since the last printed one (said on this line).
  bool admit(const std::string& key, Clock::time_point now, size_t& held) {
    held = 0;
    auto it = last_.find(key);
    if (it != last_.end() && now - it->second < kRepeat) return hold();
    if (now - second_ >= std::chrono::seconds(1)) {
      second_ = now;
      in_second_ = 0;
    }
    if (in_second_ >= kBurst) return hold();
    ++in_second_;
    if (last_.size() >= kKeys) last_.clear();  // forgetting only lets a line through again
    last_[key] = now;
    held = held_;
    held_ = 0;
    return true;
  }
  // The lines held back since the last printed one (said at the end of a run); resets the count.
  size_t take_held() { return std::exchange(held_, 0); }

 private:
  bool hold() {
    ++held_;
    return false;
  }
  std::unordered_map<std::string, Clock::time_point> last_;
  Clock::time_point second_{};
  size_t in_second_ = 0;
  size_t held_ = 0;
};

}  // namespace cage::proxy
