// libFuzzer: the SOCKS5 greeting and request parsers.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proxy/socks5.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto g = cage::proxy::parse_socks_greeting(in);
  if (g.consumed > size) __builtin_trap();
  auto q = cage::proxy::parse_socks_request(in.substr(g.consumed));
  if (q.consumed > size - g.consumed) __builtin_trap();
  return 0;
}
