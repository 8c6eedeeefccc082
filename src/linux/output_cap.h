// Output caps (--max-output, --max-stdout, --max-stderr), supervisor side: the workload's capped
// stream is a pipe that cage reads and copies to the real stdout or stderr up to the cap; past it
// the bytes are read and dropped, and one marker line says how many. See output_cap.cc.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"
#include "policy/policy.h"

namespace cage::lx::output_cap {

// What a capped stream did, for the result (cage.result/2 "output").
struct StreamStats {
  std::string name;         // "stdout" or "stderr"
  uint64_t cap = 0;
  uint64_t written = 0;     // bytes passed through to the real stream (the marker not counted)
  uint64_t dropped = 0;     // bytes read past the cap and discarded
  std::string sha256;       // empty unless hashed (--result); of every byte the command wrote to the stream, dropped ones included
  bool broken = false;      // the real stream refused a write (its reader left): copying stopped
};

struct Stream;

class Pump {
 public:
  // Before clone: one pipe per capped stream. Refuses a run in which the workload would still hold
  // the capped destination through another of its standard descriptors (2>&1 with only stdout
  // capped, stdin opened on the same file): the cap would be a suggestion.
  // hash: compute each stream's SHA-256 (for --result; about 1 GiB/s with the SHA extensions, so
  // only when a record will keep it).
  static Result<std::unique_ptr<Pump>> prepare(const policy::Limits& limits, bool hash);
  ~Pump();
  // The write end the workload gets as fd 1 (stream 1) or fd 2 (stream 2), or -1 if not capped.
  int child_fd(int stream) const;
  // After clone: closes cage's copies of the write ends and starts copying in a thread of its own,
  // so a slow reader never holds up the supervisor's signals and --timeout.
  void start();
  // In the cloned child: drops the read ends, so that once cage stops reading (its reader left) the
  // command's writes fail as they would without a cap. No allocation.
  void close_in_child() const;
  // After the run: reads what is left, writes the marker lines, and returns each stream's counts.
  std::vector<StreamStats> finish();

 private:
  void run();
  std::vector<std::unique_ptr<Stream>> streams_;
  UniqueFd stop_;  // eventfd: the run has ended, read what is left and stop
  std::thread thread_;
};

// "cage: stdout truncated: 12345 bytes dropped past the 1M cap\n" (exact counts; pure).
std::string marker_line(const StreamStats& s);

}  // namespace cage::lx::output_cap
