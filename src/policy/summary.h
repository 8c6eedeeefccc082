// The pieces of --dry-run's summary that every platform prints the same way (the Linux one in
// linux/render_summary.cc, macOS and Windows in their render.cc): aligned lists of paths with the
// flag or profile line that gave them, the environment's names, the limits. Pure text.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "policy/policy.h"

namespace cage::policy {

// Paths by section: "read-write:\n  PATH    # why\n...", sections in a fixed order, empty ones left
// out, every path of every section aligned on one column.
struct Listing {
  enum Section { rw, ro, tmpfs, hidden, count };
  struct Row {
    Section section;
    std::string path, why;
  };
  std::vector<Row> rows;
  void add(Section s, std::string path, std::string why) { rows.push_back({s, std::move(path), std::move(why)}); }
  std::string text() const;
};

// The grants of a policy as they were asked for (read-write, read-only, tmpfs, hidden).
std::string summary_grants(const Policy& p);
// "environment: N variables: NAME NAME ..." (values only in the whole plan).
std::string summary_environment(const std::vector<std::string>& env);
// A duration as --timeout takes it back, in its largest whole units: 300000 -> "5m", 90000 -> "1m30s",
// 1500 -> "1s500ms" (parse_duration_ms reads each of these as the same number of milliseconds).
std::string human_duration(uint64_t ms);
// "timeout 30s, memory 512 MiB, pids 64, cpu 0.5, nofile=256", or "none".
std::string summary_limits(const Limits& l);
// "stdout capped at 1 MiB, stderr capped at 4 KiB" (--max-output and friends), or empty.
std::string summary_output(const Limits& l);

}  // namespace cage::policy
