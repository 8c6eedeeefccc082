// execute.cc: carries out a WinPlan in the order calls_of() lists (parent side; the workload never
// runs cage code). Every failure undoes what was done: the job is killed first, then the journal
// in reverse (the AppContainer profile deleted, TEMP removed, the run's ACEs removed, labels
// restored); the error is spawn_sandbox_unavailable (exit 125) unless the command itself is
// missing (127) or not executable (126).
// Verified: the plan by windows_plan_test.cc, the refusal under Wine by tests/cross/wine_smoke.sh,
// the enforcement on a real host by `cage --self-test`.
#include "common/exit_status.h"
#include "windows/execute.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>

#include "windows/mechanisms.h"

namespace cage::win {

namespace {

// The console control handler runs on its own thread; it only signals the main one.
HANDLE g_stop = nullptr;     // manual-reset: end the run now
HANDLE g_cleaned = nullptr;  // set once the run is cleaned up (the handler waits for it on close)
std::atomic<int> g_interrupts{0};

BOOL WINAPI on_console_event(DWORD type) {
  if (type == CTRL_C_EVENT || type == CTRL_BREAK_EVENT) {
    // The workload shares the console and gets this Ctrl-C itself; a second one ends the run.
    if (++g_interrupts >= 2) ::SetEvent(g_stop);
    return TRUE;
  }
  // Close, logoff, shutdown: Windows ends cage when this returns, so wait for the cleanup first.
  ::SetEvent(g_stop);
  ::WaitForSingleObject(g_cleaned, 4000);
  return TRUE;
}

std::wstring environment_block(std::vector<std::string> env) {
  // CreateProcess wants the block sorted by name, case-insensitively.
  auto key = [](const std::string& e) {
    std::string k = e.substr(0, e.find('='));
    for (auto& c : k) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return k;
  };
  std::stable_sort(env.begin(), env.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::wstring block;
  for (const auto& e : env) block += wide(e) + L'\0';
  return block + L'\0';
}

// Everything a run holds, released in the one safe order whatever happened.
struct Run {
  std::unique_ptr<AclSession> acl;
  std::unique_ptr<AppContainer> container;
  UniqueHandle job, process, thread;

  ~Run() { finish(); }
  void finish() {
    if (job) {
      // The workload dies before the filters go and before its TEMP and grants are undone.
      ::TerminateJobObject(job.get(), 1);
      for (int i = 0; i < 100; ++i) {
        JOBOBJECT_BASIC_ACCOUNTING_INFORMATION acct{};
        if (!::QueryInformationJobObject(job.get(), JobObjectBasicAccountingInformation, &acct, sizeof acct,
                                         nullptr) ||
            acct.ActiveProcesses == 0)
          break;
        ::Sleep(20);
      }
      job.reset();
    }
    process.reset();
    thread.reset();
    container.reset();
    if (acl) {
      for (const auto& path : acl->undo())
        std::cerr << "cage: warning: could not restore the security descriptor of " << path
                  << "; the next cage run retries (restore journal)\n";
      acl.reset();
    }
  }
};

Error spawn_failed(DWORD code, const WinPlan& plan) {
  const std::string program = plan.argv.empty() ? std::string() : plan.argv.front();
  if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND)
    return Error{ErrorClass::not_found, program + ": command not found", "check the name and PATH", program,
                 0};
  if (code == ERROR_ACCESS_DENIED || code == ERROR_BAD_EXE_FORMAT)
    return Error{ErrorClass::exec_failed, program + ": cannot execute (" + describe(code) + ")",
                 "check that it is a Windows program the sandbox may read: one outside Windows' and "
                 "Program Files' directories needs --ro on its directory",
                 program, 0};
  return call_failed("CreateProcessW", code, program, "report this with `cage --self-test`");
}

Status spawn(Run& run, const WinPlan& plan) {
  // Only the standard handles are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), never cage's others.
  std::vector<HANDLE> inherit;
  STARTUPINFOEXW si{};
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  HANDLE* slots[] = {&si.StartupInfo.hStdInput, &si.StartupInfo.hStdOutput, &si.StartupInfo.hStdError};
  const DWORD ids[] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
  for (int i = 0; i < 3; ++i) {
    HANDLE h = ::GetStdHandle(ids[i]);
    if (!h || h == INVALID_HANDLE_VALUE ||
        !::SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
      continue;
    *slots[i] = h;
    if (std::find(inherit.begin(), inherit.end(), h) == inherit.end()) inherit.push_back(h);
  }
  std::wstring desktop = wide(plan.desktop);
  si.StartupInfo.lpDesktop = desktop.data();
  SIZE_T size = 0;
  ::InitializeProcThreadAttributeList(nullptr, 2, 0, &size);
  std::vector<unsigned char> attrs(size);
  si.lpAttributeList = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attrs.data());
  if (!::InitializeProcThreadAttributeList(si.lpAttributeList, 2, 0, &size))
    return call_failed("InitializeProcThreadAttributeList", ::GetLastError(), "spawn", "");
  struct Deleter {
    LPPROC_THREAD_ATTRIBUTE_LIST l;
    ~Deleter() { ::DeleteProcThreadAttributeList(l); }
  } deleter{si.lpAttributeList};
  if (!inherit.empty() &&
      !::UpdateProcThreadAttribute(si.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit.data(),
                                   inherit.size() * sizeof(HANDLE), nullptr, nullptr))
    return call_failed("UpdateProcThreadAttribute(HANDLE_LIST)", ::GetLastError(), "spawn", "");
  // The process gets a LowBox token for the container: its package SID and capabilities.
  if (!::UpdateProcThreadAttribute(si.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES,
                                   run.container->security(), sizeof(SECURITY_CAPABILITIES), nullptr,
                                   nullptr))
    return call_failed("UpdateProcThreadAttribute(SECURITY_CAPABILITIES)", ::GetLastError(), "spawn", "");

  // lpApplicationName is the resolved path: CreateProcessW's own search never runs.
  std::wstring app = wide(plan.application);
  std::wstring cmd = wide(plan.command_line);
  std::wstring cwd = wide(plan.cwd);
  std::wstring env = environment_block(plan.env);
  PROCESS_INFORMATION pi{};
  if (!::CreateProcessW(app.empty() ? nullptr : app.c_str(), cmd.data(), nullptr, nullptr, !inherit.empty(),
                        CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT,
                        env.data(), cwd.c_str(), &si.StartupInfo, &pi))
    return spawn_failed(::GetLastError(), plan);
  run.process = UniqueHandle(pi.hProcess);
  run.thread = UniqueHandle(pi.hThread);
  // Into the job before its first instruction: nothing it starts can escape the job's limits.
  if (!::AssignProcessToJobObject(run.job.get(), run.process.get())) {
    DWORD code = ::GetLastError();
    ::TerminateProcess(run.process.get(), 125);
    return call_failed("AssignProcessToJobObject", code, "job",
                       "run cage outside a job that forbids nesting");
  }
  if (::ResumeThread(run.thread.get()) == static_cast<DWORD>(-1))
    return call_failed("ResumeThread", ::GetLastError(), "spawn", "");
  run.thread.reset();
  return Ok{};
}

int wait_for(Run& run, const WinPlan& plan) {
  HANDLE objects[] = {run.process.get(), g_stop};
  DWORD timeout =
      plan.timeout_ms ? static_cast<DWORD>(std::min<uint64_t>(plan.timeout_ms, 0xfffffffeull)) : INFINITE;
  DWORD r = ::WaitForMultipleObjects(2, objects, FALSE, timeout);
  if (r == WAIT_OBJECT_0) {
    DWORD code = 0;
    ::GetExitCodeProcess(run.process.get(), &code);
    return static_cast<int>(code);
  }
  if (r == WAIT_TIMEOUT) {
    std::cerr << "cage: --timeout reached after " << plan.timeout_ms << " ms; the run was stopped\n";
    ::TerminateJobObject(run.job.get(), exit_status::kTimedOut);
    return exit_status::kTimedOut;
  }
  ::TerminateJobObject(run.job.get(), exit_status::kInterrupted);
  return exit_status::kInterrupted;
}

}  // namespace

Result<int> execute(const WinPlan& plan, const std::function<void()>& cleaned) {
  for (const auto& problem : restore_orphaned_journals(plan.journal.dir))
    std::cerr << "cage: warning: " << problem << "\n";
  auto user = caller_user_sid();
  if (!user) return user.error();
  Run run;
  auto acl = AclSession::open(plan.journal, *user);
  if (!acl) return acl.error();
  run.acl = std::move(*acl);
  for (const auto& change : plan.acl)
    if (auto s = run.acl->apply(change, plan.container.sid); !s) return s.error();
  if (auto s = run.acl->make_temp(plan.temp); !s) return s.error();
  if (plan.container.per_run)
    if (auto s = run.acl->record_profile(plan.container.name); !s) return s.error();
  auto container = AppContainer::open(plan.container);
  if (!container) return container.error();
  run.container = std::move(*container);
  auto job = make_job(plan.job);
  if (!job) return job.error();
  run.job = std::move(*job);
  g_stop = ::CreateEventW(nullptr, TRUE, FALSE, nullptr);
  g_cleaned = ::CreateEventW(nullptr, TRUE, FALSE, nullptr);
  if (!g_stop || !g_cleaned) return call_failed("CreateEventW", ::GetLastError(), "Ctrl-C", "");
  // Without a console there is no Ctrl-C to pass on; the job still dies with cage (KILL_ON_JOB_CLOSE).
  ::SetConsoleCtrlHandler(on_console_event, TRUE);
  struct Unhook {  // also on the error paths: clean up, then let a waiting close handler return
    Run& r;
    const std::function<void()>& after;
    ~Unhook() {
      r.finish();
      if (after) after();
      ::SetConsoleCtrlHandler(on_console_event, FALSE);
      ::SetEvent(g_cleaned);
    }
  } unhook{run, cleaned};
  if (auto s = spawn(run, plan); !s) return s.error();
  return wait_for(run, plan);
}

}  // namespace cage::win
