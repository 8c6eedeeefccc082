// `cage --self-test`: the same fixed list of checks on every platform, each a denial with its allowed
// twin, run through the real sandbox of this build: cage starts itself confined with
// `--self-test-probe KIND ARG...` as the command, and the probe reports what it could do. The list
// and the report are portable (checks.cc); each platform supplies a Host (how to start a process
// and capture its output, where to put the scratch files) and probe_tcp (its socket API).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cage::selftest {

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct Host {
  std::string exe;      // this cage binary (absolute)
  std::string scratch;  // an existing, private, empty directory under the user's home: the checks' files
  // Runs argv (argv[0] == exe) from "/" with `extra` added to this process's environment; output
  // (stdout and stderr) is captured. Returns the exit status (128+N for signal N), or -1.
  std::function<int(const std::vector<std::string>& argv, const EnvList& extra, std::string& output)> run;
  uint16_t listen_port = 0;  // a TCP listener on the host's 127.0.0.1 that accepts (kept open by the caller)
  // Programs that must start confined and exit 0, after the probe checks: Windows lists a System32
  // console program, one from Program Files and a .cmd shim (issue 24: the loader's and cmd.exe's
  // needs); empty elsewhere.
  struct Program {
    std::string name;
    std::vector<std::string> flags, command;
  };
  std::vector<Program> programs;
  // Denials this platform documents as not enforced: a check whose name starts with `first` that is
  // allowed (the probe succeeds) is reported as a GAP with `second` as the reason, not a FAIL.
  std::vector<std::pair<std::string, std::string>> gaps = {};
};

// Runs every check, prints PASS/FAIL lines (or one JSON object), returns 0 if all passed, else 1.
int run(const Host& host, bool json);

// The confined side: `cage --self-test-probe read PATH | write PATH | connect HOST PORT |
// proxy HOST PORT | env NAME`. Exit 0: done (or, for env, absent); 1: refused; 2: bad usage;
// 3: the proxy answered 403. Called by main before option parsing, with the whole argv as UTF-8.
int probe_main(const std::vector<std::string>& argv);
inline constexpr const char* kProbeFlag = "--self-test-probe";

// Platform side of the probe: TCP to host:port, send `out` if not empty, read until `until` is seen
// or EOF (up to 4 KiB) into `in`. Returns 0 or an errno-like code.
int probe_tcp(const std::string& host, uint16_t port, const std::string& out, const std::string& until,
              std::string& in);

}  // namespace cage::selftest
