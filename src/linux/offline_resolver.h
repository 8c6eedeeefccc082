// Without --net the sandbox's network namespace holds only lo, and every lookup fails at once. So
// that a run which needed the network can say so when it ends ("the network is off; allow the hosts
// it tried"), resolv.conf names 127.0.0.53, where cage's init binds a UDP socket (netns.cc) and hands
// it to the supervisor, which answers every query NXDOMAIN (as the transparent resolver answers a
// name no rule allows) and notes the names asked for. Nothing is forwarded and nothing is allowed:
// the socket only ever answers "no such name", and a run that looks nothing up costs one idle socket.
// Parent side; proven by tests/integration/net_offline_hint.sh.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace cage::lx {

class OfflineResolver {
 public:
  // Starts the thread that receives the socket over `channel` (send_fd tag 'D') and answers on it.
  static std::unique_ptr<OfflineResolver> start(UniqueFd channel);
  ~OfflineResolver();
  // Stops the thread; the names asked for (A and AAAA questions), in order, without repeats.
  std::vector<std::string> finish();

 private:
  OfflineResolver() = default;
  struct State;
  std::unique_ptr<State> s_;
};

// The one line said when such a run ends: the network is off, and the --net flags that would allow
// the names it looked up (HTTPS assumed). Pure.
std::string offline_hint(const std::vector<std::string>& names);

}  // namespace cage::lx
