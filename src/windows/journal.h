// The restore journal's format (pure, portable; tests/unit/windows_journal_test.cc). Before cage
// changes a path's security descriptor it appends the old one here and flushes; a run that ends
// undoes its entries in reverse, and a later cage does the same for a journal whose run crashed.
#pragma once
#include <string>
#include <vector>

namespace cage::win {

struct JournalEntry {
  // dacl/label: put `saved` back as the path's DACL/label; remove_tree: delete the run's TEMP;
  // remove_aces: remove the explicit ACEs for the SID in `saved` from the path's DACL (and nothing
  // else: concurrent runs' ACEs and the user's edits stay); delete_profile: the AppContainer `path`;
  // label_ref: drop the holder in `saved` ("<pid> <started> <run>") from the path's Low-label count,
  // the last holder putting the label back (label_refs.h). `label` is what cage wrote before the count.
  enum class Kind { dacl, label, remove_tree, remove_aces, delete_profile, label_ref } kind = Kind::dacl;
  std::string path;   // Windows form, UTF-8 (delete_profile: the profile's name)
  std::string saved;  // SDDL of the descriptor part before the change, the SID for remove_aces, or ""
};

inline constexpr const char* kJournalHeader = "cage-restore-journal 1";

std::string format_journal_header();
std::string format_journal_entry(const JournalEntry& e);  // one line, '\n'-terminated
// Complete lines only: a line without its '\n' was being written when cage died, so its change was
// never made. A wrong header or a malformed line makes the whole journal unreadable (false): cage
// then leaves it in place and says so, rather than guess.
bool parse_journal(const std::string& text, std::vector<JournalEntry>& out);

}  // namespace cage::win
