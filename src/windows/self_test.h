// `cage --self-test` and `cage --check` on Windows.
#pragma once

namespace cage::win {

// The portable check list (selftest/checks.cc) with a Windows Host: this cage.exe, a scratch
// directory under %USERPROFILE%, a 127.0.0.1 listener, a runner that captures output. 0 if all passed.
int self_test(bool json);
// `cage --check`: tries the token, the job object and a WFP session; 0 if a full run can start.
int check(bool json);

}  // namespace cage::win
