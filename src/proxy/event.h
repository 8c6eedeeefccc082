// What the proxy reports about each connection it mediates: one NetEvent per decision, handed to
// an EventSink. The supervisor prints denials; the audit log (issue #5) can consume the same stream.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace cage::proxy {

enum class Decision { allowed, denied, failed };
std::string_view to_string(Decision d);

struct NetEvent {
  std::string protocol;  // "connect", "http", "socks5"
  std::string host;      // as the client asked for it
  uint16_t port = 0;
  Decision decision = Decision::denied;
  std::string rule;      // origin of the rule that allowed it ("--net api.github.com:443")
  std::string reason;    // denial or failure text, as sent to the client
  std::string address;   // the upstream address connected to (of those the name led to), if any
  int status = 0;        // HTTP status sent (200, 403, 502, 504) or 0x00/0x02... for SOCKS
  uint64_t bytes_up = 0, bytes_down = 0;  // client->upstream, upstream->client
  std::chrono::milliseconds duration{0};
};

// Called on the proxy thread; must not block for long.
using EventSink = std::function<void(const NetEvent&)>;

}  // namespace cage::proxy
