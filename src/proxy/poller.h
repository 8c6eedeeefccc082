// A thin readiness poller so the proxy loop is portable in structure: epoll here (poller_epoll.cc),
// kqueue on macOS later. Edge-triggered: a handler must work until EAGAIN.
#pragma once
#include <cstdint>
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
  bool ok() const { return fd_.valid(); }
  // Watches fd for input and output (edge-triggered); events carry `token`.
  int add(int fd, uint64_t token);
  void remove(int fd);
  // Waits up to timeout_ms (-1: forever); fills `out`; returns its size or -errno.
  int wait(std::vector<PollEvent>& out, int timeout_ms);

 private:
  UniqueFd fd_;
};

}  // namespace cage::proxy
