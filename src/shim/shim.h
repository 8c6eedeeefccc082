// The in-namespace half of --net (see shim.cc): forked by cage's init, never exec'd.
#pragma once

namespace cage::shim {

// Runs in init's forked child until the supervisor closes the channel: confines itself, writes one
// byte to `ready`, then passes each connection accepted on `listen_fd` over `channel`. The caller
// has closed every other descriptor. Returns the exit status.
int serve(int listen_fd, int channel, int ready);

}  // namespace cage::shim
