// `cage --self-test` and `cage --check` on Windows.
#pragma once

namespace cage::win {

// The portable check list (selftest/checks.cc) with a Windows Host: this cage.exe, a scratch
// directory under %USERPROFILE%, a 127.0.0.1 listener, a runner that captures output. 0 if all passed.
int self_test(bool json);
// `cage --check`: makes (and deletes) an AppContainer profile and a job object, and says whether
// --net is set up; 0 if a run without --net can start.
int check(bool json);

}  // namespace cage::win
