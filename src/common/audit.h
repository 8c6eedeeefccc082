// The audit log (--audit FILE|fd:N): JSON lines, one event each, in the format "cage.audit/1"
// (docs/schema/audit-event.schema.json). Events are queued by the supervisor and the proxy thread and
// written by a writer thread of their own, so a slow or full destination never stalls supervision,
// let alone the workload (a separate process). A failed write is remembered, reported on stderr and
// in the result, and signalled on failure_fd() for --audit-required.
#pragma once
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/audit_coalesce.h"
#include "common/error.h"
#include "common/report_options.h"
#include "common/toml.h"
#include "common/unique_fd.h"

namespace cage::audit {

inline constexpr const char* kAuditSchema = "cage.audit/1";
inline constexpr const char* kResultSchema = "cage.result/2";

// One line of compact JSON (no newline) for a table of strings, integers, floats, booleans, arrays
// and tables. Keys come out sorted (toml::table is ordered), so equal tables give equal text.
std::string to_json_line(const toml::table& t);
// "2024-05-01T12:00:00.123Z" (UTC, milliseconds).
std::string timestamp_now();
// 32 hex digits from getrandom(2) (arc4random_buf(3) on macOS).
std::string new_run_id();

// "FILE" (relative to cwd) or "fd:N". The audit log appends; the result truncates.
Result<UniqueFd> open_destination(const std::string& spec, const std::string& flag, bool append);
// Writes all of text, with SIGPIPE held off (a closed pipe is an error, not cage's death).
int write_all(int fd, const std::string& text);

// A record the sandbox could rewrite is no record: an --audit or --result FILE beneath a writable
// grant could be truncated or filled with forged events from inside. `grants` are the writable
// grants' (path, origin) pairs; `held_by` gives the file's real path and the holding grant's origin.
struct Held {
  std::string real, origin;
};
using Grants = std::vector<std::pair<std::string, std::string>>;
std::optional<Held> held_by(const std::string& path, const Grants& grants);
// "--audit FILE lies beneath --rw DIR" for the first record file inside a grant; "" when none is.
std::string record_inside(const Grants& grants, const std::string& audit, const std::string& result);

class Log {
 public:
  Log(UniqueFd fd, std::string run_id);
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;
  // Adds schema, type, time, run_id and labels to fields and queues the line. Never blocks on the destination.
  void emit(const std::string& type, toml::table fields);
  // A refusal that may repeat (audit_coalesce.h): written as emit() does when it is the first of its
  // identity `key`, else counted into a line with `repeats` written when its window closes.
  void emit_coalesced(const std::string& type, const std::string& key, toml::table fields);
  // Queues every pending count now (the run is over: they precede its exit event). close() does too.
  void flush_repeats();
  // Waits up to timeout_ms for the queue to drain, then stops the writer. False when the writer is
  // stuck in write(2) and was detached: the caller must then keep this object alive (leak it).
  bool close(int timeout_ms);
  // Waits up to timeout_ms until every queued line is written, then fsyncs a regular file (a pipe or
  // socket has nothing to sync). False, with failed() set, when the lines are not on disk by then.
  bool sync(int timeout_ms);
  // --label: added to every event from now on (known once the policy validated).
  void set_labels(toml::table labels);
  bool failed() const;
  std::string failure() const;  // "write: No space left on device"
  int failure_fd() const { return failure_event_.get(); }  // readable once failed() (eventfd, or a pipe)
  const std::string& run_id() const { return run_id_; }

 private:
  void writer();
  void queue_locked(const std::string& type, toml::table fields);  // under mu_
  void fail(const std::string& why);
  void signal_failure();
  UniqueFd fd_, failure_event_, failure_write_;  // failure_write_: the pipe's other end (not Linux)
  std::string run_id_;
  toml::table labels_;
  mutable std::mutex mu_;
  std::condition_variable cv_, drained_;
  std::deque<std::string> queue_;
  Coalescer coalescer_;
  size_t queued_bytes_ = 0;
  bool stop_ = false, failed_ = false, busy_ = false;
  std::string failure_;
  std::thread thread_;
};

// A run's --result and --audit destinations, opened before it starts (both backends' report
// sessions). An audit log that cannot be opened is an error with --audit-required, else a warning on
// stderr and a run without it (audit_ok false, audit_error the reason).
struct Sinks {
  UniqueFd result;
  std::unique_ptr<Log> log;
  bool audit_ok = true;
  std::string audit_error;
};
Result<Sinks> open_sinks(const ReportOptions& opts, const std::string& run_id);

}  // namespace cage::audit
