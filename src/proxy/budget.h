// The supervisor's memory for one sandbox's proxy, bounded (issue 17 item 12: 4,000 held connections
// grew the host-side cage from 4 MB to 232 MB, outside --memory, which limits only the sandbox's
// cgroup). Every figure is here; server.cc enforces them, cage(1) NETWORK and README.md explain,
// tests/escape/net_memory.sh measures. Pure.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace cage::proxy {

// The most one connection can hold in the supervisor's user-space memory: a request head of up to
// 64 KiB while it arrives (the string never grows past its limit), or, for plain HTTP, kRelayBuf
// each way, the forwarded head with kRelayBuf of body behind it (96 KiB) and the response head being
// parsed (64 KiB) with its re-written copy, plus the connection's own state. A tunnel holds about 1 KiB there; its bytes
// move through two kernel pipes (below).
inline constexpr size_t kRelayBuf = 32 * 1024;
inline constexpr size_t kConnCost = 320 * 1024;
// Concurrent connections per sandbox: --memory M allows M / kConnCost (so the proxy's worst case is
// the sandbox's own limit again), at least kMinConnections; without --memory kDefaultConnections
// (320 MiB worst case). Past it a new connection is answered 503 (SOCKS: no acceptable method) and
// closed; a few such answers at a time (kRefusing) are kept long enough to be read.
inline constexpr size_t kMinConnections = 32;
inline constexpr size_t kDefaultConnections = 1024;
inline constexpr size_t kMaxConnections = 16384;
inline constexpr size_t kRefusing = 64;
// Kernel memory per tunnel: two pipes of kTunnelPipe each. A leg that has moved kBulkAfter bytes
// gets a kBulkPipe pipe only while fewer than kBulkPipes legs (of this sandbox) have one.
inline constexpr int kTunnelPipe = 256 * 1024;
inline constexpr size_t kBulkPipes = 16;

constexpr size_t connection_limit(std::optional<uint64_t> memory_bytes) {
  if (!memory_bytes) return kDefaultConnections;
  return static_cast<size_t>(std::clamp<uint64_t>(*memory_bytes / kConnCost, kMinConnections, kMaxConnections));
}

}  // namespace cage::proxy
