// What the seccomp filter costs at start-up, measured both ways the issue allows:
//  (a) build at start-up: parse seccomp/<profile>.txt and build + export the BPF with libseccomp;
//  (b) build at build time (what cage does): build_program() copies the embedded BPF.
// Plus the child-side load_program() (one seccomp(2) call). Prints the median of N runs in µs.
// Run: build/cage_seccomp_bench [N]
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "linux/seccomp.h"
#include "linux/seccomp_rules.h"

using namespace cage;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double time_us(int n, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return median(t);
}

// load_program() in a fresh child each time (a filter, once loaded, stays).
double load_us(const lx::seccomp::Program& prog, int n) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      auto start = Clock::now();
      int err = lx::seccomp::load_program(prog);
      double us = err ? -1 : std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      (void)!write(fds[1], &us, sizeof us);
      _exit(0);
    }
    double us = -1;
    (void)!read(fds[0], &us, sizeof us);
    close(fds[0]), close(fds[1]);
    waitpid(pid, nullptr, 0);
    t.push_back(us);
  }
  return median(t);
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 200;
  auto arches = lx::seccomp::arch_set(CAGE_SECCOMP_ARCH);
  if (!arches) return 1;
  std::printf("%-9s %8s %22s %20s %14s\n", "profile", "insns", "libseccomp build+export", "embedded copy (cage)",
              "load (child)");
  auto read = [](const std::string& name) {
    std::ifstream in(std::string(CAGE_SOURCE_DIR) + "/seccomp/" + name + ".txt");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string floor_text = read("floor");
  for (auto [name, profile] : {std::pair{"default", policy::SeccompProfile::default_profile},
                               std::pair{"relaxed", policy::SeccompProfile::relaxed},
                               std::pair{"none", policy::SeccompProfile::none}}) {
    const std::string text = std::string(name) == "none" ? std::string() : read(name);
    size_t insns = 0;
    double build = time_us(n, [&] {
      auto floor = lx::seccomp::parse_profile(floor_text, "floor");
      auto p = text.empty() ? floor : lx::seccomp::parse_profile(text, name);
      auto bpf = lx::seccomp::compile_profile(text.empty() ? *floor : lx::seccomp::with_floor(*floor, *p), *arches);
      insns = bpf->size();
    });
    lx::seccomp::Program prog;
    double copy = time_us(n, [&] { prog = *lx::seccomp::build_program(lx::SeccompPlan{profile}); });
    double load = load_us(prog, std::min(n, 50));
    std::printf("%-9s %8zu %19.1f us %17.1f us %11.1f us\n", name, insns, build, copy, load);
  }
  return 0;
}
