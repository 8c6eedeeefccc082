// label.cc: the Low label of --rw paths with concurrent runs (parent side). Each path's lock file in
// %LOCALAPPDATA%\cage\labels is opened with no sharing, so one cage at a time reads and rewrites the
// count; the decisions are label_refs.cc's (unit tested: windows_label_test.cc). A holder is alive
// while a process with its pid and its start time exists. Proof on Windows: `cage --self-test`;
// under Wine (no labels) the lock file is made and removed again (tests/cross/wine_smoke.sh).
#include "windows/mechanisms.h"

namespace cage::win {

namespace {

const char* const kLockRemedy = "another cage is changing this path's label; retry, or look at the lock file";

uint64_t ticks(const FILETIME& t) {
  return (static_cast<uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime;
}

bool holder_alive(const LabelHolder& h) {
  HANDLE raw = ::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, h.pid);
  // No such process: gone. Any other failure (another user's process, access denied): it may be the
  // holder, so it is kept; its label then stays until that process is gone.
  if (!raw) return ::GetLastError() != ERROR_INVALID_PARAMETER;
  UniqueHandle p(raw);
  FILETIME created{}, exited{}, kernel{}, user{};
  if (!::GetProcessTimes(p.get(), &created, &exited, &kernel, &user)) return true;
  DWORD code = 0;
  if (::GetExitCodeProcess(p.get(), &code) && code != STILL_ACTIVE)
    return false;                      // an exited one, still open
  return ticks(created) == h.started;  // else the pid was reused by a later process
}

// The lock: the path's state file opened unshared. The holder of a label is a whole run, the lock
// only the few calls that read and rewrite the count, so a wait here is short.
class LabelLock {
 public:
  static Result<LabelLock> open(const std::string& labels_dir, const std::string& path) {
    if (!create_dirs(labels_dir))
      return call_failed("CreateDirectoryW", ::GetLastError(), labels_dir,
                         "check that %LOCALAPPDATA% is writable");
    LabelLock l;
    l.file_ = labels_dir + "\\" + label_lock_name(path);
    for (int waited_ms = 0;; waited_ms += 20) {
      l.h_ = UniqueHandle(::CreateFileW(wide(l.file_).c_str(), GENERIC_READ | GENERIC_WRITE | DELETE, 0,
                                        nullptr, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr));
      if (l.h_) break;
      if (::GetLastError() != ERROR_SHARING_VIOLATION || waited_ms >= 30000)
        return call_failed("CreateFileW", ::GetLastError(), l.file_, kLockRemedy);
      ::Sleep(20);
    }
    std::string text;
    char buf[4096];
    DWORD n = 0;
    while (::ReadFile(l.h_.get(), buf, sizeof buf, &n, nullptr) && n > 0) text.append(buf, n);
    if (!parse_label_state(text, l.state_) || (l.state_ && !same_windows_path(l.state_->path, path)))
      return Error{ErrorClass::spawn_sandbox_unavailable, l.file_ + ": not a label lock file for " + path,
                   "look at it and delete it by hand (it names the label " + path + " had before cage)", path,
                   0};
    return l;
  }
  const std::optional<LabelState>& state() const { return state_; }
  // Rewrites the file with `next`, or deletes it (nullopt): marked for deletion through the unshared
  // handle, so no other cage can have it open and lose what it writes.
  bool finish(const std::optional<LabelState>& next) {
    if (!next) {
      FILE_DISPOSITION_INFO del{TRUE};
      return ::SetFileInformationByHandle(h_.get(), FileDispositionInfo, &del, sizeof del) != 0;
    }
    const std::string text = format_label_state(*next);
    DWORD n = 0;
    LARGE_INTEGER zero{};
    return ::SetFilePointerEx(h_.get(), zero, nullptr, FILE_BEGIN) && ::SetEndOfFile(h_.get()) &&
           ::WriteFile(h_.get(), text.data(), static_cast<DWORD>(text.size()), &n, nullptr) &&
           n == text.size() && ::FlushFileBuffers(h_.get());
  }
  const std::string& file() const { return file_; }

 private:
  LabelLock() = default;
  std::string file_;
  UniqueHandle h_;
  std::optional<LabelState> state_;
};

}  // namespace

LabelHolder this_run_holder(const std::string& run) {
  FILETIME created{}, exited{}, kernel{}, user{};
  ::GetProcessTimes(::GetCurrentProcess(), &created, &exited, &kernel, &user);
  return LabelHolder{::GetCurrentProcessId(), ticks(created), run};
}

Status acquire_low_label(HANDLE h, const AclChange& change, const std::string& labels_dir,
                         const LabelHolder& self) {
  auto lock = LabelLock::open(labels_dir, change.path);
  if (!lock) return lock.error();
  auto current = read_descriptor(h, JournalEntry::Kind::label, change.path);
  if (!current) {
    lock->finish(lock->state());  // unchanged (a file made just now, empty, is deleted)
    return current.error();
  }
  const LabelAcquire a = acquire_label(lock->state(), change.path, change.sddl, *current, self, holder_alive);
  // The count first, then the label: a crash in between leaves a holder whose label is not cage's,
  // which the next cage drops without writing anything.
  if (!lock->finish(a.next))
    return call_failed("WriteFile", ::GetLastError(), lock->file(), "check free space in %LOCALAPPDATA%");
  if (!a.set_label) return Ok{};
  return write_descriptor(h, JournalEntry::Kind::label, change.sddl, change.path);
}

bool release_low_label(const std::string& path, const std::string& holder, const std::string& labels_dir) {
  LabelHolder who;
  if (!parse_holder(holder, who)) return false;
  auto lock = LabelLock::open(labels_dir, path);
  if (!lock) return false;
  if (!lock->state()) return lock->finish(std::nullopt);  // the run died before it joined: nothing to undo
  LabelRelease r = release_label(lock->state(), who.run, std::nullopt, holder_alive);
  if (r.next) return lock->finish(r.next);  // live runs still hold the label: only the count changes
  // The last one out: what the label is now decides whether the saved one goes back.
  UniqueHandle h;
  if (::GetFileAttributesW(wide(path).c_str()) != INVALID_FILE_ATTRIBUTES) {
    auto opened = open_exact(path, READ_CONTROL | WRITE_OWNER, "");
    if (!opened) return false;  // now a link, or elsewhere: left for a look by hand (the journal stays)
    auto label = read_descriptor(opened->get(), JournalEntry::Kind::label, path);
    if (!label) return false;
    h = std::move(*opened);
    r = release_label(lock->state(), who.run, *label, holder_alive);
  }
  if (r.restore && !write_descriptor(h.get(), JournalEntry::Kind::label, r.restore_to, path)) return false;
  return lock->finish(r.next);
}

}  // namespace cage::win
