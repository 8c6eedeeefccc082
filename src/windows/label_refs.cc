// The reference count of the Low label of --rw paths (see label_refs.h). File format, one item a
// line: the header, "path\t<final path>", "set\t<SDDL>", "original\t<SDDL>", then "holder\t<pid>
// <started> <run>" per run. Paths and SDDL hold no tab or line break.
#include "windows/label_refs.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "common/sha256.h"

namespace cage::win {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// "S:AI(ML;OICI;NW;;;LW)" -> "(ML;OICI;NW;;;LW)": the ACEs, without the SACL's control flags.
std::string label_aces(const std::string& sddl) {
  if (sddl.rfind("S:", 0) != 0) return sddl;
  size_t open = sddl.find('(');
  return open == std::string::npos ? std::string() : sddl.substr(open);
}

std::vector<LabelHolder> live_holders(const std::vector<LabelHolder>& holders, const std::string& drop,
                                      const HolderAlive& alive) {
  std::vector<LabelHolder> out;
  for (const auto& h : holders)
    if (h.run != drop && alive(h)) out.push_back(h);
  return out;
}

}  // namespace

std::string format_holder(const LabelHolder& h) {
  return std::to_string(h.pid) + " " + std::to_string(h.started) + " " + h.run;
}

bool parse_holder(const std::string& text, LabelHolder& out) {
  size_t a = text.find(' '), b = a == std::string::npos ? a : text.find(' ', a + 1);
  if (b == std::string::npos || a == 0 || b == a + 1 || b + 1 >= text.size()) return false;
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 20 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string pid = text.substr(0, a), started = text.substr(a + 1, b - a - 1);
  out.run = text.substr(b + 1);
  if (!digits(pid) || !digits(started) || pid.size() > 10 ||
      out.run.find_first_of(" \t") != std::string::npos)
    return false;
  try {  // 20 digits may exceed 64 bits: stoull throws
    const unsigned long long p = std::stoull(pid);
    if (p > 0xffffffffull) return false;
    out.pid = static_cast<uint32_t>(p);
    out.started = std::stoull(started);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

std::string format_label_state(const LabelState& s) {
  std::string out = std::string(kLabelStateHeader) + "\npath\t" + s.path + "\nset\t" + s.set +
                    "\noriginal\t" + s.original + "\n";
  for (const auto& h : s.holders) out += "holder\t" + format_holder(h) + "\n";
  return out;
}

bool parse_label_state(const std::string& text, std::optional<LabelState>& out) {
  out.reset();
  if (text.empty()) return true;
  LabelState s;
  size_t pos = 0;
  int line_no = 0;
  bool have_path = false, have_set = false, have_original = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return false;  // cage writes whole lines and flushes: a torn one is not its
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line_no++ == 0) {
      if (line != kLabelStateHeader) return false;
      continue;
    }
    size_t tab = line.find('\t');
    if (tab == std::string::npos) return false;
    const std::string key = line.substr(0, tab), value = line.substr(tab + 1);
    if (value.find('\t') != std::string::npos) return false;
    if (key == "path" && !have_path) {
      s.path = value;
      have_path = !value.empty();
    } else if (key == "set" && !have_set) {
      s.set = value;
      have_set = !value.empty();
    } else if (key == "original" && !have_original) {
      s.original = value;
      have_original = true;
    } else if (key == "holder") {
      LabelHolder h;
      if (!parse_holder(value, h)) return false;
      s.holders.push_back(std::move(h));
    } else {
      return false;
    }
  }
  if (!have_path || !have_set || !have_original) return false;
  out = std::move(s);
  return true;
}

std::string label_lock_dir(const std::string& journal_dir) {
  return journal_dir.substr(0, journal_dir.rfind('\\')) + "\\labels";
}

std::string label_lock_name(const std::string& final_path) {
  std::string p = upper(final_path);
  while (p.size() > 3 && p.back() == '\\') p.pop_back();
  return sha256_hex(p) + ".lock";
}

bool is_cage_label(const std::string& current, const std::string& set) {
  return !label_aces(set).empty() && label_aces(current) == label_aces(set);
}

bool same_windows_path(const std::string& a, const std::string& b) {
  std::string x = upper(a), y = upper(b);
  for (auto* s : {&x, &y})
    while (s->size() > 3 && s->back() == '\\') s->pop_back();
  return x == y;
}

LabelAcquire acquire_label(const std::optional<LabelState>& state, const std::string& path,
                           const std::string& set, const std::string& current, const LabelHolder& self,
                           const HolderAlive& alive) {
  LabelAcquire a;
  std::vector<LabelHolder> live =
      state ? live_holders(state->holders, self.run, alive) : std::vector<LabelHolder>{};
  a.next.path = path;
  a.next.set = set;
  if (!live.empty())
    a.next.original = state->original;  // a live run saved it; what is there now is cage's
  else if (state && is_cage_label(current, set))
    a.next.original = state->original;  // the holders crashed: the label is still theirs, the original saved
  else
    a.next.original = current;  // first, or the label was changed by hand since: that is the original now
  a.next.holders = std::move(live);
  a.next.holders.push_back(self);
  a.set_label = !is_cage_label(current, set);
  return a;
}

LabelRelease release_label(const std::optional<LabelState>& state, const std::string& run,
                           const std::optional<std::string>& current, const HolderAlive& alive) {
  LabelRelease r;
  if (!state) return r;
  std::vector<LabelHolder> live = live_holders(state->holders, run, alive);
  if (!live.empty()) {
    r.next = *state;
    r.next->holders = std::move(live);
    return r;
  }
  // The last one out: put the original back, unless someone else changed the label meanwhile.
  r.restore = current && is_cage_label(*current, state->set) && !is_cage_label(state->original, state->set);
  r.restore_to = state->original;
  return r;
}

}  // namespace cage::win
