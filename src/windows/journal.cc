// The restore journal's line format: "<kind>\t<path>\t<saved SDDL>". Windows paths cannot hold tabs
// or line breaks (control characters are invalid in names), and SDDL has none either.
#include "windows/journal.h"

namespace cage::win {

namespace {

const char* name_of(JournalEntry::Kind k) {
  switch (k) {
    case JournalEntry::Kind::dacl:
      return "dacl";
    case JournalEntry::Kind::label:
      return "label";
    case JournalEntry::Kind::remove_tree:
      return "remove_tree";
    case JournalEntry::Kind::remove_aces:
      return "remove_aces";
    case JournalEntry::Kind::delete_profile:
      return "delete_profile";
    case JournalEntry::Kind::label_ref:
      return "label_ref";
  }
  return "?";
}

bool kind_of(const std::string& s, JournalEntry::Kind& k) {
  for (auto c : {JournalEntry::Kind::dacl, JournalEntry::Kind::label, JournalEntry::Kind::remove_tree,
                 JournalEntry::Kind::remove_aces, JournalEntry::Kind::delete_profile,
                 JournalEntry::Kind::label_ref})
    if (s == name_of(c)) {
      k = c;
      return true;
    }
  return false;
}

}  // namespace

std::string format_journal_header() {
  return std::string(kJournalHeader) + "\n";
}

std::string format_journal_entry(const JournalEntry& e) {
  return std::string(name_of(e.kind)) + "\t" + e.path + "\t" + e.saved + "\n";
}

bool parse_journal(const std::string& text, std::vector<JournalEntry>& out) {
  out.clear();
  size_t pos = 0;
  bool header = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // torn last line: its change never happened
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!header) {
      if (line != kJournalHeader) return false;
      header = true;
      continue;
    }
    size_t t1 = line.find('\t'), t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    JournalEntry e;
    if (t2 == std::string::npos || !kind_of(line.substr(0, t1), e.kind)) return false;
    e.path = line.substr(t1 + 1, t2 - t1 - 1);
    e.saved = line.substr(t2 + 1);
    if (e.path.empty() || e.saved.find('\t') != std::string::npos) return false;
    out.push_back(std::move(e));
  }
  return header || text.empty();
}

}  // namespace cage::win
