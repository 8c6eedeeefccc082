// What names a run and who runs it: --label KEY=VALUE, --run-id, --scratch NAME and --uid. Pure:
// each bad value is an error naming it. Labels and the run id go to the audit log, the result and
// --json-errors, which outside tools parse, so their alphabet is small and they hold no controls.
// Proved by tests/unit/identity_test.cc and tests/integration/run_labels.sh.
#include <cstdlib>
#include <set>

#include "policy/policy.h"

namespace cage::policy {

namespace {

constexpr size_t kMaxLabels = 32, kMaxKey = 63, kMaxLabelValue = 256, kMaxRunId = 64, kMaxScratchName = 64;
constexpr uint32_t kNobody = 65534;

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// A letter or digit, then letters, digits, '.', '_' and '-': never "", ".", ".." or a path.
bool word(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max || s[0] == '.' || s[0] == '_' || s[0] == '-') return false;
  for (char c : s)
    if (!word_char(c)) return false;
  return true;
}

std::string where(const Value& v) { return v.origin + " " + v.text; }

Status add_labels(const PolicyInput& in, Policy& p) {
  std::set<std::string> seen;
  for (const auto& v : in.labels) {
    const auto eq = v.text.find('=');
    if (eq == std::string::npos) return invalid(where(v), "expected KEY=VALUE", "e.g. --label team=infra");
    std::string key = v.text.substr(0, eq), value = v.text.substr(eq + 1);
    if (!word(key, kMaxKey))
      return invalid(where(v), "'" + key + "' is not a label key",
                     "a letter or digit, then letters, digits, '.', '_' or '-'; at most 63");
    if (value.size() > kMaxLabelValue) return invalid(where(v), "the value is longer than 256 bytes");
    for (unsigned char c : value)
      if (c < 0x20 || c == 0x7f) return invalid(where(v), "the value holds a control character");
    if (!seen.insert(key).second)
      return invalid(where(v), "label '" + key + "' is given twice", "give each key once");
    p.labels.emplace_back(std::move(key), std::move(value));
  }
  if (p.labels.size() > kMaxLabels) return invalid(where(in.labels.back()), "more than 32 labels");
  return Ok{};
}

bool parse_id(const std::string& s, uint32_t& out) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  unsigned long long n = std::strtoull(s.c_str(), nullptr, 10);
  if (n >= 4294967295ull) return false;  // (uid_t)-1 means "unchanged" to the kernel
  out = static_cast<uint32_t>(n);
  return true;
}

Status add_run_as(const Value& v, Policy& p) {
  RunAs r{kNobody, kNobody, where(v)};
  if (v.text != "nobody") {
    const auto colon = v.text.find(':');
    if (!parse_id(v.text.substr(0, colon), r.uid) ||
        (colon != std::string::npos && !parse_id(v.text.substr(colon + 1), r.gid)))
      return invalid(where(v), "expected nobody, UID or UID:GID (numbers below 4294967295)", "e.g. --uid nobody");
    if (colon == std::string::npos) r.gid = r.uid;
  }
  // uid 0 inside gets every capability back on each execve (the kernel's rule for root), which
  // cage's whole design avoids handing out on request.
  if (r.uid == 0 || r.gid == 0)
    return invalid(where(v), "the workload would be root inside its namespace", "use nobody or another id");
  p.run_as = r;
  return Ok{};
}

}  // namespace

bool valid_run_id(std::string_view id) { return word(id, kMaxRunId); }

bool valid_scratch_name(std::string_view name) { return word(name, kMaxScratchName); }

std::pair<std::string, std::string> scratch_location(const Context& ctx) {
  for (const auto& [k, v] : ctx.environ)
    if (k == "XDG_STATE_HOME" && !v.empty() && v[0] == '/') return {lexically_clean(v), "cage/scratch"};
  if (ctx.home.empty() || ctx.home[0] != '/') return {};
  return {lexically_clean(ctx.home), ".local/state/cage/scratch"};
}

std::string scratch_root(const Context& ctx) {
  auto [base, rel] = scratch_location(ctx);
  return base.empty() ? "" : (base == "/" ? "" : base) + "/" + rel;
}

Status validate_identity(const PolicyInput& in, const Context& ctx, Policy& p) {
  if (auto s = add_labels(in, p); !s) return s;
  if (in.run_id) {
    if (!valid_run_id(in.run_id->text))
      return invalid(where(*in.run_id), "not a run id",
                     "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
    p.run_id = in.run_id->text;
  }
  if (in.scratch) {
    const auto& v = *in.scratch;
    if (!valid_scratch_name(v.text))
      return invalid(where(v), "not a scratch name",
                     "a letter or digit, then letters, digits, '.', '_' or '-'; at most 64 (no '/')");
    auto [base, rel] = scratch_location(ctx);
    if (base.empty())
      return invalid(where(v), "no directory to keep scratch state in ($HOME and $XDG_STATE_HOME are unset)",
                     "set HOME");
    p.scratch = Scratch{v.text, scratch_root(ctx) + "/" + v.text, where(v), base, rel + "/" + v.text};
  }
  if (in.uid)
    if (auto s = add_run_as(*in.uid, p); !s) return s;
  return Ok{};
}

}  // namespace cage::policy
