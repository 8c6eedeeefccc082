// One direction of an established tunnel: bytes move src -> pipe -> dst with splice(2), so the
// supervisor's single relay hop copies nothing through user space. A leg ends only after everything
// it read has been written; then it half-closes dst (SHUT_WR) and the other direction carries on.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace cage::proxy {

struct Leg {
  int src = -1, dst = -1;
  UniqueFd pipe_r, pipe_w;
  size_t pending = 0;   // bytes sitting in the pipe (copy relay: in buf, from buf_off)
  std::vector<char> buf;  // the copy relay's buffer (relay_copy.h), where there is no splice
  size_t buf_off = 0;
  std::string prefix;   // written to dst first: a reply, or bytes read while negotiating
  bool eof = false;     // src has no more to give
  bool done = false;    // everything delivered and dst half-closed (or dst gone)
  uint64_t bytes = 0;   // delivered to dst
  int error = 0;        // errno that ended the leg early, if any
  bool grown = false;   // the pipe was enlarged for a bulk transfer
  size_t* bulk_slots = nullptr;  // the sandbox's bulk pipes left (budget.h); null: no budget (bench)
};

// A leg that has moved this much gets a pipe of kBulkPipe bytes: fewer splices and wake-ups per
// byte for bulk transfers, while the many idle or chatty tunnels keep small pipes (the per-user
// pipe quota is shared by all of them). Only while the sandbox has a bulk slot left (budget.h).
inline constexpr uint64_t kBulkAfter = 4u << 20;
inline constexpr int kBulkPipe = 1 << 20;

// The tunnel relay: splice on Linux (relay.cc), the copy relay elsewhere (relay_portable.cc).
// Creates the pipe (capacity `pipe_size` when the kernel allows). Returns 0 or an errno.
int open_leg(Leg& leg, int src, int dst, int pipe_size);
// Moves what it can until src or dst would block, or the leg is done.
void pump(Leg& leg);

}  // namespace cage::proxy
