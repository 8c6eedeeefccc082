// SHA-256 (FIPS 180-4), small and dependency-free: the policy hash in the audit log and the result.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace cage {

std::string sha256_hex(std::string_view data);  // 64 lowercase hex digits
// Whether the x86-64 SHA extensions are in use (chosen once from CPUID); tests turn them off to
// compare the two block functions. Turning them on where the CPU lacks them does nothing.
bool sha256_accelerated();
void sha256_set_accelerated(bool on);

// The same digest over data given in pieces (an output stream as it passes, output_cap.cc).
class Sha256 {
 public:
  void update(const void* data, size_t n);
  std::string hex();  // 64 lowercase hex digits; ends the hashing

 private:
  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char buf_[64] = {};
  size_t used_ = 0;
  uint64_t total_ = 0;
};

}  // namespace cage
