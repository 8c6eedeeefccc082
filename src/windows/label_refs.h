// The Low label of --rw paths shared by concurrent runs (pure, portable; tests/unit/windows_label_test.cc).
// A label, unlike an ACE, is one value per path: a run cannot add "its" label beside another's. So
// each path has a lock file in %LOCALAPPDATA%\cage\labels (named by the hash of its final path) that
// cage opens unshared -- one cage at a time reads and rewrites it -- holding the label the path had
// before cage set its Low one and the runs that need it (holders: pid, process start time, run id).
// The first live holder saves the label, the last one puts it back, and only if it is still the one
// cage set. A holder whose process is gone (or whose pid now names a process started at another
// time) is dropped by whoever opens the lock next, so a crashed run's entry cannot pin the label.
// The Win32 side: label.cc. Design: docs/windows.md.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cage::win {

struct LabelHolder {
  uint32_t pid = 0;
  uint64_t started = 0;  // the process's creation time (FILETIME, 100 ns units): tells a reused pid apart
  std::string run;       // the run's id ("<pid>-<nonce>"), which names its restore journal
};

struct LabelState {
  std::string path;      // the final path the lock is for (checked against the path being changed)
  std::string set;       // the label cage sets there ("S:(ML;OICI;NW;;;LW)")
  std::string original;  // the label before the first live holder set cage's ("" or "S:": none)
  std::vector<LabelHolder> holders;
};

inline constexpr const char* kLabelStateHeader = "cage-label-refs 1";

// "<pid> <started> <run>": a holder in the lock file and in the restore journal (label_ref entries).
std::string format_holder(const LabelHolder& h);
bool parse_holder(const std::string& text, LabelHolder& out);
std::string format_label_state(const LabelState& s);
// Empty text: no state (a lock file just created); a wrong header or line: false (left for a look by hand).
bool parse_label_state(const std::string& text, std::optional<LabelState>& out);
// %LOCALAPPDATA%\cage\restore -> %LOCALAPPDATA%\cage\labels: beside the journals, as private as they are.
std::string label_lock_dir(const std::string& journal_dir);
// The lock file's name for a final path: 64 hex digits of the SHA-256 of the path upper-cased (Windows
// compares names without regard to case), then ".lock".
std::string label_lock_name(const std::string& final_path);
// Whether `current` (the path's label as SDDL) is exactly the one cage sets, whatever SACL control
// flags ("S:AI(...)") Windows adds when it reads it back.
bool is_cage_label(const std::string& current, const std::string& set);
bool same_windows_path(const std::string& a, const std::string& b);

using HolderAlive = std::function<bool(const LabelHolder&)>;

struct LabelAcquire {
  LabelState next;         // written to the lock file before the label is changed
  bool set_label = false;  // the path's label is not cage's yet: set it
};
// `state`: the lock file's content (nullopt: none); `current`: the path's label now.
LabelAcquire acquire_label(const std::optional<LabelState>& state, const std::string& path,
                           const std::string& set, const std::string& current, const LabelHolder& self,
                           const HolderAlive& alive);

struct LabelRelease {
  std::optional<LabelState> next;  // nullopt: no live holder is left; the lock file is deleted
  bool restore = false;            // put `restore_to` back as the path's label
  std::string restore_to;
};
// `run`'s entries are dropped (all of them), and every dead holder's. `current`: the path's label now
// (nullopt: the path is gone, nothing to restore).
LabelRelease release_label(const std::optional<LabelState>& state, const std::string& run,
                           const std::optional<std::string>& current, const HolderAlive& alive);

}  // namespace cage::win
