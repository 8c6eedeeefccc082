// The copy relay: one direction of a tunnel moved through a user-space buffer with recv/send, for
// hosts without splice(2) (macOS, Windows). The same rules as the splice relay (relay.h): the buffer
// is always emptied into dst before the next read from src, so an EAGAIN on the read side means
// "src is empty" and an edge-triggered poller loses no wake-up; a leg half-closes dst only after
// everything it read was written. Portable code, unit-tested on Linux (tests/unit/proxy_relay_copy_test.cc).
#pragma once
#include "proxy/relay.h"

namespace cage::proxy {

// Allocates the buffer (`size` bytes; 64 KiB if 0). Returns 0 or an errno.
int open_copy_leg(Leg& leg, int src, int dst, size_t size);
// Moves what it can until src or dst would block, or the leg is done.
void pump_copy(Leg& leg);

}  // namespace cage::proxy
