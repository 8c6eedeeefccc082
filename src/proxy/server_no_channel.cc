// Windows: no shim passes sockets to the proxy and there is no transparent egress; the proxy serves
// only its own loopback listener (Server::add_listener, loopback.cc). These members exist for the
// shared loop in server.cc and are never reached.
#include <cerrno>

#include "proxy/server.h"

namespace cage::proxy {

int Server::add_channel(UniqueFd) { return -ENOSYS; }
void Server::on_channel() {}
void Server::enable_transparent(SyntheticMap) {}
void Server::add_aux(int, int) {}
void Server::on_listener(int) {}
void Server::on_dns() {}
void Server::take_direct() {}  // nothing is dialled off the loop without the egress hand-off

}  // namespace cage::proxy
