// The macOS (BSD) Poller: one kqueue, a read and a write filter per socket, both EV_CLEAR, which is
// kqueue's edge trigger: an event is reported once per change of state, so handlers work until
// EAGAIN exactly as with epoll's EPOLLET (poller_epoll.cc). EV_EOF on either filter is a hang-up.
#include <sys/event.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

#include "proxy/poller.h"

namespace cage::proxy {

Poller::Poller() : fd_(kqueue()) {}
Poller::~Poller() = default;
bool Poller::ok() const { return fd_.valid(); }

int Poller::add(int fd, uint64_t token) {
  struct kevent ch[2];
  void* udata = reinterpret_cast<void*>(static_cast<uintptr_t>(token));
  EV_SET(&ch[0], static_cast<uintptr_t>(fd), EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, udata);
  EV_SET(&ch[1], static_cast<uintptr_t>(fd), EVFILT_WRITE, EV_ADD | EV_CLEAR, 0, 0, udata);
  return kevent(fd_.get(), ch, 2, nullptr, 0, nullptr) == 0 ? 0 : -errno;
}

void Poller::remove(int fd) {
  struct kevent ch[2];
  EV_SET(&ch[0], static_cast<uintptr_t>(fd), EVFILT_READ, EV_DELETE, 0, 0, nullptr);
  EV_SET(&ch[1], static_cast<uintptr_t>(fd), EVFILT_WRITE, EV_DELETE, 0, 0, nullptr);
  kevent(fd_.get(), ch, 2, nullptr, 0, nullptr);  // a closed fd has left the kqueue already
}

int Poller::wait(std::vector<PollEvent>& out, int timeout_ms) {
  struct kevent evs[256];
  timespec ts{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1'000'000};
  int n = kevent(fd_.get(), nullptr, 0, evs, 256, timeout_ms < 0 ? nullptr : &ts);
  out.clear();
  if (n < 0) return -errno;
  for (int i = 0; i < n; ++i) {
    PollEvent e;
    e.token = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(evs[i].udata));
    e.readable = evs[i].filter == EVFILT_READ;
    e.writable = evs[i].filter == EVFILT_WRITE;
    e.hangup = (evs[i].flags & EV_EOF) != 0;
    e.error = (evs[i].flags & EV_ERROR) != 0;
    out.push_back(e);
  }
  return n;
}

}  // namespace cage::proxy
