// The Windows executor's mechanisms, one file each (Windows builds only). Each carries out its part
// of a WinPlan and nothing else: token.cc, job.cc, acl.cc (+ the restore journal), wfp.cc.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "windows/compile.h"
#include "windows/journal.h"
#include "windows/win32.h"

namespace cage::win {

// token.cc: CreateRestrictedToken + Low integrity, as TokenPlan says.
Result<UniqueHandle> make_restricted_token(const TokenPlan& plan);
// The caller's user SID as a string ("S-1-5-21-..."), for <USER> in the plan's SDDL.
Result<std::string> caller_user_sid();

// job.cc: an unnamed job object with JobPlan's limits.
Result<UniqueHandle> make_job(const JobPlan& plan);

// acl.cc: the journal is opened first and held exclusively; every change is journaled before it is
// made. undo() restores in reverse order and deletes the journal; the destructor calls it.
class AclSession {
 public:
  static Result<std::unique_ptr<AclSession>> open(const JournalPlan& plan, std::string user_sid);
  ~AclSession();
  Status apply(const AclChange& change);
  Status make_temp(const TempPlan& plan);
  // Restores everything; returns the paths it could not restore (the journal then stays for the next start).
  std::vector<std::string> undo();

 private:
  AclSession() = default;
  Status record(const JournalEntry& e);
  UniqueHandle file_;
  std::string path_, user_sid_;
  std::vector<JournalEntry> done_;
  bool undone_ = false;
};
// Journals in `dir` that no live run holds open: restore them, then delete them. Returns one line per
// journal it could not finish (left in place for the next start).
std::vector<std::string> restore_orphaned_journals(const std::string& dir);
// Deletes a directory tree without following links or junctions inside it.
bool remove_tree(const std::wstring& path);

// wfp.cc: a dynamic WFP session with cage's sublayer and filters; closing it removes them all.
class WfpSession {
 public:
  static Result<std::unique_ptr<WfpSession>> open(const WfpPlan& plan);
  ~WfpSession();

 private:
  WfpSession() = default;
  HANDLE engine_ = nullptr;
};

}  // namespace cage::win
