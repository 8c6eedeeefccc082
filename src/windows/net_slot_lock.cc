// net_slot_lock.cc: a --net run's slot (Windows builds only, parent side). The run holds
// %ProgramData%\cage\net-slots\slot-<k>.lock open without sharing from before its proxy is bound
// until after its grants are removed; the record in it says who held it last and whether that run let
// go (net_slots.h: judge_slot decides, this file only opens, reads and writes). The elevated install
// makes the directory and the files (make_slot_locks). Proof on Windows: `cage --self-test` (two
// --net checks run one after the other reuse slot 0); under Wine: tests/cross/wine_smoke.sh.
#include "windows/mechanisms.h"
#include "windows/net_slots.h"
// After <windows.h> (mechanisms.h).
#include <aclapi.h>
#include <sddl.h>

namespace cage::win {

namespace {

// SYSTEM and Administrators: everything; Authenticated Users: read and write the record, never
// delete it, change its DACL or owner; no ACE for ALL APPLICATION PACKAGES or any package SID, so
// no AppContainer (and so no sandboxed workload) can open it; Medium no-write-up, so no Low process
// can write it either, whatever a DACL says.
constexpr const wchar_t* kDirSddl =
    L"O:BAD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;;0x1200a9;;;AU)S:(ML;;NW;;;ME)";
constexpr const wchar_t* kFileSddl = L"O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x12019f;;;AU)S:(ML;;NW;;;ME)";

std::string read_all(HANDLE h) {
  std::string text(512, '\0');
  DWORD n = 0;
  ::SetFilePointer(h, 0, nullptr, FILE_BEGIN);
  if (!::ReadFile(h, text.data(), static_cast<DWORD>(text.size()), &n, nullptr)) n = 0;
  text.resize(n);
  return text;
}

bool write_all(HANDLE h, const std::string& text) {
  DWORD n = 0;
  return ::SetFilePointer(h, 0, nullptr, FILE_BEGIN) != INVALID_SET_FILE_POINTER && ::SetEndOfFile(h) &&
         ::WriteFile(h, text.data(), static_cast<DWORD>(text.size()), &n, nullptr) && n == text.size() &&
         ::FlushFileBuffers(h);
}

bool exists(const std::string& path) {
  return ::GetFileAttributesW(wide(path).c_str()) != INVALID_FILE_ATTRIBUTES;
}

struct Sd {
  PSECURITY_DESCRIPTOR p = nullptr;
  ~Sd() {
    if (p) ::LocalFree(p);
  }
};

}  // namespace

NetSlotClaim::~NetSlotClaim() {
  release();
}

void NetSlotClaim::release() {
  if (!file_) return;
  write_all(file_.get(), format_slot_record(SlotRecord{"released", user_, run_}));
  file_.reset();  // only now may another run open it
}

Result<std::unique_ptr<NetSlotClaim>> claim_net_slot(const NetSlotRequest& req, const BindPort& bind,
                                                     std::vector<SlotAttempt>& attempts) {
  for (int k = 0; k < kNetSlots; ++k) {
    const std::string path = net_slot_lock_path(req.programdata, k);
    UniqueHandle h(::CreateFileW(wide(path).c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                                 FILE_ATTRIBUTE_NORMAL, nullptr));
    const DWORD err = h ? ERROR_SUCCESS : ::GetLastError();
    if (!h &&
        err != ERROR_SHARING_VIOLATION)  // the install made every file: a missing one is not ours to make
      return call_failed("CreateFileW(" + path + ")", err, "--net",
                         "run `cage --install-windows-network` again from an elevated prompt");
    const SlotRecord last = h ? parse_slot_record(read_all(h.get())) : SlotRecord{};
    const bool journal = !last.run.empty() && exists(req.journal_dir + "\\run-" + last.run + ".journal");
    SlotAttempt a;
    a.slot = k;
    a.verdict = judge_slot(static_cast<bool>(h), last, req.user, journal);
    if (a.verdict == SlotVerdict::free) {
      // Written before the port is bound: a crash from here on leaves "held", which judge_slot
      // treats as a crashed run's (its journal, if any, names what to undo).
      if (!write_all(h.get(), format_slot_record(SlotRecord{"held", req.user, req.run})))
        return call_failed("WriteFile(" + path + ")", ::GetLastError(), "--net", "");
      std::string why;
      if (bind(k, net_slot_port(k), why)) {
        a.claimed = true;
        attempts.push_back(a);
        return std::make_unique<NetSlotClaim>(k, std::move(h), req.user, req.run);
      }
      a.port_taken = true;
      a.port_error = why;
      write_all(h.get(),
                format_slot_record(last.state.empty() ? SlotRecord{"released", req.user, req.run} : last));
    }
    attempts.push_back(a);
  }
  return no_free_slot(attempts);
}

std::vector<SlotAttempt> preview_net_slots(const NetSlotRequest& req) {
  std::vector<SlotAttempt> out;
  for (int k = 0; k < kNetSlots; ++k) {
    const std::string path = net_slot_lock_path(req.programdata, k);
    // Shared read: fails with a sharing violation exactly when a live run holds the slot; claims nothing.
    UniqueHandle h(::CreateFileW(wide(path).c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
                                 nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr));
    const SlotRecord last = h ? parse_slot_record(read_all(h.get())) : SlotRecord{};
    const bool journal = !last.run.empty() && exists(req.journal_dir + "\\run-" + last.run + ".journal");
    SlotAttempt a;
    a.slot = k;
    a.verdict = judge_slot(static_cast<bool>(h), last, req.user, journal);
    out.push_back(a);
    if (out.back().verdict == SlotVerdict::free) break;  // the one a run would try first
  }
  return out;
}

Status make_slot_locks(const std::string& programdata, const std::string& input) {
  Sd dir_sd, file_sd;
  if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(kDirSddl, SDDL_REVISION_1, &dir_sd.p,
                                                              nullptr) ||
      !::ConvertStringSecurityDescriptorToSecurityDescriptorW(kFileSddl, SDDL_REVISION_1, &file_sd.p,
                                                              nullptr))
    return call_failed("ConvertStringSecurityDescriptorToSecurityDescriptorW", ::GetLastError(), input, "");
  const std::string parent = programdata + "\\cage", dir = net_slot_dir(programdata);
  SECURITY_ATTRIBUTES dsa{sizeof dsa, dir_sd.p, FALSE};
  for (const auto& d : {parent, dir})
    if (!::CreateDirectoryW(wide(d).c_str(), &dsa) && ::GetLastError() != ERROR_ALREADY_EXISTS)
      return call_failed("CreateDirectoryW(" + d + ")", ::GetLastError(), input, "");
  // Already there (an earlier install, or made by someone else before it): owner, DACL and label are
  // set again, so a directory a user planted with a DACL of their own does not survive the install.
  // The parent too: ProgramData lets every user create directories, and the owner of
  // %ProgramData%\cage could otherwise swap net-slots for a directory of their own.
  auto reset = [&](const std::string& path, PSECURITY_DESCRIPTOR sd) -> Status {
    BOOL present = FALSE, defaulted = FALSE;
    PACL dacl = nullptr, sacl = nullptr;
    PSID owner = nullptr;
    ::GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted);
    ::GetSecurityDescriptorSacl(sd, &present, &sacl, &defaulted);
    ::GetSecurityDescriptorOwner(sd, &owner, &defaulted);
    std::wstring w = wide(path);
    DWORD rc = ::SetNamedSecurityInfoW(w.data(), SE_FILE_OBJECT,
                                       OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION |
                                           PROTECTED_DACL_SECURITY_INFORMATION | LABEL_SECURITY_INFORMATION,
                                       owner, nullptr, dacl, sacl);
    return rc == ERROR_SUCCESS ? Status(Ok{})
                               : Status(call_failed("SetNamedSecurityInfoW(" + path + ")", rc, input, ""));
  };
  for (const auto& d : {parent, dir})
    if (auto s = reset(d, dir_sd.p); !s) return s;
  SECURITY_ATTRIBUTES fsa{sizeof fsa, file_sd.p, FALSE};
  for (int k = 0; k < kNetSlots; ++k) {
    const std::string path = net_slot_lock_path(programdata, k);
    UniqueHandle h(::CreateFileW(wide(path).c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &fsa,
                                 OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr));
    if (!h) return call_failed("CreateFileW(" + path + ")", ::GetLastError(), input, "");
    h.reset();
    if (auto s = reset(path, file_sd.p); !s) return s;
  }
  return Ok{};
}

Status remove_slot_locks(const std::string& programdata, const std::string& input) {
  const std::string dir = net_slot_dir(programdata);
  for (int k = 0; k < kNetSlots; ++k) {
    const std::string path = net_slot_lock_path(programdata, k);
    // A live run holds its file unshared: deleting fails with a sharing violation, and is refused
    // rather than pulled from under the run.
    if (!::DeleteFileW(wide(path).c_str()) && ::GetLastError() != ERROR_FILE_NOT_FOUND &&
        ::GetLastError() != ERROR_PATH_NOT_FOUND)
      return call_failed("DeleteFileW(" + path + ")", ::GetLastError(), input,
                         "a --net run holds this slot: wait for it to end, then run the command again");
  }
  if (!::RemoveDirectoryW(wide(dir).c_str()) && ::GetLastError() != ERROR_FILE_NOT_FOUND &&
      ::GetLastError() != ERROR_PATH_NOT_FOUND)
    return call_failed("RemoveDirectoryW(" + dir + ")", ::GetLastError(), input, "");
  ::RemoveDirectoryW(wide(programdata + "\\cage").c_str());  // only if empty
  return Ok{};
}

std::string slot_locks_problem(const std::string& programdata) {
  for (int k = 0; k < kNetSlots; ++k)
    if (!exists(net_slot_lock_path(programdata, k)))
      return net_slot_lock_path(programdata, k) + " is missing";
  return {};
}

}  // namespace cage::win
