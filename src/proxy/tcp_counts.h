// The byte counts of a TCP connection cage no longer relays (egress hand-off, linux/handoff.h): the
// kernel's own (tcp_info's bytes_acked and bytes_received), asked by the connection's addresses and
// socket cookie through sock_diag, so the supervisor keeps no descriptor of it (one would hold the
// connection open after the workload closes it). Linux: tcp_counts_linux.cc; elsewhere unknown. Where
// sock_diag does not answer (inet_diag/tcp_diag are modules), the event says the counts are unavailable.
#pragma once
#include <cstdint>

namespace cage::proxy {

struct TcpId {
  int family = 0;
  uint8_t local[16] = {}, remote[16] = {};  // network order; IPv4 in the first 4 bytes
  uint16_t local_port = 0, remote_port = 0;  // host order
  uint64_t cookie = 0;
};
struct TcpCounts {
  uint64_t sent = 0, received = 0;  // acknowledged by the peer / received from it
};

// Names a connected socket for tcp_counts; false where that is not possible.
bool tcp_id(int fd, TcpId& id);
// 1: counts read; 0: the connection is gone (or only its TIME_WAIT remains); -1: cannot tell.
int tcp_counts(const TcpId& id, TcpCounts& out);

}  // namespace cage::proxy
