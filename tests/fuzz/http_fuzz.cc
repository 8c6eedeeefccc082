// libFuzzer: the proxy's HTTP request-head parser, response-head parser and chunk scanner.
// Invariants: no parse uses more bytes than it was given, and the response head the client gets
// parses again to the same framing (what the client frames is what the proxy framed).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proxy/http.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cage::proxy;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto r = parse_request_head(in);
  if (r.status == ParseStatus::ok && r.req.head_len > size) __builtin_trap();
  HttpRequest req = r.status == ParseStatus::ok ? r.req : HttpRequest{};
  req.is_head = req.is_head || size % 2 == 0;
  req.http10 = req.http10 || size % 3 == 0;
  auto h = parse_response_head(in, req);
  if (h.status == ParseStatus::ok) {
    if (h.head_len > size) __builtin_trap();
    auto again = parse_response_head(h.forward_head, req);
    if (again.status != ParseStatus::ok || again.framing != h.framing || again.length != h.length ||
        again.close_client != h.close_client || again.interim != h.interim ||
        again.head_len != h.forward_head.size() || again.forward_head != h.forward_head)
      __builtin_trap();
  }
  ChunkScanner s;
  size_t used = s.feed(in.substr(0, size / 2));
  if (!s.done() && !s.failed()) used += s.feed(in.substr(size / 2));
  if (used > size) __builtin_trap();
  return 0;
}
