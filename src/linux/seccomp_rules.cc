// Seccomp profile data -> BPF. The parser is pure; compile_profile drives libseccomp. Runs at build
// time (seccomp/gen_profiles.cc embeds the result in cage) and in the unit tests, which check that
// the embedded BPF is exactly what libseccomp builds from seccomp/*.txt today.
#include "linux/seccomp_rules.h"

#include <sched.h>
#include <seccomp.h>  // needs the kernel's <linux/seccomp.h>: this TU is built with -iquote src, not -I src
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>
#include <linux/fscrypt.h>
#include <linux/kd.h>
#include <linux/netlink.h>
#include <linux/vt.h>

#include <cerrno>

#include <algorithm>
#include <charconv>
#include <memory>
#include <set>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef AF_QIPCRTR
#define AF_QIPCRTR 42
#endif
#ifndef AF_MCTP
#define AF_MCTP 45  // the last family of Linux 6.18; older libc headers lack it
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000  // the same on x86_64 and aarch64 (asm-generic)
#endif

namespace cage::lx::seccomp {
namespace {

struct Constant {
  std::string_view name;
  uint64_t value;
};
// Symbolic names the data files may use. Values come from the headers of the build.
constexpr Constant kConstants[] = {
    {"CLONE_NEWNS", CLONE_NEWNS},         {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
    {"CLONE_NEWUTS", CLONE_NEWUTS},       {"CLONE_NEWIPC", CLONE_NEWIPC},
    {"CLONE_NEWUSER", CLONE_NEWUSER},     {"CLONE_NEWPID", CLONE_NEWPID},
    {"CLONE_NEWNET", CLONE_NEWNET},       {"CLONE_NEWTIME", CLONE_NEWTIME},
    {"AF_UNIX", AF_UNIX},                 {"AF_INET", AF_INET},
    {"AF_INET6", AF_INET6},               {"AF_NETLINK", AF_NETLINK},
    {"AF_PACKET", AF_PACKET},             {"NETLINK_ROUTE", NETLINK_ROUTE},
    {"TIOCSTI", TIOCSTI},                 {"TIOCLINUX", TIOCLINUX},
    {"TIOCSETD", TIOCSETD},               {"TIOCEXCL", TIOCEXCL},
    {"PER_LINUX", PER_LINUX},             {"PER_LINUX32", PER_LINUX32},
    {"ADDR_NO_RANDOMIZE", ADDR_NO_RANDOMIZE},
    {"S_ISUID", S_ISUID},                 {"S_ISGID", S_ISGID},
    {"AF_VSOCK", AF_VSOCK},               {"AF_QIPCRTR", AF_QIPCRTR},
    {"AF_MCTP", AF_MCTP},                 {"O_CREAT", O_CREAT},
    {"__O_TMPFILE", __O_TMPFILE},         {"F_SETLEASE", F_SETLEASE},
    {"F_UNLCK", F_UNLCK},
    {"IPPROTO_TCP", IPPROTO_TCP},         {"MSG_FASTOPEN", MSG_FASTOPEN},
    // Linux virtual console (<linux/kd.h>, <linux/vt.h>): the calls that change its state.
    {"KIOCSOUND", KIOCSOUND},             {"KDMKTONE", KDMKTONE},
    {"KDSETLED", KDSETLED},               {"KDSKBLED", KDSKBLED},
    {"KDSETMODE", KDSETMODE},             {"KDSKBMODE", KDSKBMODE},
    {"KDSKBMETA", KDSKBMETA},             {"KDSKBENT", KDSKBENT},
    {"KDSKBSENT", KDSKBSENT},             {"KDSKBDIACR", KDSKBDIACR},
    {"KDSKBDIACRUC", KDSKBDIACRUC},       {"KDSETKEYCODE", KDSETKEYCODE},
    {"KDSIGACCEPT", KDSIGACCEPT},         {"KDKBDREP", KDKBDREP},
    {"KDFONTOP", KDFONTOP},               {"PIO_FONT", PIO_FONT},
    {"PIO_FONTX", PIO_FONTX},             {"PIO_FONTRESET", PIO_FONTRESET},
    {"PIO_CMAP", PIO_CMAP},               {"PIO_SCRNMAP", PIO_SCRNMAP},
    {"PIO_UNISCRNMAP", PIO_UNISCRNMAP},   {"PIO_UNIMAP", PIO_UNIMAP},
    {"PIO_UNIMAPCLR", PIO_UNIMAPCLR},     {"KDADDIO", KDADDIO},
    {"KDDELIO", KDDELIO},                 {"KDENABIO", KDENABIO},
    {"KDDISABIO", KDDISABIO},             {"VT_SETMODE", VT_SETMODE},
    {"VT_RELDISP", VT_RELDISP},           {"VT_ACTIVATE", VT_ACTIVATE},
    {"VT_SETACTIVATE", VT_SETACTIVATE},   {"VT_WAITACTIVE", VT_WAITACTIVE},
    {"VT_DISALLOCATE", VT_DISALLOCATE},   {"VT_RESIZE", VT_RESIZE},
    {"VT_RESIZEX", VT_RESIZEX},           {"VT_LOCKSWITCH", VT_LOCKSWITCH},
    {"VT_UNLOCKSWITCH", VT_UNLOCKSWITCH},
    // fscrypt's filesystem-wide keyring (<linux/fscrypt.h>).
    {"FS_IOC_ADD_ENCRYPTION_KEY", FS_IOC_ADD_ENCRYPTION_KEY},
    {"FS_IOC_REMOVE_ENCRYPTION_KEY", FS_IOC_REMOVE_ENCRYPTION_KEY},
    {"FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS", FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool parse_term(std::string_view t, uint64_t& out) {
  for (const auto& c : kConstants)
    if (c.name == t) return out = c.value, true;
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, t.remove_prefix(2);
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out, base);
  return ec == std::errc{} && end == t.data() + t.size() && !t.empty();
}

// VALUE := term ('|' term)*
bool parse_value(std::string_view v, uint64_t& out) {
  out = 0;
  for (auto term : split(v, '|')) {
    uint64_t x = 0;
    if (!parse_term(term, x)) return false;
    out |= x;
  }
  return true;
}

bool valid_name(std::string_view n) {
  return !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// A %when condition: "always", or a lower-case name, negated by a leading '!'.
bool valid_condition(std::string_view w) {
  if (!w.empty() && w.front() == '!') w.remove_prefix(1);
  auto name_char = [](char c) { return (c >= 'a' && c <= 'z') || c == '-'; };
  return !w.empty() && std::all_of(w.begin(), w.end(), name_char);
}

// "a0", "a1:32" (low 32 bits), "a1&0xf" (masked).
std::string parse_argument(std::string_view arg, Condition& c) {
  if (arg.size() < 2 || arg[0] != 'a' || arg[1] < '0' || arg[1] > '5') return "expected a0..a5, got '" + std::string(arg) + "'";
  c.arg = static_cast<unsigned>(arg[1] - '0');
  if (arg.size() == 5 && arg.substr(2) == ":32") c.low32 = true;
  else if (arg.size() > 3 && arg[2] == '&' && parse_value(arg.substr(3), c.mask) && c.mask != 0) return {};
  else if (arg.size() != 2) return "expected a0..a5, a0:32..a5:32 or a0&MASK, got '" + std::string(arg) + "'";
  return {};
}

std::string parse_operator(std::string_view op, Condition& c) {
  if (op == "==") c.op = Op::eq;
  else if (op == "!=") c.op = Op::ne;
  else if (op == "&") c.op = Op::any_bit;
  else if (op == "notin") c.op = Op::not_in;
  else if (op == "in") c.op = Op::in;
  else if (op == "<") c.op = Op::lt;
  else if (op == ">") c.op = Op::gt;
  else return "unknown operator '" + std::string(op) + "' (==, !=, &, in, notin, <, >)";
  if (c.mask && c.op != Op::eq && c.op != Op::in) return "a masked argument takes == or in";
  // libseccomp's < and > compare the whole register; a low-32-bit form would need a mask they lack.
  if (c.low32 && (c.op == Op::lt || c.op == Op::gt)) return "'<' and '>' compare the whole register: use aN";
  return {};
}

// "a0 & X|Y", "a1:32 == TIOCSTI", "a0:32 notin A,B", "a2 != 0", "a0 < AF_INET", "a1&0xf in 0,2..15"
std::string parse_condition(std::string_view arg, std::string_view op, std::string_view val, Condition& c) {
  if (auto err = parse_argument(arg, c); !err.empty()) return err;
  if (auto err = parse_operator(op, c); !err.empty()) return err;
  const bool list = c.op == Op::not_in || c.op == Op::in;
  auto parts = list ? split(val, ',') : std::vector<std::string_view>{val};
  for (auto p : parts) {
    uint64_t x = 0, hi = 0;
    // "LO..HI" inside an in or notin list: every value of the range (at most 4096 of them).
    if (size_t dots = p.find(".."); list && dots != std::string_view::npos) {
      if (!parse_value(p.substr(0, dots), x) || !parse_value(p.substr(dots + 2), hi) || hi < x || hi - x >= 4096)
        return "bad range '" + std::string(p) + "'";
      if (c.low32 && hi > 0xffffffffu) return "range '" + std::string(p) + "' does not fit aN:32";
      for (uint64_t v = x; v <= hi; ++v) c.values.push_back(v);
      continue;
    }
    if (!parse_value(p, x)) return "unknown value '" + std::string(p) + "'";
    if (c.low32 && x > 0xffffffffu) return "value '" + std::string(p) + "' does not fit aN:32";
    c.values.push_back(x);
  }
  if (c.op == Op::any_bit && c.values[0] == 0) return "'&' needs at least one bit";
  for (uint64_t v : c.values)
    if (c.mask && (v & ~c.mask)) return "value " + std::to_string(v) + " has bits outside the mask";
  return {};
}

std::string parse_entry(const std::vector<std::string_view>& t, Rule& r) {
  if (!valid_name(t[0])) return "bad syscall name '" + std::string(t[0]) + "'";
  r.name = std::string(t[0]);
  if (t.size() < 2) return "missing action (eperm, enosys, kill)";
  if (t[1] == "eperm") r.action = Action::eperm;
  else if (t[1] == "enosys") r.action = Action::enosys;
  else if (t[1] == "kill") r.action = Action::kill;
  else return "unknown action '" + std::string(t[1]) + "' (eperm, enosys, kill)";
  if ((t.size() - 2) % 3 != 0) return "conditions come as 'aN op value' triples";
  std::set<unsigned> args;
  for (size_t i = 2; i < t.size(); i += 3) {
    Condition c;
    if (auto err = parse_condition(t[i], t[i + 1], t[i + 2], c); !err.empty()) return err;
    // libseccomp allows one comparison per argument and rule; `notin` expands into several rules.
    if (!args.insert(c.arg).second) return "two conditions on a" + std::to_string(c.arg);
    r.conditions.push_back(std::move(c));
  }
  return {};
}

}  // namespace

Result<Profile> parse_profile(std::string_view text, std::string file) {
  Profile p;
  p.file = std::move(file);
  bool compat_seen = false;
  std::string when;  // the last %when: it applies to every rule below it
  int lineno = 0;
  for (auto raw : split(text, '\n')) {
    ++lineno;
    std::string_view line = raw, why;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) {
      why = trim(line.substr(hash + 1));
      line = line.substr(0, hash);
    }
    auto t = tokens(line);
    if (t.empty()) continue;
    auto where = p.file + ":" + std::to_string(lineno);
    if (why.empty()) return invalid(where, "entry '" + std::string(t[0]) + "' has no reason ('# why')");
    if (t[0] == "%compat") {
      if (t.size() != 2 || (t[1] != "deny" && t[1] != "filter" && t[1] != "native"))
        return invalid(where, "expected '%compat deny', '%compat filter' or '%compat native'");
      p.compat = t[1] == "deny" ? Compat::deny : t[1] == "filter" ? Compat::filter : Compat::native;
      compat_seen = true;
      continue;
    }
    if (t[0] == "%when") {
      if (t.size() != 2 || !valid_condition(t[1]))
        return invalid(where, "expected '%when always' or '%when [!]name'");
      when = t[1] == "always" ? "" : std::string(t[1]);
      continue;
    }
    Rule r;
    r.line = lineno;
    r.when = when;
    r.why = std::string(why);
    if (auto err = parse_entry(t, r); !err.empty()) return invalid(where, err);
    p.rules.push_back(std::move(r));
  }
  // The handling of 32-bit entry points is a decision every profile must state.
  if (!compat_seen) return invalid(p.file, "missing '%compat deny|filter' line");
  return p;
}

Profile with_floor(const Profile& floor, const Profile& p) {
  Profile out = p;
  out.rules = floor.rules;
  out.rules.insert(out.rules.end(), p.rules.begin(), p.rules.end());
  return out;
}

Result<ArchSet> arch_set(std::string_view target) {
  if (target == "x86_64" || target == "amd64" || target == "AMD64")
    return ArchSet{SCMP_ARCH_X86_64, {SCMP_ARCH_X86, SCMP_ARCH_X32}};
  if (target == "aarch64" || target == "arm64") return ArchSet{SCMP_ARCH_AARCH64, {SCMP_ARCH_ARM}};
  return invalid(std::string(target), "no seccomp architecture mapping for this target",
                 "add it to arch_set() in src/linux/seccomp_rules.cc");
}

namespace {

// Every architecture libseccomp 2.5 knows, for the typo check.
constexpr uint32_t kAllArches[] = {
    SCMP_ARCH_X86,     SCMP_ARCH_X86_64,  SCMP_ARCH_X32,    SCMP_ARCH_ARM,     SCMP_ARCH_AARCH64,
    SCMP_ARCH_MIPS,    SCMP_ARCH_MIPS64,  SCMP_ARCH_MIPS64N32, SCMP_ARCH_MIPSEL, SCMP_ARCH_MIPSEL64,
    SCMP_ARCH_MIPSEL64N32, SCMP_ARCH_PPC, SCMP_ARCH_PPC64,  SCMP_ARCH_PPC64LE, SCMP_ARCH_S390,
    SCMP_ARCH_S390X,   SCMP_ARCH_PARISC,  SCMP_ARCH_PARISC64, SCMP_ARCH_RISCV64,
};

// "463": a syscall newer than libseccomp, by number (the same on every architecture since Linux 5.1).
bool is_number(const std::string& name) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return !name.empty() && name.size() <= 4 && std::all_of(name.begin(), name.end(), digit);
}

// libseccomp answers a real number, a socketcall/ipc multiplex number (-100..-199), or a pseudo
// number (<= -10000) for a name that exists elsewhere but not on this arch.
bool exists_on(uint32_t arch, const char* name) {
  int nr = seccomp_syscall_resolve_name_arch(arch, name);
  return nr >= 0 || (nr <= -100 && nr > -10000);
}

uint32_t action_of(Action a) {
  switch (a) {
    case Action::eperm: return SCMP_ACT_ERRNO(EPERM);
    case Action::enosys: return SCMP_ACT_ERRNO(ENOSYS);
    case Action::kill: return SCMP_ACT_KILL_PROCESS;
  }
  return SCMP_ACT_KILL_PROCESS;
}

// Covers [lo, hi] with aligned power-of-two blocks, each one masked-equal comparison.
void cover(uint64_t lo, uint64_t hi, uint64_t width_mask, unsigned arg, std::vector<scmp_arg_cmp>& out) {
  for (;;) {
    unsigned k = 0;
    while (k < 63 && (lo & ((uint64_t{2} << k) - 1)) == 0 && lo + ((uint64_t{2} << k) - 1) <= hi &&
           lo + ((uint64_t{2} << k) - 1) >= lo)
      ++k;
    uint64_t size_minus_1 = (uint64_t{1} << k) - 1;
    out.push_back(scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, width_mask & ~size_minus_1, lo});
    if (lo + size_minus_1 >= hi) return;
    lo += size_minus_1 + 1;
  }
}

// One condition -> the comparisons any one of which satisfies it.
std::vector<scmp_arg_cmp> alternatives(const Condition& c) {
  const uint64_t width = c.low32 ? 0xffffffffu : ~uint64_t{0};
  std::vector<scmp_arg_cmp> out;
  switch (c.op) {
    case Op::eq:
      if (c.mask) out.push_back({c.arg, SCMP_CMP_MASKED_EQ, c.mask, c.values[0]});
      else if (c.low32) out.push_back({c.arg, SCMP_CMP_MASKED_EQ, width, c.values[0]});
      else out.push_back({c.arg, SCMP_CMP_EQ, c.values[0], 0});
      return out;
    case Op::in:  // one rule per value, in the order written
      for (uint64_t v : c.values)
        out.push_back(alternatives(Condition{c.arg, c.low32, c.mask, Op::eq, {v}})[0]);
      return out;
    case Op::lt: return {{c.arg, SCMP_CMP_LT, c.values[0], 0}};
    case Op::gt: return {{c.arg, SCMP_CMP_GT, c.values[0], 0}};
    case Op::ne:
      if (!c.low32) return {{c.arg, SCMP_CMP_NE, c.values[0], 0}};
      return alternatives(Condition{c.arg, true, 0, Op::not_in, c.values});
    case Op::any_bit:
      for (unsigned b = 0; b < 64; ++b)
        if (c.values[0] & (uint64_t{1} << b))
          out.push_back({c.arg, SCMP_CMP_MASKED_EQ, uint64_t{1} << b, uint64_t{1} << b});
      return out;
    case Op::not_in: {
      std::set<uint64_t> s(c.values.begin(), c.values.end());
      uint64_t next = 0;  // lowest value not yet covered or excluded
      bool done = false;
      for (uint64_t v : s) {
        if (v > next) cover(next, v - 1, width, c.arg, out);
        if (v == width) done = true;
        else next = v + 1;
      }
      if (!done) cover(next, width, width, c.arg, out);
      return out;
    }
  }
  return out;
}

struct CtxDeleter {
  void operator()(void* c) const { seccomp_release(c); }
};

}  // namespace

std::vector<std::string> unknown_everywhere(const Profile& p) {
  std::vector<std::string> out;
  for (const auto& r : p.rules)
    if (!is_number(r.name) && std::none_of(std::begin(kAllArches), std::end(kAllArches),
                     [&](uint32_t a) { return exists_on(a, r.name.c_str()); }))
      out.push_back(p.file + ":" + std::to_string(r.line) + " " + r.name);
  return out;
}

namespace {

using Ctx = std::unique_ptr<void, CtxDeleter>;

// The filter's architectures, and how it answers the others.
Status set_up_filter(const Profile& p, const ArchSet& arches, void* ctx, std::vector<uint32_t>& archs) {
  auto fail = [&](std::string what, int rc) { return invalid(p.file, what + ": " + std::to_string(rc)); };
  archs = {arches.native};
  if (p.compat == Compat::filter) archs.insert(archs.end(), arches.compat.begin(), arches.compat.end());
  if (seccomp_arch_native() != arches.native) {
    if (int rc = seccomp_arch_add(ctx, arches.native); rc) return fail("seccomp_arch_add", rc);
    if (int rc = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE); rc) return fail("seccomp_arch_remove", rc);
  }
  for (size_t i = 1; i < archs.size(); ++i)
    if (int rc = seccomp_arch_add(ctx, archs[i]); rc) return fail("seccomp_arch_add", rc);
  // A supplement keeps libseccomp's defaults: the profile beneath it has decided the other ABIs.
  if (p.compat == Compat::native) return Ok{};
  // Any architecture not added (i386/x32 under '%compat deny', and x32 numbers >= 0x40000000 on an
  // x86_64-only filter) takes this action: the whole process dies.
  seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  // A binary tree over syscall numbers: allowed syscalls pay O(log n) comparisons, not O(n).
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  return Ok{};
}

// One entry: a libseccomp rule for each combination of its conditions' alternatives, in order.
Status add_rule(const Profile& p, const Rule& r, const std::vector<uint32_t>& archs, void* ctx) {
  auto fail = [&](std::string what, int rc) { return invalid(p.file, what + ": " + std::to_string(rc)); };
  if (is_number(r.name) && p.compat == Compat::filter)
    return invalid(p.file + ":" + std::to_string(r.line),
                   "a syscall number is the native ABI's only, and '%compat filter' adds others");
  if (!is_number(r.name) &&
      std::none_of(archs.begin(), archs.end(), [&](uint32_t a) { return exists_on(a, r.name.c_str()); }))
    return Ok{};  // e.g. iopl on aarch64; typos are caught by unknown_everywhere()
  // Numbers are passed in libseccomp's native numbering; it translates them per architecture.
  int nr = is_number(r.name) ? std::stoi(r.name) : seccomp_syscall_resolve_name(r.name.c_str());
  if (nr == __NR_SCMP_ERROR) return fail("cannot resolve " + r.name, nr);
  // Conditions ANDed within a rule; alternatives of each condition ORed: the cross product.
  std::vector<std::vector<scmp_arg_cmp>> rows{{}};
  for (const auto& c : r.conditions) {
    std::vector<std::vector<scmp_arg_cmp>> next;
    for (const auto& row : rows)
      for (const auto& alt : alternatives(c)) {
        next.push_back(row);
        next.back().push_back(alt);
      }
    rows = std::move(next);
  }
  for (const auto& row : rows) {
    int rc =
        seccomp_rule_add_array(ctx, action_of(r.action), nr, static_cast<unsigned>(row.size()), row.data());
    if (rc) return fail(p.file + ":" + std::to_string(r.line) + " " + r.name + ": seccomp_rule_add", rc);
  }
  return Ok{};
}

// libseccomp 2.5 exports only to an fd; a memfd needs no file system and has no pipe-size limit.
Result<std::vector<sock_filter>> export_bpf(const Profile& p, void* ctx) {
  auto fail = [&](std::string what, int rc) { return invalid(p.file, what + ": " + std::to_string(rc)); };
  int fd = memfd_create("cage-seccomp", MFD_CLOEXEC);
  if (fd < 0) return fail("memfd_create", -errno);
  int rc = seccomp_export_bpf(ctx, fd);
  std::vector<sock_filter> bpf;
  if (rc == 0) {
    off_t size = lseek(fd, 0, SEEK_END);
    bpf.resize(static_cast<size_t>(size) / sizeof(sock_filter));
    if (pread(fd, bpf.data(), bpf.size() * sizeof(sock_filter), 0) != static_cast<ssize_t>(size)) rc = -EIO;
  }
  close(fd);
  if (rc) return fail("seccomp_export_bpf", rc);
  return bpf;
}

}  // namespace

Result<std::vector<sock_filter>> compile_profile(const Profile& p, const ArchSet& arches) {
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return invalid(p.file, "seccomp_init failed");
  std::vector<uint32_t> archs;
  if (auto s = set_up_filter(p, arches, ctx.get(), archs); !s) return s.error();
  for (const auto& r : p.rules)
    if (auto s = add_rule(p, r, archs, ctx.get()); !s) return s.error();
  return export_bpf(p, ctx.get());
}

Profile select_when(const Profile& p, const std::vector<std::string>& true_conditions) {
  auto holds = [&](const std::string& w) {
    bool negated = !w.empty() && w[0] == '!';
    const auto& on = true_conditions;
    bool is_true = std::find(on.begin(), on.end(), w.substr(negated)) != on.end();
    return w.empty() || is_true != negated;
  };
  Profile out = p;
  out.rules.clear();
  for (const auto& r : p.rules)
    if (holds(r.when)) out.rules.push_back(r);
  return out;
}

std::vector<std::string> unknown_conditions(const Profile& p, const std::vector<std::string>& known) {
  std::vector<std::string> out;
  for (const auto& r : p.rules) {
    std::string name = r.when.substr(!r.when.empty() && r.when[0] == '!');
    if (!name.empty() && std::find(known.begin(), known.end(), name) == known.end())
      out.push_back(p.file + ":" + std::to_string(r.line) + " %when " + r.when);
  }
  return out;
}

}  // namespace cage::lx::seccomp
