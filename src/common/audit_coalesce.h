// Coalescing of repeated refusals in the audit log (--audit): a workload that retries a refused
// action in a loop would otherwise make cage write one line per try, outside the workload's limits
// (a disk filled, the supervisor's CPU spent). The first of each identity is written at once; its
// repeats are counted and written as one line of the same type carrying `repeats` when its window
// closes, and windows double while the repeats go on. Past the cap of identities or of new lines a
// second (a bucket), events are counted by type in a `suppressed` line. Nothing is lost: the sum over the
// lines of `repeats` (1 for a line without it) is the number of events. Pure; unit-tested by
// tests/unit/audit_coalesce_test.cc, end to end by tests/integration/net_denial_flood.sh.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/toml.h"

namespace cage::audit {

class Coalescer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kWindow{1000};      // a new identity's first window
  static constexpr std::chrono::milliseconds kMaxWindow{60000};  // doubled up to this while repeats go on
  static constexpr size_t kMaxKeys = 256;                        // identities tracked at once (memory)
  // First occurrences written: a burst of kNewBurst, then kNewPerSecond a second, in all types.
  static constexpr size_t kNewBurst = 100;
  static constexpr size_t kNewPerSecond = 10;

  enum class Offer {
    write,     // the first of its identity: write it now
    held,      // counted into a pending line
    held_new,  // counted into a pending line that did not exist before (its window ends sooner)
  };
  struct Line {
    std::string type;
    toml::table fields;
  };

  // `key` is the event's identity: what was refused (not its time, bytes or duration).
  Offer offer(const std::string& type, const std::string& key, const toml::table& fields, Clock::time_point now);
  // The lines whose window closed by `now` (every pending one when `all`: the run is over); an
  // identity whose window closed without repeats is forgotten, so its next event is written again.
  std::vector<Line> due(Clock::time_point now, bool all);
  // When the next window closes (none: nothing pending).
  std::optional<Clock::time_point> next_due() const;

 private:
  struct Entry {
    std::string type;     // the event's type, or for an overflow entry the type it counts
    bool overflow = false;
    toml::table last;     // the fields of the last repeat (its identity fields are the key's)
    uint64_t repeats = 0;
    Clock::time_point end;
    std::chrono::milliseconds window = kWindow;
  };
  std::map<std::string, Entry> entries_;  // ordered: lines come out in a stable order
  size_t keys_ = 0;                       // entries_ less the overflow ones
  bool take_token(Clock::time_point now);
  size_t tokens_ = kNewBurst;
  std::optional<Clock::time_point> refilled_;  // when the bucket last gained a token
};

}  // namespace cage::audit
