// A thin readiness poller so the proxy loop is portable in structure. Edge-triggered: an event is
// reported once per change to "ready", so a handler must work until EAGAIN. epoll (EPOLLET) on Linux
// (poller_epoll.cc), kqueue (EV_CLEAR) on macOS (poller_kqueue.cc), and on Windows WSAPoll with the
// edges emulated (poller_wsapoll.cc).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "common/unique_fd.h"

namespace cage::proxy {

struct PollEvent {
  uint64_t token = 0;
  bool readable = false, writable = false, hangup = false, error = false;
};

class Poller {
 public:
  Poller();
  ~Poller();
  bool ok() const;
  // Watches fd for input and output (edge-triggered); events carry `token`.
  int add(int fd, uint64_t token);
  void remove(int fd);
  // Waits up to timeout_ms (-1: forever); fills `out`; returns its size or -errno.
  int wait(std::vector<PollEvent>& out, int timeout_ms);

 private:
#if defined(_WIN32)
  struct Watches;  // poller_wsapoll.cc
  std::unique_ptr<Watches> w_;
#else
  UniqueFd fd_;
#endif
};

}  // namespace cage::proxy
