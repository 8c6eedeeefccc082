#include "common/deadline.h"

#include <algorithm>
#include <climits>

namespace cage {

Deadline::Deadline(int64_t now_ms, std::optional<uint64_t> timeout_ms) {
  if (timeout_ms) deadline_ = now_ms + static_cast<int64_t>(*timeout_ms);
}

Deadline::Step Deadline::due(int64_t now_ms) {
  if (deadline_ >= 0 && !timed_out_ && now_ms >= deadline_) {
    timed_out_ = true;
    kill_at_ = now_ms + kGraceMs;  // the grace counts from when SIGTERM is sent, not from the deadline
    return Step::terminate;
  }
  if (kill_at_ >= 0 && now_ms >= kill_at_) {
    kill_at_ = -1;
    return Step::kill;
  }
  return Step::none;
}

int Deadline::poll_ms(int64_t now_ms) const {
  int64_t next = kill_at_ >= 0 ? kill_at_ : timed_out_ ? -1 : deadline_;
  if (next < 0) return -1;
  // --timeout allows up to a year: more milliseconds than an int holds.
  return static_cast<int>(std::clamp<int64_t>(next - now_ms, 0, INT_MAX));
}

}  // namespace cage
