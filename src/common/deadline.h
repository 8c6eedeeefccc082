// The --timeout sequence both POSIX supervisors follow (linux/execute.cc, macos/execute.cc): at the
// deadline the workload is asked to end (SIGTERM); kGraceMs later it is ended (SIGKILL). Pure: the
// caller reads its own monotonic clock, waits for events at most poll_ms(), and sends what due()
// returns. Tested by tests/unit/deadline_test.cc; end to end by tests/integration/exit_notes.sh and
// tests/escape/outlive.sh.
#pragma once
#include <cstdint>
#include <optional>

namespace cage {

class Deadline {
 public:
  static constexpr int64_t kGraceMs = 5000;
  enum class Step { none, terminate, kill };

  // Without a timeout nothing is ever due.
  Deadline(int64_t now_ms, std::optional<uint64_t> timeout_ms);

  // The step due at now_ms, each at most once and in order: terminate once the deadline has passed,
  // kill kGraceMs after terminate was returned.
  Step due(int64_t now_ms);
  // How long the caller may wait for events before due() has a step: -1 when none is pending (no
  // timeout, or the kill is already sent), else 0 to INT_MAX (poll's range).
  int poll_ms(int64_t now_ms) const;
  // The deadline has passed: the run ends with exit_status::kTimedOut whatever the workload does.
  bool timed_out() const { return timed_out_; }

 private:
  int64_t deadline_ = -1, kill_at_ = -1;  // -1: none
  bool timed_out_ = false;
};

}  // namespace cage
