// lx::execute: carries out a compiled Plan (the only code that acts on the kernel). Returns the exit
// status cage should exit with, or the Error that kept the workload from starting.
#pragma once
#include "common/error.h"
#include "linux/plan.h"

namespace cage::lx {

struct RunOutcome {
  int exit_status = 0;
  bool timed_out = false;
  int wait_status = 0;  // the workload's raw wait status
};

Result<RunOutcome> execute(const Plan& plan);

// cage --check: probes each mechanism; prints text or JSON, returns 0 only if full confinement works.
int check_host(bool json);

}  // namespace cage::lx
