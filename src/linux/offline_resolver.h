// Without --net the sandbox's network namespace holds only lo, and every lookup fails at once. So
// that a run which needed the network can say so when it ends ("the network is off; allow the hosts
// it tried"), resolv.conf names 127.0.0.53, where cage's init binds a UDP socket (netns.cc) and hands
// it to the supervisor, which answers every query NXDOMAIN (as the transparent resolver answers a
// name no rule allows) and notes the names asked for. Nothing is forwarded and nothing is allowed:
// the socket only ever answers "no such name", and a run that looks nothing up costs one idle socket.
// Parent side; proven by tests/integration/net_offline_hint.sh.
#pragma once
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace cage::lx {

// Served from the supervisor's own poll loop, not a thread of its own: a thread cost every run
// without --net its start and, at the end, a wake-up and a join on the run's critical path.
class OfflineResolver {
 public:
  // Receives the socket over `channel` (send_fd tag 'D') once init sends it, then answers on it.
  explicit OfflineResolver(UniqueFd channel) : channel_(std::move(channel)) {}
  // The descriptor to poll for input: the channel until the socket arrives, then the socket; -1
  // once init closed the channel without one (it failed, and says so itself).
  int fd() const { return sock_.valid() ? sock_.get() : channel_.get(); }
  // After poll reported fd() readable (or hung up): takes the socket, or answers what is queued.
  // Never blocks; false when there was nothing to do.
  bool on_readable();
  // Answers what is still queued; the names asked for (A and AAAA questions), in order, without
  // repeats ("..." past the first 16).
  std::vector<std::string> finish();

 private:
  void note(const std::string& name);
  UniqueFd channel_, sock_;
  std::vector<std::string> names_;
  bool more_ = false;
};

// The one line said when such a run ends: the network is off, and the --net flags that would allow
// the names it looked up (HTTPS assumed). Pure.
std::string offline_hint(const std::vector<std::string>& names);

}  // namespace cage::lx
