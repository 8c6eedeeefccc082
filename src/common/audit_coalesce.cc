// The audit log's coalescer (audit_coalesce.h). Pure: the caller passes the time and writes the
// lines; audit::Log holds one under its lock. Tests: tests/unit/audit_coalesce_test.cc.
#include "common/audit_coalesce.h"

#include <algorithm>

namespace cage::audit {

Coalescer::Offer Coalescer::offer(const std::string& type, const std::string& key, const toml::table& fields,
                                  Clock::time_point now) {
  // The type is part of the identity: a key of one type never counts another's events.
  const std::string id = type + '\0' + key;
  if (auto it = entries_.find(id); it != entries_.end()) {
    it->second.last = fields;
    ++it->second.repeats;
    return Offer::held;
  }
  if (keys_ < kMaxKeys && take_token(now)) {
    ++keys_;
    entries_.emplace(id, Entry{type, false, {}, 0, now + kWindow, kWindow});
    return Offer::write;
  }
  // Too many identities at once, or too many new ones this second: counted by type only. The
  // overflow key starts with '\1', which no type+'\0' key does (types are plain words).
  auto [it, fresh] = entries_.try_emplace(std::string(1, '\1') + type, Entry{type, true, {}, 0, now + kWindow, kWindow});
  ++it->second.repeats;
  return fresh ? Offer::held_new : Offer::held;
}

bool Coalescer::take_token(Clock::time_point now) {
  constexpr auto kEvery = std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(1)) / kNewPerSecond;
  if (!refilled_ || tokens_ == kNewBurst) refilled_ = now;  // a full bucket gains nothing while it waits
  if (auto gained = static_cast<size_t>((now - *refilled_) / kEvery); gained > 0) {
    tokens_ = std::min(kNewBurst, tokens_ + gained);
    *refilled_ += kEvery * gained;
  }
  if (tokens_ == 0) return false;
  --tokens_;
  return true;
}

std::vector<Coalescer::Line> Coalescer::due(Clock::time_point now, bool all) {
  std::vector<Line> lines;
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = it->second;
    if (!all && e.end > now) {
      ++it;
      continue;
    }
    if (e.repeats) {
      if (e.overflow) {
        lines.push_back({"suppressed", toml::table{{"event", e.type}, {"repeats", static_cast<int64_t>(e.repeats)}}});
      } else {
        toml::table f = e.last;
        f.insert_or_assign("repeats", static_cast<int64_t>(e.repeats));
        lines.push_back({e.type, std::move(f)});
      }
    }
    if (e.repeats && !all) {
      // Still repeating: the next line waits twice as long (a flood of hours costs a line a minute).
      e.repeats = 0;
      e.window = std::min(e.window * 2, std::chrono::milliseconds(kMaxWindow));
      e.end = now + e.window;
      ++it;
    } else {
      if (!e.overflow) --keys_;
      it = entries_.erase(it);
    }
  }
  return lines;
}

std::optional<Coalescer::Clock::time_point> Coalescer::next_due() const {
  std::optional<Clock::time_point> first;
  for (const auto& [id, e] : entries_)
    if (!first || e.end < *first) first = e.end;
  return first;
}

}  // namespace cage::audit
