// The restore journal's format: what a crashed run leaves behind must read back exactly, a torn last
// line must be dropped (its change never happened), and anything else odd must not be guessed at.
#include <gtest/gtest.h>

#include "windows/journal.h"

namespace cage::testing {
namespace {

using win::JournalEntry;

TEST(WindowsJournal, RoundTrips) {
  std::vector<JournalEntry> in = {
      {JournalEntry::Kind::dacl, "C:\\Users\\ann\\proj\\out",
       "D:AI(A;ID;FA;;;SY)(A;ID;FA;;;S-1-5-21-1-2-3-1001)"},
      {JournalEntry::Kind::label, "C:\\Users\\ann\\proj\\out", ""},
      {JournalEntry::Kind::remove_tree, "C:\\Users\\ann\\AppData\\Local\\cage\\tmp\\run-7-1", ""},
      {JournalEntry::Kind::dacl, "D:\\daten\\ü ñ", "D:P(A;;FA;;;WD)"},
      {JournalEntry::Kind::remove_aces, "C:\\Users\\ann\\proj", "S-1-15-2-1-2-3-4-5-6-7"},
      {JournalEntry::Kind::delete_profile, "cage.run-7-00000abc00000012", ""},
      {JournalEntry::Kind::label_ref, "C:\\Users\\ann\\proj\\out", "7 133000000000000000 7-00000abc00000012"},
  };
  std::string text = win::format_journal_header();
  for (const auto& e : in) text += win::format_journal_entry(e);
  std::vector<JournalEntry> out;
  ASSERT_TRUE(win::parse_journal(text, out));
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].kind, in[i].kind);
    EXPECT_EQ(out[i].path, in[i].path);
    EXPECT_EQ(out[i].saved, in[i].saved);
  }
}

TEST(WindowsJournal, TornLastLineIsDropped) {
  std::string text = win::format_journal_header() +
                     win::format_journal_entry({JournalEntry::Kind::dacl, "C:\\a", "D:(A;;FA;;;SY)"}) +
                     "label\tC:\\b\tS:(ML;;NW;;";
  std::vector<JournalEntry> out;
  ASSERT_TRUE(win::parse_journal(text, out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].path, "C:\\a");
  ASSERT_TRUE(win::parse_journal("", out));  // created, nothing written yet
  EXPECT_TRUE(out.empty());
}

TEST(WindowsJournal, MalformedIsRefused) {
  std::vector<JournalEntry> out;
  EXPECT_FALSE(win::parse_journal("something else\n", out));
  EXPECT_FALSE(win::parse_journal(win::format_journal_header() + "chmod\tC:\\a\tx\n", out));
  EXPECT_FALSE(win::parse_journal(win::format_journal_header() + "dacl\tC:\\a\n", out));
  EXPECT_FALSE(win::parse_journal(win::format_journal_header() + "dacl\t\tD:\n", out));
}

}  // namespace
}  // namespace cage::testing
