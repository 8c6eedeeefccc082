// The Windows executor's mechanisms, one file each (Windows builds only). Each carries out its part
// of a WinPlan and nothing else: container.cc, job.cc, acl.cc (+ the restore journal).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "windows/compile.h"
#include "windows/journal.h"
#include "windows/label_refs.h"
#include "windows/net_slots.h"
#include "windows/win32.h"

namespace cage::win {

// container.cc: the AppContainer as ContainerPlan says; SECURITY_CAPABILITIES for CreateProcessW.
class AppContainer {
 public:
  static Result<std::unique_ptr<AppContainer>> open(const ContainerPlan& plan);
  ~AppContainer();
  SECURITY_CAPABILITIES* security() { return &security_; }

 private:
  AppContainer() = default;
  std::string name_;
  PSID sid_ = nullptr;
  std::vector<PSID> caps_;
  std::vector<SID_AND_ATTRIBUTES> attrs_;
  SECURITY_CAPABILITIES security_{};
};
// DeleteAppContainerProfile; true if it is gone (or the API is missing: none can exist).
bool delete_container_profile(const std::string& name);
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
  // The change, on the path's final name (a reparse point, or a final path that differs, is refused).
  Status apply(const AclChange& change, const std::string& package_sid);
  Status make_temp(const TempPlan& plan);
  // Journals the profile before it is made, so that a crashed run's profile is deleted too.
  Status record_profile(const std::string& name);
  // Restores everything; returns the paths it could not restore (the journal then stays for the next start).
  std::vector<std::string> undo();

 private:
  AclSession() = default;
  Status record(const JournalEntry& e);
  UniqueHandle file_;
  std::string path_, run_, labels_dir_, user_sid_;
  std::vector<JournalEntry> done_;
  bool undone_ = false;
};
// acl.cc's primitives, shared with label.cc. `path` itself, never what a reparse point at it names,
// and only if its final name is `path`; the label or the DACL of a handle as SDDL, and set from SDDL.
bool create_dirs(const std::string& dir);
Result<UniqueHandle> open_exact(const std::string& path, DWORD access, const std::string& why);
Result<std::string> read_descriptor(HANDLE h, JournalEntry::Kind kind, const std::string& path);
Status write_descriptor(HANDLE h, JournalEntry::Kind kind, const std::string& sddl, const std::string& path);

// label.cc: the Low label of a --rw path, through its count of live runs (label_refs.h).
LabelHolder this_run_holder(const std::string& run);
// Joins the path's holders and sets cage's label if it is not set yet. `h` is the path, opened exactly.
Status acquire_low_label(HANDLE h, const AclChange& change, const std::string& labels_dir,
                         const LabelHolder& self);
// Drops `holder` (and every dead holder) from the count of `path`; the last one out puts the saved
// label back. False if it could not (the journal then stays for the next start).
bool release_low_label(const std::string& path, const std::string& holder, const std::string& labels_dir);

// network_setup.cc: the machine's loopback-exemption list as SID strings (firewallapi.dll, looked up
// at run time: a host without it gets spawn_sandbox_unavailable).
Result<std::vector<std::string>> loopback_exempt_sids();
// Everything assess_net_install() needs: the list, cage's WFP objects, the slot lock files. Read only.
NetInstallFacts read_net_install(const std::string& programdata);
// %ProgramData% (SHGetKnownFolderPath-free: the variable, else C:\ProgramData).
std::string program_data_dir();

// wfp.cc: cage's persistent provider, sublayer and `filters` (wfp_filters()), in one transaction.
Status wfp_install(const std::vector<WfpFilter>& filters, const std::string& input);
Status wfp_uninstall(const std::vector<WfpFilter>& filters, const std::string& input);
// Which of them exist (by key, with the filter's layer, action and condition count as listed);
// an error (access denied above all) when the engine cannot be asked.
Status wfp_read(const std::vector<WfpFilter>& filters, NetInstallFacts& facts);

struct NetSlotRequest {
  std::string programdata, journal_dir;  // where the locks are; this user's restore journals
  std::string user, run;                 // this run's user SID and run id
};
// Binds the proxy to 127.0.0.1:port for slot k; false (with why) when the port is taken.
using BindPort = std::function<bool(int slot, uint16_t port, std::string& why)>;
// net_slot_lock.cc: a claimed --net slot, its lock file held unshared until release() (or the
// destructor, or the process's death) marks it released and closes it.
class NetSlotClaim {
 public:
  NetSlotClaim(int slot, UniqueHandle file, std::string user, std::string run)
      : slot_(slot), file_(std::move(file)), user_(std::move(user)), run_(std::move(run)) {}
  NetSlotClaim(const NetSlotClaim&) = delete;
  NetSlotClaim& operator=(const NetSlotClaim&) = delete;
  ~NetSlotClaim();
  int slot() const { return slot_; }
  void release();

 private:
  int slot_ = -1;
  UniqueHandle file_;
  std::string user_, run_;
};
// The first slot judge_slot() calls free and whose port `bind` takes; every slot tried is in
// `attempts`. None: no_free_slot() (exit 125).
Result<std::unique_ptr<NetSlotClaim>> claim_net_slot(const NetSlotRequest& req, const BindPort& bind,
                                                     std::vector<SlotAttempt>& attempts);
// What a claim would see, slot by slot up to the first free one, claiming nothing (--dry-run).
std::vector<SlotAttempt> preview_net_slots(const NetSlotRequest& req);
// The install's lock directory and files, and the uninstall's removal (refused while a run holds one).
Status make_slot_locks(const std::string& programdata, const std::string& input);
Status remove_slot_locks(const std::string& programdata, const std::string& input);
// "" when every slot's lock file exists, else what is missing.
std::string slot_locks_problem(const std::string& programdata);

// Journals in `dir` that no live run holds open: restore them, then delete them. Returns one line per
// journal it could not finish (left in place for the next start).
std::vector<std::string> restore_orphaned_journals(const std::string& dir);
// Deletes a directory tree without following links or junctions inside it.
bool remove_tree(const std::wstring& path);

}  // namespace cage::win
