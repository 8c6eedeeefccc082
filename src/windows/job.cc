// job.cc: the job object every process of the run lives in (parent side). Kill-on-close (cage's
// exit, even a crash, ends the run), die on unhandled exceptions, no breakaway, UI restrictions,
// and --pids/--memory/--cpu as JobPlan maps them. Wine runs this part (tests/cross/wine_smoke.sh).
#include "windows/mechanisms.h"

namespace cage::win {

Result<UniqueHandle> make_job(const JobPlan& plan) {
  const std::string remedy = "if cage runs inside a job that forbids nested jobs, run it outside that job";
  UniqueHandle job(::CreateJobObjectW(nullptr, nullptr));
  if (!job) return call_failed("CreateJobObjectW", ::GetLastError(), "job", remedy);

  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = plan.limit_flags;
  limits.BasicLimitInformation.ActiveProcessLimit = plan.active_processes;
  limits.JobMemoryLimit = static_cast<SIZE_T>(plan.job_memory);
  if (!::SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits))
    return call_failed("SetInformationJobObject(ExtendedLimit)", ::GetLastError(), "--pids/--memory", remedy);

  JOBOBJECT_BASIC_UI_RESTRICTIONS ui{};
  ui.UIRestrictionsClass = plan.ui_restrictions;
  if (!::SetInformationJobObject(job.get(), JobObjectBasicUIRestrictions, &ui, sizeof ui))
    return call_failed("SetInformationJobObject(UIRestrictions)", ::GetLastError(), "job", remedy);

  if (plan.cpu_rate_flags) {
    JOBOBJECT_CPU_RATE_CONTROL_INFORMATION cpu{};
    cpu.ControlFlags = plan.cpu_rate_flags;
    cpu.CpuRate = plan.cpu_rate;
    if (!::SetInformationJobObject(job.get(), JobObjectCpuRateControlInformation, &cpu, sizeof cpu))
      return call_failed("SetInformationJobObject(CpuRateControl)", ::GetLastError(), "--cpu",
                         "drop --cpu (CPU rate control needs Windows 8 or later)");
  }
  return job;
}

}  // namespace cage::win
