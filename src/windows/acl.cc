// acl.cc: the security-descriptor changes for grants and the run's TEMP (parent side), each written
// to the restore journal before it is made, undone in reverse when the run ends, and undone by the
// next cage after a crash (restore_orphaned_journals). The journal format: journal.cc and its test;
// denied and allowed writes on a real host: `cage --self-test`.

#include <algorithm>

#include "windows/mechanisms.h"
// After <windows.h> (mechanisms.h): these headers need its macros.
#include <aclapi.h>
#include <sddl.h>

namespace cage::win {

namespace {

const std::string kRemedy =
    "check that you own the path (changing its label needs WRITE_OWNER), or drop the grant";

std::string replace_user(std::string sddl, const std::string& sid) {
  for (size_t p; (p = sddl.find("<USER>")) != std::string::npos;) sddl.replace(p, 6, sid);
  return sddl;
}

bool create_dirs(const std::string& dir) {
  std::wstring w = wide(dir);
  for (size_t i = 3; i <= w.size(); ++i) {  // past "C:\"
    if (i != w.size() && w[i] != L'\\') continue;
    std::wstring part = w.substr(0, i);
    if (!::CreateDirectoryW(part.c_str(), nullptr) && ::GetLastError() != ERROR_ALREADY_EXISTS) return false;
  }
  return true;
}

SECURITY_INFORMATION info_of(JournalEntry::Kind k) {
  return k == JournalEntry::Kind::label ? LABEL_SECURITY_INFORMATION : DACL_SECURITY_INFORMATION;
}

Result<std::string> read_descriptor(const std::string& path, JournalEntry::Kind kind) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  DWORD rc = ::GetNamedSecurityInfoW(wide(path).c_str(), SE_FILE_OBJECT, info_of(kind), nullptr, nullptr,
                                     nullptr, nullptr, &sd);
  if (rc != ERROR_SUCCESS) return call_failed("GetNamedSecurityInfoW", rc, path, kRemedy);
  LocalFreer free_sd(sd);
  wchar_t* text = nullptr;
  if (!::ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, SDDL_REVISION_1, info_of(kind), &text,
                                                              nullptr))
    return call_failed("ConvertSecurityDescriptorToStringSecurityDescriptorW", ::GetLastError(), path,
                       kRemedy);
  LocalFreer free_text(text);
  return narrow(text);
}

// Sets the DACL or the label of `path` to what `sddl` holds ("" for the label: none, i.e. Medium).
Status write_descriptor(const std::string& path, JournalEntry::Kind kind, const std::string& sddl) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  std::string text = sddl.empty() ? std::string(kind == JournalEntry::Kind::label ? "S:" : "D:") : sddl;
  if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(wide(text).c_str(), SDDL_REVISION_1, &sd,
                                                              nullptr))
    return call_failed("ConvertStringSecurityDescriptorToSecurityDescriptorW", ::GetLastError(),
                       path + " " + text, kRemedy);
  LocalFreer free_sd(sd);
  BOOL present = FALSE, defaulted = FALSE;
  PACL acl = nullptr;
  SECURITY_INFORMATION info = info_of(kind);
  alignas(ACL) unsigned char empty_buf[sizeof(ACL)];
  if (kind == JournalEntry::Kind::label) {
    ::GetSecurityDescriptorSacl(sd, &present, &acl, &defaulted);
    if (!present || !acl) {  // no label: an empty SACL under LABEL_SECURITY_INFORMATION removes ours
      acl = reinterpret_cast<PACL>(empty_buf);
      ::InitializeAcl(acl, sizeof empty_buf, ACL_REVISION);
    }
  } else {
    ::GetSecurityDescriptorDacl(sd, &present, &acl, &defaulted);
    SECURITY_DESCRIPTOR_CONTROL control = 0;
    DWORD revision = 0;
    ::GetSecurityDescriptorControl(sd, &control, &revision);
    info |= (control & SE_DACL_PROTECTED) ? PROTECTED_DACL_SECURITY_INFORMATION
                                          : UNPROTECTED_DACL_SECURITY_INFORMATION;
  }
  std::wstring wpath = wide(path);
  DWORD rc = ::SetNamedSecurityInfoW(wpath.data(), SE_FILE_OBJECT, info, nullptr, nullptr,
                                     kind == JournalEntry::Kind::label ? nullptr : acl,
                                     kind == JournalEntry::Kind::label ? acl : nullptr);
  if (rc != ERROR_SUCCESS) return call_failed("SetNamedSecurityInfoW", rc, path, kRemedy);
  return Ok{};
}

// Puts one journal entry back; false if it could not.
bool undo_entry(const JournalEntry& e) {
  switch (e.kind) {
    case JournalEntry::Kind::dacl:
    case JournalEntry::Kind::label: {
      if (::GetFileAttributesW(wide(e.path).c_str()) == INVALID_FILE_ATTRIBUTES)
        return true;  // gone: nothing to restore
      return static_cast<bool>(write_descriptor(e.path, e.kind, e.saved));
    }
    case JournalEntry::Kind::remove_tree:
      return remove_tree(wide(e.path));
  }
  return false;
}

// `path` is a run's TEMP: <journal dir>\..\tmp\run-*, without ".." (case-insensitive, as Windows).
bool is_run_temp(const std::string& path, const std::string& journal_dir) {
  std::string root = journal_dir.substr(0, journal_dir.rfind('\\')) + "\\tmp\\run-";
  if (path.size() <= root.size() || path.find("..") != std::string::npos ||
      path.find('/') != std::string::npos)
    return false;
  return ::CompareStringOrdinal(wide(path.substr(0, root.size())).c_str(), -1, wide(root).c_str(), -1,
                                TRUE) == CSTR_EQUAL &&
         path.find('\\', root.size()) == std::string::npos;
}

}  // namespace

bool remove_tree(const std::wstring& path) {
  DWORD attrs = ::GetFileAttributesW(path.c_str());
  if (attrs == INVALID_FILE_ATTRIBUTES)
    return ::GetLastError() == ERROR_FILE_NOT_FOUND || ::GetLastError() == ERROR_PATH_NOT_FOUND;
  bool ok = true;
  WIN32_FIND_DATAW fd;
  HANDLE find = ::FindFirstFileW((path + L"\\*").c_str(), &fd);
  if (find != INVALID_HANDLE_VALUE) {
    do {
      std::wstring name = fd.cFileName;
      if (name == L"." || name == L"..") continue;
      std::wstring child = path + L"\\" + name;
      if (fd.dwFileAttributes & FILE_ATTRIBUTE_READONLY)
        ::SetFileAttributesW(child.c_str(),
                             fd.dwFileAttributes & ~static_cast<DWORD>(FILE_ATTRIBUTE_READONLY));
      // A junction or symbolic link is removed itself, never entered: the workload may have pointed
      // one at the user's documents.
      if (fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
        ok &= (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ? ::RemoveDirectoryW(child.c_str()) != 0
                                                               : ::DeleteFileW(child.c_str()) != 0;
      else if (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
        ok &= remove_tree(child);
      else
        ok &= ::DeleteFileW(child.c_str()) != 0;
    } while (::FindNextFileW(find, &fd));
    ::FindClose(find);
  }
  return ::RemoveDirectoryW(path.c_str()) != 0 && ok;
}

Result<std::unique_ptr<AclSession>> AclSession::open(const JournalPlan& plan, std::string user_sid) {
  if (!create_dirs(plan.dir))
    return call_failed("CreateDirectoryW", ::GetLastError(), plan.dir,
                       "check that %LOCALAPPDATA% is writable");
  std::unique_ptr<AclSession> s(new AclSession);
  s->path_ = plan.file;
  s->user_sid_ = std::move(user_sid);
  // Share mode: read only. While this handle lives no other cage can open the journal exclusively,
  // which is how restore_orphaned_journals tells a live run from a crashed one.
  s->file_ = UniqueHandle(::CreateFileW(wide(plan.file).c_str(), GENERIC_WRITE, FILE_SHARE_READ, nullptr,
                                        CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr));
  if (!s->file_)
    return call_failed("CreateFileW", ::GetLastError(), plan.file,
                       "remove a stale journal by hand after checking it");
  std::string head = format_journal_header();
  DWORD n = 0;
  if (!::WriteFile(s->file_.get(), head.data(), static_cast<DWORD>(head.size()), &n, nullptr) ||
      !::FlushFileBuffers(s->file_.get()))
    return call_failed("WriteFile", ::GetLastError(), plan.file, "check free space in %LOCALAPPDATA%");
  return s;
}

AclSession::~AclSession() {
  undo();
}

Status AclSession::record(const JournalEntry& e) {
  std::string line = format_journal_entry(e);
  DWORD n = 0;
  if (!::WriteFile(file_.get(), line.data(), static_cast<DWORD>(line.size()), &n, nullptr) ||
      n != line.size() || !::FlushFileBuffers(file_.get()))
    return call_failed("WriteFile", ::GetLastError(), path_, "check free space in %LOCALAPPDATA%");
  done_.push_back(e);
  return Ok{};
}

Status AclSession::apply(const AclChange& change) {
  const bool dacl = change.kind == AclChange::Kind::allow_user;
  const auto kind = dacl ? JournalEntry::Kind::dacl : JournalEntry::Kind::label;
  auto saved = read_descriptor(change.path, kind);
  if (!saved) return saved.error();
  if (auto s = record(JournalEntry{kind, change.path, *saved}); !s) return s;
  std::string wanted = replace_user(change.sddl, user_sid_);
  // The plan gives one ACE as "D:(A;...)": it joins the existing DACL; a label replaces the old one.
  std::string next = dacl ? insert_ace(*saved, wanted.substr(2)) : wanted;
  if (auto s = write_descriptor(change.path, kind, next); !s) {
    Error e = s.error();
    e.input = change.why;
    return e;
  }
  return Ok{};
}

Status AclSession::make_temp(const TempPlan& plan) {
  std::string parent = plan.path.substr(0, plan.path.rfind('\\'));
  if (!create_dirs(parent))
    return call_failed("CreateDirectoryW", ::GetLastError(), parent, "check that %LOCALAPPDATA% is writable");
  if (auto s = record(JournalEntry{JournalEntry::Kind::remove_tree, plan.path, ""}); !s) return s;
  PSECURITY_DESCRIPTOR sd = nullptr;
  std::string sddl = replace_user(plan.sddl, user_sid_);
  if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(wide(sddl).c_str(), SDDL_REVISION_1, &sd,
                                                              nullptr))
    return call_failed("ConvertStringSecurityDescriptorToSecurityDescriptorW", ::GetLastError(), sddl, "");
  LocalFreer free_sd(sd);
  SECURITY_ATTRIBUTES sa{sizeof sa, sd, FALSE};
  if (!::CreateDirectoryW(wide(plan.path).c_str(), &sa))
    return call_failed("CreateDirectoryW", ::GetLastError(), plan.path,
                       "check that %LOCALAPPDATA% is writable");
  return Ok{};
}

std::vector<std::string> AclSession::undo() {
  std::vector<std::string> failed;
  if (undone_) return failed;
  undone_ = true;
  for (auto it = done_.rbegin(); it != done_.rend(); ++it)
    if (!undo_entry(*it)) failed.push_back(it->path);
  file_.reset();
  if (failed.empty()) ::DeleteFileW(wide(path_).c_str());  // else the next start tries again
  return failed;
}

std::vector<std::string> restore_orphaned_journals(const std::string& dir) {
  std::vector<std::string> problems;
  WIN32_FIND_DATAW fd;
  HANDLE find = ::FindFirstFileW(wide(dir + "\\run-*.journal").c_str(), &fd);
  if (find == INVALID_HANDLE_VALUE) return problems;
  do {
    std::string path = dir + "\\" + narrow(fd.cFileName);
    // No sharing: this fails while the run that owns the journal is alive.
    UniqueHandle h(::CreateFileW(wide(path).c_str(), GENERIC_READ, 0, nullptr, OPEN_EXISTING,
                                 FILE_ATTRIBUTE_NORMAL, nullptr));
    if (!h) continue;
    std::string text;
    char buf[4096];
    DWORD n = 0;
    while (::ReadFile(h.get(), buf, sizeof buf, &n, nullptr) && n > 0) text.append(buf, n);
    std::vector<JournalEntry> entries;
    if (!parse_journal(text, entries)) {
      problems.push_back(path + ": unreadable restore journal, left in place; restore its paths by hand");
      continue;
    }
    bool ok = true;
    for (auto it = entries.rbegin(); it != entries.rend(); ++it)
      if (it->kind == JournalEntry::Kind::remove_tree && !is_run_temp(it->path, dir)) {
        ok = false;  // only ever a run's TEMP: anything else is not cage's to delete
        problems.push_back(path + ": refusing to remove " + it->path + " (not a run's TEMP)");
      } else if (!undo_entry(*it)) {
        ok = false;
        problems.push_back(path + ": could not restore " + it->path);
      }
    h.reset();
    if (ok) ::DeleteFileW(wide(path).c_str());
  } while (::FindNextFileW(find, &fd));
  ::FindClose(find);
  return problems;
}

}  // namespace cage::win
