// acl.cc: the security-descriptor changes for grants and the run's TEMP (parent side), each written
// to the restore journal before it is made, undone in reverse when the run ends, and undone by the
// next cage after a crash (restore_orphaned_journals). Grants are opened without following a
// reparse point and changed through that handle, so a junction cannot redirect them; undoing an ACE
// removes exactly the run's package SID's explicit ACEs; the Low label of a --rw path goes through
// its per-path count (label.cc). The journal format: journal.cc and its test; denied and allowed
// access on a real host: `cage --self-test`.

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

}  // namespace

bool create_dirs(const std::string& dir) {
  std::wstring w = wide(dir);
  for (size_t i = 3; i <= w.size(); ++i) {  // past "C:\"
    if (i != w.size() && w[i] != L'\\') continue;
    std::wstring part = w.substr(0, i);
    if (!::CreateDirectoryW(part.c_str(), nullptr) && ::GetLastError() != ERROR_ALREADY_EXISTS) return false;
  }
  return true;
}

namespace {

SECURITY_INFORMATION info_of(JournalEntry::Kind k) {
  return k == JournalEntry::Kind::label ? LABEL_SECURITY_INFORMATION : DACL_SECURITY_INFORMATION;
}

bool same_path(std::string a, std::string b) {
  for (auto* s : {&a, &b})
    while (s->size() > 3 && s->back() == '\\') s->pop_back();
  return ::CompareStringOrdinal(wide(a).c_str(), -1, wide(b).c_str(), -1, TRUE) == CSTR_EQUAL;
}

}  // namespace

// `path` itself, never what a reparse point at it names, and only if its final name is `path`: a
// junction planted in a parent (by an earlier run in its --rw grant) would otherwise redirect the ACE.
Result<UniqueHandle> open_exact(const std::string& path, DWORD access, const std::string& why) {
  const DWORD share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  const DWORD flags = FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT;
  UniqueHandle h(::CreateFileW(wide(path).c_str(), access, share, nullptr, OPEN_EXISTING, flags, nullptr));
  if (!h) return call_failed("CreateFileW", ::GetLastError(), why.empty() ? path : why, kRemedy);
  BY_HANDLE_FILE_INFORMATION info{};
  if (!::GetFileInformationByHandle(h.get(), &info))
    return call_failed("GetFileInformationByHandle", ::GetLastError(), path, kRemedy);
  if (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
    return Error{ErrorClass::invalid_policy, path + " is a junction, symbolic link or mount point",
                 "grant the directory it leads to, by its own path", why, 0};
  std::wstring buf(32768, L'\0');
  DWORD n = ::GetFinalPathNameByHandleW(h.get(), buf.data(), static_cast<DWORD>(buf.size()),
                                        FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
  if (n == 0 || n >= buf.size())
    return call_failed("GetFinalPathNameByHandleW", ::GetLastError(), path, kRemedy);
  buf.resize(n);
  std::string final_path = narrow(buf);
  if (final_path.rfind("\\\\?\\UNC\\", 0) == 0)
    final_path = "\\\\" + final_path.substr(8);
  else if (final_path.rfind("\\\\?\\", 0) == 0)
    final_path = final_path.substr(4);
  if (!same_path(final_path, path))
    return Error{ErrorClass::invalid_policy,
                 path + " leads to " + final_path + " (through a junction, a link or a short name)",
                 "grant " + final_path + " by that path", why, 0};
  return h;
}

Result<std::string> read_descriptor(HANDLE h, JournalEntry::Kind kind, const std::string& path) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  DWORD rc = ::GetSecurityInfo(h, SE_FILE_OBJECT, info_of(kind), nullptr, nullptr, nullptr, nullptr, &sd);
  if (rc != ERROR_SUCCESS) return call_failed("GetSecurityInfo", rc, path, kRemedy);
  LocalFreer free_sd(sd);
  wchar_t* text = nullptr;
  if (!::ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, SDDL_REVISION_1, info_of(kind), &text,
                                                              nullptr))
    return call_failed("ConvertSecurityDescriptorToStringSecurityDescriptorW", ::GetLastError(), path,
                       kRemedy);
  LocalFreer free_text(text);
  return narrow(text);
}

// Sets the DACL or the label of `h` to what `sddl` holds ("" for the label: none, i.e. Medium).
Status write_descriptor(HANDLE h, JournalEntry::Kind kind, const std::string& sddl, const std::string& path) {
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
  DWORD rc = ::SetSecurityInfo(h, SE_FILE_OBJECT, info, nullptr, nullptr,
                               kind == JournalEntry::Kind::label ? nullptr : acl,
                               kind == JournalEntry::Kind::label ? acl : nullptr);
  if (rc != ERROR_SUCCESS) return call_failed("SetSecurityInfo", rc, path, kRemedy);
  return Ok{};
}

namespace {

// Removes the explicit ACEs for `sid_text` from the DACL of `h`; inherited copies go with them, as
// SetSecurityInfo re-propagates. Everything else in the DACL stays as it is now.
bool remove_aces(HANDLE h, const std::string& sid_text) {
  PSID sid = nullptr;
  if (!::ConvertStringSidToSidW(wide(sid_text).c_str(), &sid)) return false;
  LocalFreer free_sid(sid);
  PSECURITY_DESCRIPTOR sd = nullptr;
  PACL dacl = nullptr;
  if (::GetSecurityInfo(h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, &dacl, nullptr,
                        &sd) != ERROR_SUCCESS)
    return false;
  LocalFreer free_sd(sd);
  if (!dacl) return true;
  bool changed = false;
  for (DWORD i = dacl->AceCount; i-- > 0;) {
    void* ace = nullptr;
    if (!::GetAce(dacl, i, &ace)) return false;
    auto* header = static_cast<ACE_HEADER*>(ace);
    if ((header->AceType != ACCESS_ALLOWED_ACE_TYPE && header->AceType != ACCESS_DENIED_ACE_TYPE) ||
        (header->AceFlags & INHERITED_ACE))
      continue;
    // Allowed and denied ACEs share their layout: the SID starts at SidStart.
    if (::EqualSid(&static_cast<ACCESS_ALLOWED_ACE*>(ace)->SidStart, sid) && ::DeleteAce(dacl, i))
      changed = true;
  }
  if (!changed) return true;
  SECURITY_DESCRIPTOR_CONTROL control = 0;
  DWORD revision = 0;
  ::GetSecurityDescriptorControl(sd, &control, &revision);
  SECURITY_INFORMATION info =
      DACL_SECURITY_INFORMATION | ((control & SE_DACL_PROTECTED) ? PROTECTED_DACL_SECURITY_INFORMATION
                                                                 : UNPROTECTED_DACL_SECURITY_INFORMATION);
  return ::SetSecurityInfo(h, SE_FILE_OBJECT, info, nullptr, nullptr, dacl, nullptr) == ERROR_SUCCESS;
}

// Only a run's own profile is ever deleted: a journal cannot name another program's AppContainer.
bool is_run_profile(const std::string& name) {
  return name.rfind("cage.run-", 0) == 0 && name.find_first_of("\\/") == std::string::npos;
}

// Puts one journal entry back; false if it could not.
bool undo_entry(const JournalEntry& e, const std::string& labels_dir) {
  switch (e.kind) {
    case JournalEntry::Kind::label_ref:
      return release_low_label(e.path, e.saved, labels_dir);
    case JournalEntry::Kind::dacl:
    case JournalEntry::Kind::label:
    case JournalEntry::Kind::remove_aces: {
      if (::GetFileAttributesW(wide(e.path).c_str()) == INVALID_FILE_ATTRIBUTES)
        return true;  // gone: nothing to restore
      const bool label = e.kind == JournalEntry::Kind::label;
      auto h = open_exact(e.path, READ_CONTROL | (label ? WRITE_OWNER : WRITE_DAC), "");
      if (!h) return false;  // now a link, or elsewhere: left for a look by hand (the journal stays)
      if (e.kind == JournalEntry::Kind::remove_aces) return remove_aces(h->get(), e.saved);
      return static_cast<bool>(write_descriptor(h->get(), e.kind, e.saved, e.path));
    }
    case JournalEntry::Kind::remove_tree:
      return remove_tree(wide(e.path));
    case JournalEntry::Kind::delete_profile:
      return is_run_profile(e.path) && delete_container_profile(e.path);
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
  s->run_ = plan.run;
  s->labels_dir_ = plan.labels;
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

Status AclSession::apply(const AclChange& change, const std::string& package_sid) {
  const bool label = change.kind == AclChange::Kind::low_label;
  auto h = open_exact(change.path, READ_CONTROL | (label ? WRITE_OWNER : WRITE_DAC), change.why);
  if (!h) return h.error();
  Status done = Ok{};
  if (label) {
    // Journaled first: a crash after the count was raised still has this run's holder dropped.
    const LabelHolder self = this_run_holder(run_);
    if (auto s = record(JournalEntry{JournalEntry::Kind::label_ref, change.path, format_holder(self)}); !s)
      return s;
    done = acquire_low_label(h->get(), change, labels_dir_, self);
  } else {
    // Journaled as "remove this SID's ACEs": what is restored is the absence of ours, not an old copy.
    if (auto s = record(JournalEntry{JournalEntry::Kind::remove_aces, change.path, package_sid}); !s)
      return s;
    auto saved = read_descriptor(h->get(), JournalEntry::Kind::dacl, change.path);
    if (!saved) return saved.error();
    // The plan gives one ACE as "D:(...)": it joins the existing DACL in canonical order.
    done = write_descriptor(h->get(), JournalEntry::Kind::dacl, insert_ace(*saved, change.sddl.substr(2)),
                            change.path);
  }
  if (!done) {
    Error e = done.error();
    e.input = change.why;
    return e;
  }
  return Ok{};
}

Status AclSession::record_profile(const std::string& name) {
  return record(JournalEntry{JournalEntry::Kind::delete_profile, name, ""});
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
  for (const auto& sub : plan.subdirs)  // inherit the run directory's descriptor
    if (!create_dirs(plan.path + "\\" + sub))
      return call_failed("CreateDirectoryW", ::GetLastError(), plan.path + "\\" + sub, "");
  return Ok{};
}

std::vector<std::string> AclSession::undo() {
  std::vector<std::string> failed;
  if (undone_) return failed;
  undone_ = true;
  for (auto it = done_.rbegin(); it != done_.rend(); ++it)
    if (!undo_entry(*it, labels_dir_)) failed.push_back(it->path);
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
      } else if (it->kind == JournalEntry::Kind::delete_profile && !is_run_profile(it->path)) {
        ok = false;
        problems.push_back(path + ": refusing to delete the AppContainer " + it->path + " (not a run's)");
      } else if (!undo_entry(*it, label_lock_dir(dir))) {
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
