// Shared lines of --dry-run's summary (summary.h).
#include "policy/summary.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace cage::policy {

namespace {

std::string human_bytes(uint64_t b) {
  const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && b >= 1024 && b % 1024 == 0) b /= 1024, ++u;
  return std::to_string(b) + " " + units[u];
}

}  // namespace

std::string human_duration(uint64_t ms) {
  struct Unit {
    uint64_t ms;
    const char* name;
  };
  const Unit units[] = {{3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
  std::string out;
  for (const auto& u : units)
    if (ms >= u.ms) {
      out += std::to_string(ms / u.ms) + u.name;
      ms %= u.ms;
    }
  return out.empty() ? "0ms" : out;
}

std::string Listing::text() const {
  const char* const titles[] = {"read-write:", "read-only:", "empty tmpfs (private, gone after the run):", "hidden:"};
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.path.size());
  std::string out;
  for (int s = 0; s < count; ++s) {
    bool first = true;
    for (const auto& r : rows) {
      if (r.section != s) continue;
      if (first) out += std::string(titles[s]) + "\n";
      first = false;
      out += "  " + r.path + std::string(width - r.path.size() + 4, ' ') + "# " + r.why + "\n";
    }
  }
  return out;
}

std::string summary_grants(const Policy& p) {
  Listing l;
  for (const auto& g : p.rw) l.add(Listing::rw, g.path, g.origin);
  for (const auto& g : p.ro) l.add(Listing::ro, g.path, g.origin);
  for (const auto& g : p.tmpfs) l.add(Listing::tmpfs, g.path, g.origin);
  for (const auto& g : p.hide) l.add(Listing::hidden, g.path, g.origin);
  return l.text();
}

std::string summary_environment(const std::vector<std::string>& env) {
  std::string out = "environment: " + std::to_string(env.size()) + " variables:";
  for (const auto& e : env) out += " " + e.substr(0, e.find('='));
  return out + "\n";
}

std::string summary_output(const Limits& l) {
  std::string s;
  if (l.max_stdout) s += "stdout capped at " + human_bytes(*l.max_stdout);
  if (l.max_stderr) s += (s.empty() ? "" : ", ") + std::string("stderr capped at ") + human_bytes(*l.max_stderr);
  return s;
}

std::string summary_limits(const Limits& l) {
  std::string s;
  auto add = [&s](const std::string& x) { s += (s.empty() ? "" : ", ") + x; };
  if (l.timeout_ms) add("timeout " + human_duration(*l.timeout_ms));
  if (l.memory_bytes) add("memory " + human_bytes(*l.memory_bytes));
  if (l.pids) add("pids " + std::to_string(*l.pids));
  if (l.max_stdout || l.max_stderr) add(summary_output(l));
  if (l.tmpfs_bytes) add("tmpfs " + human_bytes(*l.tmpfs_bytes) + " each");
  if (l.cpu) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *l.cpu);
    add(std::string("cpu ") + buf);
  }
  for (const auto& r : l.rlimits)
    add(r.name + "=" + (r.soft == UINT64_MAX ? std::string("unlimited") : std::to_string(r.soft)) +
        (r.hard == r.soft ? "" : ":" + (r.hard == UINT64_MAX ? std::string("unlimited") : std::to_string(r.hard))));
  return s.empty() ? "none" : s;
}

}  // namespace cage::policy
