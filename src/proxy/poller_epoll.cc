// The Linux Poller: one epoll instance, edge-triggered for input, output and peer hang-up.
#include <sys/epoll.h>

#include <cerrno>

#include "proxy/poller.h"

namespace cage::proxy {

Poller::Poller() : fd_(epoll_create1(EPOLL_CLOEXEC)) {}
Poller::~Poller() = default;
bool Poller::ok() const { return fd_.valid(); }

int Poller::add(int fd, uint64_t token) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  ev.data.u64 = token;
  return epoll_ctl(fd_.get(), EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

void Poller::remove(int fd) { epoll_ctl(fd_.get(), EPOLL_CTL_DEL, fd, nullptr); }

int Poller::wait(std::vector<PollEvent>& out, int timeout_ms) {
  epoll_event evs[256];
  int n = epoll_wait(fd_.get(), evs, 256, timeout_ms);
  out.clear();
  if (n < 0) return -errno;
  for (int i = 0; i < n; ++i) {
    uint32_t e = evs[i].events;
    out.push_back({evs[i].data.u64, (e & EPOLLIN) != 0, (e & EPOLLOUT) != 0, (e & (EPOLLHUP | EPOLLRDHUP)) != 0,
                   (e & EPOLLERR) != 0});
  }
  return n;
}

}  // namespace cage::proxy
