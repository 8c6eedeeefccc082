// SHA-256 as FIPS 180-4 gives it; checked against the standard's test vectors in
// tests/unit/report_test.cc. Not used for secrets: it names a policy and fingerprints the output
// streams of --max-output (every byte the command writes), so speed matters. On x86-64 CPUs with
// the SHA extensions (Intel since Goldmont/Ice Lake, AMD since Zen) the block function uses them
// (SHA256RNDS2 does two rounds, SHA256MSG1/MSG2 the message schedule): several times the portable
// code's speed. Both are checked against each other on random input in the same unit test.
#include "common/sha256.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define CAGE_SHA_NI 1
#endif

namespace cage {

namespace {

constexpr uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void block(uint32_t h[8], const unsigned char* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

#ifdef CAGE_SHA_NI
// The state in the SHA extensions' order: STATE0 holds A B E F, STATE1 C D G H (Intel's SHA
// extensions reference, "New Instructions Supporting the Secure Hash Algorithm"). W[j % 4] holds
// message words 4j..4j+3; from the fifth group on each is MSG2(MSG1(W-4, W-3) + W[-7..-4], W-1).
__attribute__((target("sha,sse4.1,ssse3"))) void block_ni(uint32_t h[8], const unsigned char* p) {
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);  // big-endian words
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i state0 = _mm_alignr_epi8(cdab, efgh, 8);     // A B E F
  __m128i state1 = _mm_blend_epi16(efgh, cdab, 0xF0);  // C D G H
  const __m128i save0 = state0, save1 = state1;
  __m128i w[4];
  for (int j = 0; j < 16; ++j) {
    if (j < 4) {
      w[j] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * j)), swap);
    } else {
      __m128i x = _mm_sha256msg1_epu32(w[j % 4], w[(j + 1) % 4]);
      x = _mm_add_epi32(x, _mm_alignr_epi8(w[(j + 3) % 4], w[(j + 2) % 4], 4));
      w[j % 4] = _mm_sha256msg2_epu32(x, w[(j + 3) % 4]);
    }
    __m128i msg = _mm_add_epi32(w[j % 4], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kK + 4 * j)));
    state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
    state0 = _mm_sha256rnds2_epu32(state0, state1, _mm_shuffle_epi32(msg, 0x0E));
  }
  state0 = _mm_add_epi32(state0, save0);
  state1 = _mm_add_epi32(state1, save1);
  __m128i feba = _mm_shuffle_epi32(state0, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(state1, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), _mm_blend_epi16(feba, dchg, 0xF0));   // D C B A
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), _mm_alignr_epi8(dchg, feba, 8));  // H G F E
}

bool cpu_has_sha_ni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool sse = (c & (1u << 9)) && (c & (1u << 19));  // SSSE3, SSE4.1
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return sse && (b & (1u << 29));  // SHA
}

// -1 until the first digest: the CPUID probe runs then, not at start-up (in a virtual machine each
// CPUID traps to the hypervisor, and most runs hash nothing). Threads racing the probe agree.
std::atomic<int> g_use_ni{-1};

bool use_ni() {
  int v = g_use_ni.load(std::memory_order_relaxed);
  if (v < 0) {
    v = cpu_has_sha_ni() ? 1 : 0;
    g_use_ni.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}
#endif

inline void compress(uint32_t h[8], const unsigned char* p) {
#ifdef CAGE_SHA_NI
  if (use_ni()) return block_ni(h, p);
#endif
  block(h, p);
}

}  // namespace

bool sha256_accelerated() {
#ifdef CAGE_SHA_NI
  return use_ni();
#else
  return false;
#endif
}

void sha256_set_accelerated(bool on) {
#ifdef CAGE_SHA_NI
  g_use_ni.store(on && cpu_has_sha_ni() ? 1 : 0);
#else
  (void)on;
#endif
}

void Sha256::update(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  total_ += n;
  if (used_ > 0) {
    size_t take = std::min(n, sizeof buf_ - used_);
    std::memcpy(buf_ + used_, p, take);
    used_ += take, p += take, n -= take;
    if (used_ < sizeof buf_) return;
    compress(h_, buf_);
    used_ = 0;
  }
  for (; n >= 64; n -= 64, p += 64) compress(h_, p);
  std::memcpy(buf_, p, n);
  used_ = n;
}

std::string Sha256::hex() {
  // Padding: 0x80, zeros, then the message length in bits, big-endian, filling one or two blocks.
  unsigned char tail[128] = {};
  std::memcpy(tail, buf_, used_);
  tail[used_] = 0x80;
  size_t len = used_ < 56 ? 64 : 128;
  uint64_t bits = total_ * 8;
  for (int i = 0; i < 8; ++i) tail[len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  compress(h_, tail);
  if (len == 128) compress(h_, tail + 64);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h_)
    for (int s = 28; s >= 0; s -= 4) out += hex[(v >> s) & 0xf];
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.hex();
}

}  // namespace cage
