// The errno-refusal observer's filters and the classic BPF interpreter the supervisor judges with:
// see seccomp_observe.h.
#include "linux/seccomp_observe.h"

#include <cstddef>
#include <cstring>
#include <iterator>

namespace cage::lx::seccomp {

bool is_kill(uint32_t action) { return (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_KILL_PROCESS; }

uint32_t evaluate(std::span<const sock_filter> prog, const seccomp_data& d) {
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  unsigned char data[sizeof(seccomp_data)];
  std::memcpy(data, &d, sizeof data);
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const sock_filter& i = prog[pc];
    const uint32_t src = BPF_SRC(i.code) == BPF_X ? x : i.k;
    switch (i.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (i.k % 4 != 0 || i.k > sizeof data - 4) return SECCOMP_RET_KILL_PROCESS;
        std::memcpy(&a, data + i.k, 4);
        continue;
      case BPF_LD | BPF_W | BPF_LEN: a = sizeof data; continue;
      case BPF_LDX | BPF_W | BPF_LEN: x = sizeof data; continue;
      case BPF_LD | BPF_IMM: a = i.k; continue;
      case BPF_LDX | BPF_IMM: x = i.k; continue;
      case BPF_LD | BPF_MEM:
      case BPF_LDX | BPF_MEM:
      case BPF_ST:
      case BPF_STX:
        if (i.k >= BPF_MEMWORDS) return SECCOMP_RET_KILL_PROCESS;
        if (i.code == (BPF_LD | BPF_MEM)) a = mem[i.k];
        else if (i.code == (BPF_LDX | BPF_MEM)) x = mem[i.k];
        else mem[i.k] = i.code == BPF_ST ? a : x;
        continue;
      case BPF_MISC | BPF_TAX: x = a; continue;
      case BPF_MISC | BPF_TXA: a = x; continue;
      case BPF_RET | BPF_K: return i.k;
      case BPF_RET | BPF_A: return a;
      case BPF_ALU | BPF_NEG: a = 0u - a; continue;
      case BPF_JMP | BPF_JA:
        if (i.k >= prog.size() - pc) return SECCOMP_RET_KILL_PROCESS;
        pc += i.k;
        continue;
      default: break;
    }
    if (BPF_CLASS(i.code) == BPF_ALU) {
      switch (BPF_OP(i.code)) {
        case BPF_ADD: a += src; continue;
        case BPF_SUB: a -= src; continue;
        case BPF_MUL: a *= src; continue;
        case BPF_DIV:
          if (src == 0) return 0;  // the kernel's classic BPF ends the program with 0 (kill)
          a /= src;
          continue;
        case BPF_AND: a &= src; continue;
        case BPF_OR: a |= src; continue;
        case BPF_XOR: a ^= src; continue;
        case BPF_LSH: a = src >= 32 ? 0 : a << src; continue;
        case BPF_RSH: a = src >= 32 ? 0 : a >> src; continue;
        case BPF_NEG: a = -a; continue;
        default: return SECCOMP_RET_KILL_PROCESS;
      }
    }
    if (BPF_CLASS(i.code) == BPF_JMP) {
      bool taken;
      switch (BPF_OP(i.code)) {
        case BPF_JEQ: taken = a == src; break;
        case BPF_JGT: taken = a > src; break;
        case BPF_JGE: taken = a >= src; break;
        case BPF_JSET: taken = (a & src) != 0; break;
        default: return SECCOMP_RET_KILL_PROCESS;
      }
      const size_t off = taken ? i.jt : i.jf;
      if (off >= prog.size() - pc) return SECCOMP_RET_KILL_PROCESS;
      pc += off;
      continue;
    }
    return SECCOMP_RET_KILL_PROCESS;
  }
  return SECCOMP_RET_KILL_PROCESS;  // fell off the end: the kernel never loads such a program
}

namespace {

bool is_errno(uint32_t action) { return (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO; }

// The answers the listener observes: an errno, and a kill of the process.
bool observed(uint32_t action) { return is_errno(action) || is_kill(action); }

// A copy of prog whose constant returns are mapped by `ret`; nullopt if it returns a computed value.
template <typename F>
std::optional<std::vector<sock_filter>> remap_returns(std::span<const sock_filter> prog, F ret) {
  std::vector<sock_filter> out(prog.begin(), prog.end());
  for (auto& i : out) {
    if (i.code == (BPF_RET | BPF_A)) return std::nullopt;
    if (i.code == (BPF_RET | BPF_K)) i.k = ret(i.k);
  }
  return out;
}

}  // namespace

std::optional<ObservedPair> observe_refusals(std::span<const sock_filter> main, std::span<const int> notified,
                                             uint32_t arch, uint32_t foreign_nr_bit) {
  auto copy = remap_returns(main, [](uint32_t k) { return observed(k) ? SECCOMP_RET_ALLOW : k; });
  auto tail = remap_returns(main, [](uint32_t k) { return observed(k) ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW; });
  if (!copy || !tail || main.empty()) return std::nullopt;
  // The header sends another architecture's calls, the x32 range and the listener's own calls to the
  // original program, every other call to the rewritten copy. Each starts as the kernel starts a
  // program, with A and X zero (the header used A).
  const sock_filter reset[] = {BPF_STMT(BPF_LD | BPF_IMM, 0), BPF_STMT(BPF_LDX | BPF_IMM, 0)};
  const size_t header = 3 + (foreign_nr_bit ? 1 : 0) + notified.size() + 3;
  if (header > 255 || header + 2 * (2 + main.size()) > BPF_MAXINSNS) return std::nullopt;
  auto to_orig = [&](size_t at) { return static_cast<uint8_t>(header - at - 1); };
  std::vector<sock_filter> m;
  m.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  m.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, to_orig(1)));
  m.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  if (foreign_nr_bit) m.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, foreign_nr_bit, to_orig(m.size()), 0));
  for (int nr : notified)
    m.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), to_orig(m.size()), 0));
  m.insert(m.end(), std::begin(reset), std::end(reset));
  m.push_back(BPF_STMT(BPF_JMP | BPF_JA, static_cast<uint32_t>(2 + main.size())));
  m.insert(m.end(), std::begin(reset), std::end(reset));  // the original's start
  m.insert(m.end(), main.begin(), main.end());
  m.insert(m.end(), copy->begin(), copy->end());
  // The listener's own checks ran first and left A set.
  tail->insert(tail->begin(), std::begin(reset), std::end(reset));
  return ObservedPair{std::move(m), std::move(*tail)};
}

}  // namespace cage::lx::seccomp
