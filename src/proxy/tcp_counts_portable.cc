// tcp_counts.h where sock_diag does not exist: a hand-off is never made there.
#include "proxy/tcp_counts.h"

namespace cage::proxy {

bool tcp_id(int, TcpId&) { return false; }
int tcp_counts(const TcpId&, TcpCounts&) { return -1; }

}  // namespace cage::proxy
