// --explain's seccomp observer (src/linux/seccomp_observe.h): the interpreter agrees with the profiles'
// own rules, and the rewritten pair of filters decides, for every call number and for arguments built
// from every constant the profiles compare with, exactly what the original filter and the listener
// decided before, except that an errno refusal or a kill outside the listener's own calls becomes a
// notification (which the supervisor answers with the same errno, or with a SIGKILL of the caller's
// process; never CONTINUE).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "linux/connect_notify.h"
#include "linux/seccomp_observe.h"
#include "linux/seccomp_profiles.h"
#include "linux/seccomp_rules.h"

namespace cage::lx::seccomp {
namespace {

using policy::SeccompProfile;

seccomp_data call(int nr, uint32_t arch = kNativeArch) {
  seccomp_data d{};
  d.nr = nr;
  d.arch = arch;
  return d;
}

// The kernel keeps the action with the lowest value as a signed 32-bit number (KILL_PROCESS first).
uint32_t strongest(uint32_t a, uint32_t b) {
  auto rank = [](uint32_t x) { return static_cast<int32_t>(x & SECCOMP_RET_ACTION_FULL); };
  return rank(a) <= rank(b) ? a : b;
}

uint32_t action(uint32_t r) { return r & SECCOMP_RET_ACTION_FULL; }

int nr_of(const char* name) { return seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, name); }

TEST(SeccompObserve, InterpreterAgreesWithTheProfilesRules) {
  auto def = embedded_filter(SeccompProfile::default_profile);
  EXPECT_EQ(evaluate(def, call(nr_of("ptrace"))), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(evaluate(def, call(nr_of("clone3"))), SECCOMP_RET_ERRNO | ENOSYS);
  EXPECT_EQ(evaluate(def, call(nr_of("clock_settime"))), SECCOMP_RET_KILL_PROCESS);
  EXPECT_EQ(evaluate(def, call(nr_of("getpid"))), SECCOMP_RET_ALLOW);
  EXPECT_EQ(evaluate(def, call(nr_of("getpid"), AUDIT_ARCH_I386)), SECCOMP_RET_KILL_PROCESS);  // %compat deny
  auto ioctl = call(nr_of("ioctl"));
  ioctl.args[1] = 0x5412;  // TIOCSTI: refused by the floor in every profile
  for (auto p : {SeccompProfile::none, SeccompProfile::default_profile, SeccompProfile::relaxed})
    EXPECT_EQ(evaluate(embedded_filter(p), ioctl), SECCOMP_RET_ERRNO | EPERM);
  ioctl.args[1] = 0x5401;  // TCGETS
  EXPECT_EQ(evaluate(def, ioctl), SECCOMP_RET_ALLOW);
  auto relaxed = embedded_filter(SeccompProfile::relaxed);
  EXPECT_EQ(evaluate(relaxed, call(nr_of("ptrace"))), SECCOMP_RET_ALLOW);
  EXPECT_EQ(evaluate(relaxed, call(nr_of("reboot"))), SECCOMP_RET_ERRNO | EPERM);
}

TEST(SeccompObserve, MalformedProgramsAreNeverAnErrno) {
  const sock_filter jump_out[] = {BPF_STMT(BPF_JMP | BPF_JA, 5), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO)};
  EXPECT_EQ(evaluate(jump_out, call(0)), SECCOMP_RET_KILL_PROCESS);
  const sock_filter unaligned[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), BPF_STMT(BPF_RET | BPF_A, 0)};
  EXPECT_EQ(evaluate(unaligned, call(0)), SECCOMP_RET_KILL_PROCESS);
  const sock_filter no_return[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0)};
  EXPECT_EQ(evaluate(no_return, call(0)), SECCOMP_RET_KILL_PROCESS);
  EXPECT_FALSE(observe_refusals(unaligned, {}, kNativeArch, kForeignNrBit));  // a computed return
}

std::string data_file(const std::string& name) {
  std::ifstream in(std::string(CAGE_SOURCE_DIR) + "/seccomp/" + name + ".txt");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The rules of a profile as cage loads it (floor.txt first; "none" is the floor alone).
std::vector<Rule> rules_of(SeccompProfile p) {
  auto floor = parse_profile(data_file("floor"), "floor");
  EXPECT_TRUE(floor);
  if (p == SeccompProfile::none) return floor->rules;
  auto own = parse_profile(data_file(p == SeccompProfile::relaxed ? "relaxed" : "default"), "profile");
  EXPECT_TRUE(own);
  return with_floor(*floor, *own).rules;
}

// One value of an argument that satisfies the condition.
uint64_t satisfying(const Condition& c) {
  const uint64_t v = c.values.empty() ? 0 : c.values.front();
  switch (c.op) {
    case Op::eq: case Op::in: case Op::any_bit: return v;
    case Op::ne: case Op::gt: return v + 1;
    case Op::lt: return v ? v - 1 : 0;
    case Op::not_in: {
      uint64_t x = 0x7fff;
      while (std::find(c.values.begin(), c.values.end(), x) != c.values.end()) ++x;
      return x;
    }
  }
  return v;
}

// Arguments worth trying for a call: zero; every constant the program compares with, in each of
// the first four arguments; and, for each rule on the call, arguments meeting all its conditions
// at once (the floor's open/openat rules AND two of them).
std::vector<seccomp_data> variants(std::span<const sock_filter> prog, const std::vector<Rule>& rules, int nr,
                                   uint32_t arch) {
  std::set<uint32_t> ks = {0};
  for (const auto& i : prog)
    if (BPF_CLASS(i.code) == BPF_JMP && BPF_OP(i.code) != BPF_JA) ks.insert(i.k);
  std::vector<seccomp_data> out = {call(nr, arch)};
  for (unsigned a = 0; a < 4; ++a)
    for (uint32_t k : ks) {
      auto d = call(nr, arch);
      d.args[a] = k;
      out.push_back(d);
    }
  for (const auto& r : rules) {
    if (r.conditions.empty() || nr_of(r.name.c_str()) != (nr & ~static_cast<int>(kForeignNrBit))) continue;
    auto d = call(nr, arch);
    for (const auto& c : r.conditions) d.args[c.arg] = satisfying(c);
    out.push_back(d);
  }
  return out;
}

TEST(SeccompObserve, ThePairDecidesWhatTheOriginalDecided) {
  for (auto p : {SeccompProfile::none, SeccompProfile::default_profile, SeccompProfile::relaxed})
    for (int mode = 0; mode < 5; ++mode) {
      // Landlock-only's connect and metadata mediation in each combination, and the hand-off (mode 4).
      const bool connect = mode & 1, metadata = mode & 2, handoff = mode == 4;
      auto original = embedded_filter(p);
      const auto rules = rules_of(p);
      const auto notified = connect_notify::notified_calls(connect, metadata, true, handoff);
      auto pair = observe_refusals(original, notified, kNativeArch, kForeignNrBit);
      ASSERT_TRUE(pair);
      const auto before = connect_notify::filter(connect, metadata, true, handoff);
      const auto after = connect_notify::filter(connect, metadata, true, handoff, pair->tail);
      ASSERT_LE(after.size(), BPF_MAXINSNS);
      ASSERT_LE(pair->main.size(), BPF_MAXINSNS);
      const std::set<int> listener_calls(notified.begin(), notified.end());
      size_t notifications = 0, own_refusals = 0, kills = 0;
      for (uint32_t arch : {kNativeArch, uint32_t{AUDIT_ARCH_I386}})
        for (int nr = 0; nr < 470; ++nr)
          for (int x32 : {0, 1}) {
            const int n = nr + (x32 && kForeignNrBit ? static_cast<int>(kForeignNrBit) : 0);
            for (const auto& d : variants(original, rules, n, arch)) {
              const uint32_t legacy = strongest(evaluate(original, d), evaluate(before, d));
              const uint32_t now = strongest(evaluate(pair->main, d), evaluate(after, d));
              const bool own = arch == kNativeArch && !(n & kForeignNrBit) && listener_calls.count(n);
              const bool observed = action(legacy) == SECCOMP_RET_ERRNO || is_kill(legacy);
              if (observed && !own && arch == kNativeArch && !(n & kForeignNrBit)) {
                ASSERT_EQ(now, SECCOMP_RET_USER_NOTIF) << "nr " << n << " profile " << static_cast<int>(p);
                // What the supervisor judges by: the original's own answer, an errno or a kill.
                ASSERT_EQ(action(evaluate(original, d)), action(legacy));
                ++notifications;
                kills += is_kill(legacy);
              } else {
                if (own && action(legacy) == SECCOMP_RET_ERRNO) ++own_refusals;
                ASSERT_EQ(now, legacy) << "nr " << n << " arch " << arch << " profile " << static_cast<int>(p)
                                       << " mode " << mode;
              }
            }
          }
      EXPECT_GT(notifications, 0u);
      EXPECT_GT(own_refusals, 0u);  // the floor's set-id rule on openat, a call the listener observes
      if (p == SeccompProfile::default_profile) {
        EXPECT_GT(kills, 0u);  // clock_settime, reboot...
      }
    }
}

// date -s under the default profile: the native call reaches the supervisor, which judges it a
// kill; the same call through another architecture's entry point is still killed by the kernel.
TEST(SeccompObserve, AKilledCallIsNotifiedAndJudgedAKill) {
  auto original = embedded_filter(SeccompProfile::default_profile);
  auto pair = observe_refusals(original, connect_notify::notified_calls(false, false, true, false), kNativeArch,
                               kForeignNrBit);
  ASSERT_TRUE(pair);
  const auto listener = connect_notify::filter(false, false, true, false, pair->tail);
  const auto d = call(nr_of("clock_settime"));
  EXPECT_EQ(evaluate(pair->main, d), SECCOMP_RET_ALLOW);
  EXPECT_EQ(evaluate(listener, d), SECCOMP_RET_USER_NOTIF);
  EXPECT_TRUE(is_kill(evaluate(original, d)));
  EXPECT_FALSE(is_kill(evaluate(original, call(nr_of("ptrace")))));
  const auto i386 = call(25 /* i386 stime */, AUDIT_ARCH_I386);
  EXPECT_TRUE(is_kill(evaluate(pair->main, i386)));
}

// The hand-off's listener filter (connect_notify.cc): connect, bind and listen are notified; TCP Fast
// Open on every send call and the source-route options are refused in the filter; every other call,
// and every call of another ABI, never reaches a handed-off socket (refused: the hand-off runs only
// under the default profile, which kills those entry points anyway).
TEST(ConnectNotifyFilter, HandoffNotifiesAndRefusesWhatCouldReAimAHostSocket) {
  const auto f = connect_notify::filter(false, false, false, true);
  auto eval = [&](int nr, std::initializer_list<std::pair<int, uint64_t>> args, uint32_t arch = kNativeArch) {
    auto d = call(nr, arch);
    for (auto [i, v] : args) d.args[i] = v;
    return evaluate(f, d);
  };
  constexpr uint32_t kRefused = SECCOMP_RET_ERRNO | EPERM;
  for (const char* n : {"connect", "bind", "listen"}) EXPECT_EQ(eval(nr_of(n), {}), SECCOMP_RET_USER_NOTIF) << n;
  EXPECT_EQ(eval(nr_of("sendto"), {{3, MSG_FASTOPEN}}), kRefused);
  EXPECT_EQ(eval(nr_of("sendmsg"), {{2, MSG_FASTOPEN | MSG_NOSIGNAL}}), kRefused);
  EXPECT_EQ(eval(nr_of("sendmmsg"), {{3, MSG_FASTOPEN}}), kRefused);
  EXPECT_EQ(eval(nr_of("sendto"), {{3, MSG_NOSIGNAL}}), SECCOMP_RET_ALLOW);
  EXPECT_EQ(eval(nr_of("sendmsg"), {{2, 0}}), SECCOMP_RET_ALLOW);
  EXPECT_EQ(eval(nr_of("setsockopt"), {{1, IPPROTO_IP}, {2, IP_OPTIONS}}), kRefused);
  EXPECT_EQ(eval(nr_of("setsockopt"), {{1, IPPROTO_IPV6}, {2, IPV6_RTHDR}}), kRefused);
  EXPECT_EQ(eval(nr_of("setsockopt"), {{1, IPPROTO_IPV6}, {2, IPV6_2292PKTOPTIONS}}), kRefused);
  EXPECT_EQ(eval(nr_of("setsockopt"), {{1, IPPROTO_TCP}, {2, IP_OPTIONS}}), SECCOMP_RET_ALLOW);  // TCP_MAXSEG
  EXPECT_EQ(eval(nr_of("setsockopt"), {{1, SOL_SOCKET}, {2, SO_KEEPALIVE}}), SECCOMP_RET_ALLOW);
  EXPECT_EQ(eval(nr_of("getpid"), {}), SECCOMP_RET_ALLOW);
  EXPECT_EQ(eval(362 /* i386 connect */, {}, AUDIT_ARCH_I386), kRefused);
  if (kForeignNrBit) {
    EXPECT_EQ(eval(static_cast<int>(kForeignNrBit) + nr_of("connect"), {}), kRefused);
  }
}

TEST(SeccompObserve, CallNamesComeFromTheProfiles) {
  EXPECT_EQ(call_name(nr_of("ptrace")), "ptrace");
  EXPECT_EQ(call_name(nr_of("keyctl")), "keyctl");
  EXPECT_EQ(call_name(nr_of("getpid")), "");
}

}  // namespace
}  // namespace cage::lx::seccomp
