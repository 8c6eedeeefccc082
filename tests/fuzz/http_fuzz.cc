// libFuzzer: the proxy's HTTP request-head parser, response framing and chunk scanner.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proxy/http.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto r = cage::proxy::parse_request_head(in);
  if (r.status == cage::proxy::ParseStatus::ok && r.req.head_len > size) __builtin_trap();
  cage::proxy::inspect_response_head(in, size % 2 == 0);
  cage::proxy::ChunkScanner s;
  size_t used = s.feed(in.substr(0, size / 2));
  if (!s.done() && !s.failed()) used += s.feed(in.substr(size / 2));
  if (used > size) __builtin_trap();
  return 0;
}
