// libFuzzer: the classic BPF interpreter --explain's supervisor judges errno refusals with, and the
// rewritten filter pair (src/linux/seccomp_observe.h). Input: a seccomp_data, then a program. Any
// program must evaluate without a fault; for a program the kernel would load (jumps inside it, a
// return last), the pair must decide what the original decides, with errno refusals outside the
// listener's calls turned into notifications.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "linux/seccomp_observe.h"

using namespace cage::lx::seccomp;

namespace {

// What the kernel's checks (bpf_check_classic, seccomp_check_filter) accept.
bool loadable(const std::vector<sock_filter>& p) {
  if (p.empty() || p.size() > BPF_MAXINSNS || BPF_CLASS(p.back().code) != BPF_RET) return false;
  for (size_t pc = 0; pc < p.size(); ++pc) {
    const auto& i = p[pc];
    const size_t left = p.size() - pc - 1;
    if (i.code > 0xff) return false;  // no classic opcode has bits above the low byte
    switch (BPF_CLASS(i.code)) {
      case BPF_JMP:
        if (BPF_OP(i.code) == BPF_JA && i.code != (BPF_JMP | BPF_JA)) return false;  // no JA with X
        if (BPF_OP(i.code) == BPF_JA ? i.k >= left : (i.jt >= left || i.jf >= left)) return false;
        if (BPF_OP(i.code) != BPF_JA && BPF_OP(i.code) != BPF_JEQ && BPF_OP(i.code) != BPF_JGT &&
            BPF_OP(i.code) != BPF_JGE && BPF_OP(i.code) != BPF_JSET)
          return false;
        break;
      case BPF_LD:
        if (i.code == (BPF_LD | BPF_W | BPF_ABS) && (i.k % 4 || i.k >= sizeof(seccomp_data))) return false;
        if (i.code != (BPF_LD | BPF_W | BPF_ABS) && i.code != (BPF_LD | BPF_W | BPF_LEN) &&
            i.code != (BPF_LD | BPF_IMM) && i.code != (BPF_LD | BPF_MEM))
          return false;
        if (i.code == (BPF_LD | BPF_MEM) && i.k >= BPF_MEMWORDS) return false;
        break;
      case BPF_ALU:
        // seccomp_check_filter's list of ALU operations (BPF_MOD is not on it).
        if (BPF_OP(i.code) != BPF_ADD && BPF_OP(i.code) != BPF_SUB && BPF_OP(i.code) != BPF_MUL &&
            BPF_OP(i.code) != BPF_DIV && BPF_OP(i.code) != BPF_AND && BPF_OP(i.code) != BPF_OR &&
            BPF_OP(i.code) != BPF_XOR && BPF_OP(i.code) != BPF_LSH && BPF_OP(i.code) != BPF_RSH &&
            BPF_OP(i.code) != BPF_NEG)
          return false;
        if (BPF_OP(i.code) == BPF_NEG && i.code != (BPF_ALU | BPF_NEG)) return false;
        if (BPF_SRC(i.code) == BPF_K && (BPF_OP(i.code) == BPF_DIV) && i.k == 0) return false;
        if (BPF_SRC(i.code) == BPF_K && (BPF_OP(i.code) == BPF_LSH || BPF_OP(i.code) == BPF_RSH) && i.k >= 32)
          return false;
        break;
      case BPF_RET:
        if (i.code != (BPF_RET | BPF_K) && i.code != (BPF_RET | BPF_A)) return false;
        break;
      case BPF_LDX:
        if (i.code != (BPF_LDX | BPF_W | BPF_LEN) && i.code != (BPF_LDX | BPF_IMM) && i.code != (BPF_LDX | BPF_MEM))
          return false;
        if (i.code == (BPF_LDX | BPF_MEM) && i.k >= BPF_MEMWORDS) return false;
        break;
      case BPF_ST:
      case BPF_STX:
        if (i.code != BPF_CLASS(i.code) || i.k >= BPF_MEMWORDS) return false;
        break;
      case BPF_MISC:
        if (i.code != (BPF_MISC | BPF_TAX) && i.code != (BPF_MISC | BPF_TXA)) return false;
        break;
      default: break;
    }
  }
  return true;
}

uint32_t strongest(uint32_t a, uint32_t b) {
  auto rank = [](uint32_t x) { return static_cast<int32_t>(x & SECCOMP_RET_ACTION_FULL); };
  return rank(a) <= rank(b) ? a : b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  seccomp_data d{};
  if (size < sizeof d) return 0;
  std::memcpy(&d, data, sizeof d);
  std::vector<sock_filter> prog((size - sizeof d) / sizeof(sock_filter));
  if (!prog.empty()) std::memcpy(prog.data(), data + sizeof d, prog.size() * sizeof(sock_filter));
  const uint32_t original = evaluate(prog, d);
  if (!loadable(prog)) return 0;
  const int notified[] = {2, 257, 59};  // open, openat, execve (x86_64): any numbers do
  auto pair = observe_refusals(prog, notified, kNativeArch, kForeignNrBit);
  if (!pair) return 0;
  // The listener's own checks, simulated: its calls notified, every other call judged by the tail.
  // As the listener's prefix and the header see it: x32 and anything above it is not native.
  const bool native = d.arch == kNativeArch && (kForeignNrBit == 0 || static_cast<uint32_t>(d.nr) < kForeignNrBit);
  const bool own = native && (d.nr == 2 || d.nr == 257 || d.nr == 59);
  const uint32_t listener = own ? SECCOMP_RET_USER_NOTIF : native ? evaluate(pair->tail, d) : SECCOMP_RET_ALLOW;
  const uint32_t now = strongest(evaluate(pair->main, d), listener);
  // Observed: an errno refusal or a kill of the process (the supervisor kills the caller itself).
  const bool refused = (original & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO || is_kill(original);
  const uint32_t want = own ? strongest(original, SECCOMP_RET_USER_NOTIF)
                        : native && refused ? SECCOMP_RET_USER_NOTIF : original;
  if (now != want) __builtin_trap();
  return 0;
}
