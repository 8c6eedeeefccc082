// The --self-test harness (src/selftest/checks.cc) against fake sandboxes: one that confines nothing
// must fail every denial, one that behaves must pass all, and cage's own errors never count as a
// denial. (The real thing runs as the selftest.* CTest entries: cage --self-test on this kernel.)
#include "selftest/checks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace cage::selftest {
// The platform probe is not exercised here (the fakes never run the probe).
int probe_tcp(const std::string&, uint16_t, const std::string&, const std::string&, std::string&) { return 0; }
}  // namespace cage::selftest

namespace {

using namespace cage::selftest;

struct Scratch {
  std::string dir;
  Scratch() {
    char t[] = "/tmp/cage-selftest-unit.XXXXXX";
    dir = mkdtemp(t);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
};

std::vector<std::string> probe_of(const std::vector<std::string>& argv) {
  auto it = std::find(argv.begin(), argv.end(), kProbeFlag);
  return it == argv.end() ? std::vector<std::string>{} : std::vector<std::string>(it + 1, argv.end());
}

std::string report(const Host& h, int& status) {
  ::testing::internal::CaptureStdout();
  status = run(h, false);
  return ::testing::internal::GetCapturedStdout();
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(SelfTest, AnUnconfinedRunFailsEveryDenial) {
  Scratch s;
  Host h{"/usr/bin/cage", s.dir, nullptr, 4000, {}};
  h.run = [](const std::vector<std::string>& argv, const EnvList&, std::string&) {
    auto p = probe_of(argv);
    if (p[0] == "write") std::ofstream(p[1]) << "x";  // everything succeeds
    return 0;
  };
  int st;
  std::string out = report(h, st);
  EXPECT_EQ(st, 1);
  EXPECT_EQ(count(out, "FAIL  read denied"), 1u) << out;
  EXPECT_EQ(count(out, "FAIL  write denied"), 2u) << out;
  EXPECT_EQ(count(out, "FAIL  connect denied"), 3u) << out;
  EXPECT_EQ(count(out, "PASS  read allowed"), 1u) << out;
}

TEST(SelfTest, CagesOwnErrorIsNeverADenial) {
  Scratch s;
  Host h{"/usr/bin/cage", s.dir, nullptr, 4000, {}};
  h.run = [](const std::vector<std::string>&, const EnvList&, std::string& out) {
    out = "cage: spawn_sandbox_unavailable: ...\n";
    return 125;
  };
  int st;
  std::string out = report(h, st);
  EXPECT_EQ(st, 1);
  EXPECT_EQ(count(out, "PASS"), 0u) << out;
  EXPECT_NE(out.find("cage itself failed (exit 125): cage: spawn_sandbox_unavailable"), std::string::npos) << out;
}

TEST(SelfTest, AFaithfulSandboxPassesAllAndEveryRunIsConfinedToTheProbe) {
  Scratch s;
  Host h{"/usr/bin/cage", s.dir, nullptr, 4000, {}};
  std::vector<std::vector<std::string>> runs;
  h.run = [&](const std::vector<std::string>& argv, const EnvList& env, std::string&) {
    runs.push_back(argv);
    auto p = probe_of(argv);
    bool rw = std::find(argv.begin(), argv.end(), "--rw") != argv.end();
    bool ro_file = std::find(argv.begin(), argv.end(), p[1]) < std::find(argv.begin(), argv.end(), "--");
    if (p[0] == "read") return ro_file ? 0 : 1;
    if (p[0] == "write") {
      if (!rw) return 1;
      std::ofstream(p[1]) << "x";
      return 0;
    }
    if (p[0] == "connect") return 1;
    if (p[0] == "proxy") return p[2] == "4000" ? 0 : 3;
    return env.empty() ? 1 : 0;  // env: the variable is not passed on
  };
  int st;
  std::string out = report(h, st);
  EXPECT_EQ(st, 0) << out;
  EXPECT_EQ(count(out, "PASS"), runs.size());
  for (const auto& argv : runs) {
    ASSERT_GE(argv.size(), 4u);
    EXPECT_EQ(argv[1], "--no-cwd");  // the caller's directory (maybe $HOME) is never granted implicitly
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "--share-net"), 0);
  }
}

// A platform's program checks (Windows: System32, Program Files, a .cmd shim) run the program itself
// confined, with the check's flags, and pass only on exit 0.
TEST(SelfTest, ProgramsRunThemselvesConfined) {
  Scratch s;
  Host h{"/usr/bin/cage", s.dir, nullptr, 4000, {}};
  h.programs.push_back({"program starts: shim", {"--ro", s.dir}, {s.dir + "/shim.cmd", "two words"}});
  std::vector<std::string> seen;
  h.run = [&seen, &s](const std::vector<std::string>& argv, const EnvList&, std::string&) {
    if (std::find(argv.begin(), argv.end(), s.dir + "/shim.cmd") == argv.end()) {
      auto p = probe_of(argv);
      return p[0] == "read" && argv.size() > 5 && argv[4] == "--ro" ? 0 : p[0] == "env" ? 0 : 1;
    }
    seen = argv;
    return 0;
  };
  int st;
  std::string out = report(h, st);
  EXPECT_EQ(count(out, "PASS  program starts: shim"), 1u) << out;
  auto dash = std::find(seen.begin(), seen.end(), std::string("--"));
  ASSERT_NE(dash, seen.end());
  EXPECT_EQ(std::vector<std::string>(dash + 1, seen.end()),
            (std::vector<std::string>{s.dir + "/shim.cmd", "two words"}));
  EXPECT_NE(std::find(seen.begin(), dash, s.dir), dash) << "the check's own --ro";
  EXPECT_EQ(std::find(seen.begin(), seen.end(), std::string(kProbeFlag)), seen.end());
  h.run = [](const std::vector<std::string>&, const EnvList&, std::string&) { return 1; };
  out = report(h, st);
  EXPECT_EQ(count(out, "FAIL  program starts: shim"), 1u) << out;
}

// A denial the platform documents as not enforced (Windows: the loopback exemption opens every
// 127.0.0.1 listener to --net runs) is a GAP when the probe gets through, not a FAIL; the other
// denials still fail, and a gap never hides cage's own error.
TEST(SelfTest, ADocumentedGapIsReportedAsSuch) {
  Scratch s;
  Host h{"/usr/bin/cage", s.dir, nullptr, 4000, {}};
  h.gaps.push_back({"connect denied: direct TCP to 127.0.0.1:", "loopback is open to --net runs"});
  h.run = [](const std::vector<std::string>& argv, const EnvList& env, std::string&) {
    auto p = probe_of(argv);
    const bool net = std::find(argv.begin(), argv.end(), "--net") != argv.end();
    if (p[0] == "connect") return net ? 0 : 1;  // only the --net run gets through
    if (p[0] == "proxy") return p[2] == "4000" ? 0 : 3;
    if (p[0] == "read") return argv.size() > 5 && argv[4] == "--ro" ? 0 : 1;
    if (p[0] == "write") return std::find(argv.begin(), argv.end(), "--rw") != argv.end() ? 0 : 1;
    return env.empty() ? 1 : 0;
  };
  int st;
  std::string out = report(h, st);
  EXPECT_EQ(count(out, "GAP   connect denied: direct TCP to 127.0.0.1:4000 even with --net"), 1u) << out;
  EXPECT_EQ(count(out, "PASS  connect denied: direct TCP to the host's 127.0.0.1"), 1u) << out;
  EXPECT_NE(out.find("1 documented gap"), std::string::npos) << out;
}
