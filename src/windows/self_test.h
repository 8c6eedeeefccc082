// `cage --self-test` on Windows and its probe (`cage --probe ...`, run inside the sandbox).
#pragma once
#include <string>
#include <vector>

namespace cage::win {

// Runs cage.exe itself on a list of denied actions and their allowed twins; one PASS/FAIL/SKIP line
// each; 0 only if none failed.
int self_test(bool json);
// `cage --check`: tries the token, the job object and a WFP session; 0 if a full run can start.
int check(bool json);
// `cage --probe write PATH | read PATH | sleep MS | connect HOST PORT | connect-proxy HOST PORT`.
int probe_main(const std::vector<std::string>& args);

}  // namespace cage::win
