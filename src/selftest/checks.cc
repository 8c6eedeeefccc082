// The check list of `cage --self-test` and the probe that runs inside the sandbox (see checks.h).
// A denial passes only if the probe itself ran and was refused (exit 1) and, for writes, the file is
// absent on the host afterwards; an error of cage's own (125-127) fails the check, never passes it.
#include "common/exit_status.h"
#include "selftest/checks.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/json.h"
#include "proxy/http.h"

namespace cage::selftest {

namespace {

namespace fs = std::filesystem;

// Paths are UTF-8 on every platform (Windows' arguments come from GetCommandLineW): a path object
// made from UTF-8 opens through the wide API there, so a non-ASCII home or grant works.
fs::path utf8_path(const std::string& s) { return fs::path(std::u8string(s.begin(), s.end())); }

struct Check {
  std::string name;
  std::vector<std::string> flags;  // cage's options for this run (the probe's --ro grant is added)
  std::vector<std::string> probe;  // KIND ARG...
  int want;                        // the probe's expected exit status
  std::string absent;              // a host path that must not exist afterwards ("" none)
  std::string present;             // a host path that must exist afterwards ("" none)
  EnvList env;                     // added to cage's environment
  std::string gap = {};            // non-empty: on this platform the denial is a documented gap
  std::vector<std::string> command = {};  // non-empty: run this instead of the probe
};

std::vector<Check> checks(const Host& h) {
  const std::string d = h.scratch, secret = d + "/secret.txt", port = std::to_string(h.listen_port);
  const std::string other = std::to_string(h.listen_port == 65535 ? 65534 : h.listen_port + 1);
  std::vector<Check> c;
  c.push_back({"read denied: a file in the home directory that was not granted", {}, {"read", secret}, 1, "", "", {}});
  c.push_back({"read allowed: the same file granted with --ro", {"--ro", secret}, {"read", secret}, 0, "", "", {}});
  c.push_back({"write denied: a directory granted read-only (--ro)", {"--ro", d}, {"write", d + "/ro.txt"}, 1,
               d + "/ro.txt", "", {}});
  c.push_back({"write denied: the home directory, not granted", {}, {"write", d + "/none.txt"}, 1, d + "/none.txt",
               "", {}});
  c.push_back({"write allowed: the directory granted with --rw", {"--rw", d}, {"write", d + "/rw.txt"}, 0, "",
               d + "/rw.txt", {}});
  c.push_back({"connect denied: direct TCP to the host's 127.0.0.1:" + port + " without --net", {},
               {"connect", "127.0.0.1", port}, 1, "", "", {}});
  c.push_back({"connect denied: direct TCP to 127.0.0.1:" + port + " even with --net (only the proxy is reachable)",
               {"--net", "127.0.0.1:" + port, "--net-mode", "proxy"}, {"connect", "127.0.0.1", port}, 1, "", "", {}});
  c.push_back({"connect allowed: through cage's proxy to 127.0.0.1:" + port + " granted with --net",
               {"--net", "127.0.0.1:" + port}, {"proxy", "127.0.0.1", port}, 0, "", "", {}});
  c.push_back({"connect denied: the proxy refuses 127.0.0.1:" + other + " (not in the allowlist)",
               {"--net", "127.0.0.1:" + port}, {"proxy", "127.0.0.1", other}, 3, "", "", {}});
  c.push_back({"environment: a variable of the caller is not passed (CAGE_SELF_TEST_SECRET)", {},
               {"env", "CAGE_SELF_TEST_SECRET"}, 0, "", "", {{"CAGE_SELF_TEST_SECRET", "leaked"}}});
  for (const auto& p : h.programs) c.push_back({p.name, p.flags, {}, 0, "", "", {}, "", p.command});
  for (auto& check : c)
    for (const auto& [prefix, why] : h.gaps)
      if (check.name.rfind(prefix, 0) == 0) check.gap = why;
  return c;
}

struct Outcome {
  bool pass;
  std::string detail;
  int status = -1;  // the run's exit status
};

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

Outcome run_check(const Host& h, const Check& c) {
  std::vector<std::string> argv = {h.exe, "--no-cwd", "--ro", h.exe};
#if defined(__SANITIZE_ADDRESS__)
  // A sanitized build's probe is sanitized too: LeakSanitizer's tracer cannot run under the sandbox's
  // seccomp filter, so leak checking is off inside (the run outside keeps it).
  argv.insert(argv.end(), {"--setenv", "ASAN_OPTIONS=detect_leaks=0"});
#endif
  argv.insert(argv.end(), c.flags.begin(), c.flags.end());
  argv.push_back("--");
  if (c.command.empty()) {
    argv.insert(argv.end(), {h.exe, kProbeFlag});
    argv.insert(argv.end(), c.probe.begin(), c.probe.end());
  } else {
    argv.insert(argv.end(), c.command.begin(), c.command.end());
  }
  std::string out;
  int st = h.run(argv, c.env, out);
  std::error_code ec;
  if (st != c.want) {
    std::string why = st >= exit_status::kCageError || st < 0 ? "cage itself failed (exit " + std::to_string(st) + ")"
                                          : "probe exit " + std::to_string(st) + ", expected " + std::to_string(c.want);
    std::string l = last_line(out);
    return {false, l.empty() ? why : why + ": " + l, st};
  }
  if (!c.absent.empty() && fs::exists(utf8_path(c.absent), ec)) return {false, c.absent + " exists on the host", st};
  if (!c.present.empty() && !fs::exists(utf8_path(c.present), ec)) return {false, c.present + " missing on the host", st};
  return {true, "", st};
}

}  // namespace

int run(const Host& h, bool json) {
  {
    std::ofstream f(utf8_path(h.scratch + "/secret.txt"));
    f << "cage self-test secret\n";
    if (!f) {
      std::cerr << "cage: self-test: cannot write " << h.scratch << "/secret.txt" << std::endl;
      return exit_status::kCageError;
    }
  }
  toml::array results;
  int failed = 0, gaps = 0, n = 0;
  for (const auto& c : checks(h)) {
    Outcome o = run_check(h, c);
    ++n;
    // A denial the platform documents as not enforced is reported as a gap, not a failure, when the
    // sandbox ran and the probe did what it tried (exit 0); cage failing to start stays a failure.
    const bool gap = !o.pass && !c.gap.empty() && o.status == 0;
    failed += o.pass || gap ? 0 : 1;
    gaps += gap ? 1 : 0;
    if (json) {
      toml::table t;
      t.insert("check", c.name);
      t.insert("pass", o.pass);
      if (!o.pass) t.insert("detail", o.detail);
      if (gap) t.insert("gap", c.gap);
      results.push_back(std::move(t));
    } else {
      std::cout << (o.pass ? "PASS  " : gap ? "GAP   " : "FAIL  ") << c.name
                << (o.pass ? "" : "\n      " + o.detail) << (gap ? "\n      " + c.gap : "") << std::endl;
    }
  }
  if (json) {
    toml::table t;
    t.insert("checks", std::move(results));
    t.insert("passed", n - failed - gaps);
    t.insert("failed", failed);
    t.insert("gaps", gaps);
    std::cout << to_json(t) << std::endl;
  } else {
    std::cout << "cage self-test: " << n - failed - gaps << " passed, " << failed << " failed";
    if (gaps) std::cout << ", " << gaps << " documented gap" << (gaps == 1 ? "" : "s");
    std::cout << std::endl;
  }
  return failed == 0 ? 0 : 1;
}

namespace {

int refused(const std::string& what) {
  std::fprintf(stderr, "probe: %s: %s\n", what.c_str(), std::strerror(errno));
  return 1;
}


// CONNECT through $HTTPS_PROXY (http://[user:pass@]127.0.0.1:PORT), as a program honouring it would.
int probe_proxy(const std::string& host, const std::string& port) {
  const char* p = std::getenv("HTTPS_PROXY");
  std::string url = p ? p : "";
  if (url.rfind("http://", 0) != 0) {
    std::fprintf(stderr, "probe: HTTPS_PROXY is not set to an http:// proxy\n");
    return 1;
  }
  std::string rest = url.substr(7), auth;
  if (auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
  }
  auto colon = rest.rfind(':');
  if (colon == std::string::npos) return 2;
  std::string req = "CONNECT " + host + ":" + port + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\n";
  if (!auth.empty()) req += "Proxy-Authorization: Basic " + proxy::base64(auth) + "\r\n";
  req += "\r\n";
  std::string reply;
  int e = probe_tcp(rest.substr(0, colon), static_cast<uint16_t>(std::atoi(rest.c_str() + colon + 1)), req,
                    "\r\n\r\n", reply);
  if (e != 0) {
    std::fprintf(stderr, "probe: proxy %s: %s\n", rest.c_str(), std::strerror(e));
    return 1;
  }
  std::fprintf(stderr, "probe: proxy answered: %s\n", reply.substr(0, reply.find('\r')).c_str());
  if (reply.rfind("HTTP/1.1 200", 0) == 0) return 0;
  return reply.rfind("HTTP/1.1 403", 0) == 0 ? 3 : 1;
}

}  // namespace

int probe_main(const std::vector<std::string>& argv) {
  std::vector<std::string> a(argv.begin() + std::min<size_t>(2, argv.size()), argv.end());
  if (a.size() == 2 && a[0] == "read") {
    std::ifstream f(utf8_path(a[1]), std::ios::binary);
    char c;
    if (!f || !f.read(&c, 1)) return refused("read " + a[1]);
    return 0;
  }
  if (a.size() == 2 && a[0] == "write") {
    std::ofstream f(utf8_path(a[1]), std::ios::binary);
    if (!f || !(f << "cage\n")) return refused("write " + a[1]);
    f.close();
    return f ? 0 : refused("write " + a[1]);
  }
  if (a.size() == 3 && a[0] == "connect") {
    std::string in;
    int e = probe_tcp(a[1], static_cast<uint16_t>(std::atoi(a[2].c_str())), "", "", in);
    if (e == 0) return 0;
    std::fprintf(stderr, "probe: connect %s:%s: %s\n", a[1].c_str(), a[2].c_str(), std::strerror(e));
    return 1;
  }
  if (a.size() == 3 && a[0] == "proxy") return probe_proxy(a[1], a[2]);
  if (a.size() == 2 && a[0] == "env") return std::getenv(a[1].c_str()) ? 1 : 0;
  std::fprintf(stderr, "usage: cage %s read PATH | write PATH | connect HOST PORT | proxy HOST PORT | env NAME\n",
               kProbeFlag);
  return 2;
}

}  // namespace cage::selftest
