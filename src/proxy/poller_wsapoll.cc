// The Windows Poller: WSAPoll, which is level-triggered, turned into the edge-triggered poller the
// proxy loop is written for (poller.h). Each watched socket has an "armed" flag per direction.
// A direction is armed when the socket is added and again whenever a socket call finds it not ready
// (socket_compat.h calls note_would_block on WSAEWOULDBLOCK); it is disarmed when its readiness is
// reported. Only armed directions are polled, so a socket that stays writable is reported once, not
// on every wait (which would spin), and every "ready" after a "would block" is seen: exactly the
// edges epoll's EPOLLET gives, for handlers that work until EAGAIN.
//
// WSAPoll reports POLLHUP and POLLERR whether asked for or not, and they persist, so a socket that
// has reported one is no longer given to WSAPoll: its armed directions are reported after a short
// wait instead (kSoftMs), and the handler's next call tells the truth (data, EOF, an error, or
// "would block", which re-arms it). This costs a little latency only on a half-closed connection
// whose other side is still being written to.
#include <mutex>
#include <unordered_map>

#include "proxy/poller.h"
#include "proxy/socket_compat.h"

namespace cage::proxy {

namespace {

constexpr int kSoftMs = 10;

struct Arm {
  const void* owner = nullptr;  // the Poller watching the socket
  bool read = true, write = true;
  bool sticky = false;  // reported POLLHUP/POLLERR: polled by time from now on
};

// Shared by every Poller and by note_would_block, which the socket calls make from the loop's
// thread (and the resolver's take()); keyed by socket, unique process-wide while it is open.
std::mutex g_mu;
std::unordered_map<int, Arm>& arms() {
  static auto* m = new std::unordered_map<int, Arm>;
  return *m;
}

}  // namespace

void note_would_block(int fd, bool write) {
  std::lock_guard lock(g_mu);
  auto it = arms().find(fd);
  if (it == arms().end()) return;
  (write ? it->second.write : it->second.read) = true;
}

struct Poller::Watches {
  std::unordered_map<int, uint64_t> tokens;
};

Poller::Poller() : w_(std::make_unique<Watches>()) { socket_startup(); }

Poller::~Poller() {
  // Only this poller's entries: a socket closed before the poller went may have been reused since.
  std::lock_guard lock(g_mu);
  for (const auto& [fd, token] : w_->tokens)
    if (auto it = arms().find(fd); it != arms().end() && it->second.owner == w_.get()) arms().erase(it);
}

bool Poller::ok() const { return w_ != nullptr; }

int Poller::add(int fd, uint64_t token) {
  if (fd < 0) return -EBADF;
  std::lock_guard lock(g_mu);
  arms()[fd] = Arm{w_.get()};
  w_->tokens[fd] = token;
  return 0;
}

void Poller::remove(int fd) {
  std::lock_guard lock(g_mu);
  if (auto it = arms().find(fd); it != arms().end() && it->second.owner == w_.get()) arms().erase(it);
  w_->tokens.erase(fd);
}

int Poller::wait(std::vector<PollEvent>& out, int timeout_ms) {
  out.clear();
  std::vector<WSAPOLLFD> polled;
  std::vector<std::pair<int, uint64_t>> ids, sticky;
  {
    std::lock_guard lock(g_mu);
    for (const auto& [fd, token] : w_->tokens) {
      auto it = arms().find(fd);
      if (it == arms().end() || it->second.owner != w_.get()) continue;
      const Arm& a = it->second;
      if (a.sticky) {
        if (a.read || a.write) sticky.emplace_back(fd, token);
        continue;
      }
      SHORT ev = static_cast<SHORT>((a.read ? POLLRDNORM : 0) | (a.write ? POLLWRNORM : 0));
      if (ev == 0) continue;
      polled.push_back(WSAPOLLFD{os_socket(fd), ev, 0});
      ids.emplace_back(fd, token);
    }
  }
  int t = timeout_ms;
  if (!sticky.empty() && (t < 0 || t > kSoftMs)) t = kSoftMs;
  int n = 0;
  if (polled.empty()) {
    ::Sleep(static_cast<DWORD>(t < 0 ? kSoftMs : t));  // nothing armed: the caller's timers still run
  } else {
    n = ::WSAPoll(polled.data(), static_cast<ULONG>(polled.size()), t);
    if (n == SOCKET_ERROR) return -errno_from_wsa(::WSAGetLastError());
  }
  std::lock_guard lock(g_mu);
  for (size_t i = 0; i < polled.size(); ++i) {
    SHORT r = polled[i].revents;
    if (r == 0) continue;
    auto it = arms().find(ids[i].first);
    if (it == arms().end()) continue;  // removed meanwhile
    PollEvent e;
    e.token = ids[i].second;
    e.readable = (r & (POLLRDNORM | POLLRDBAND)) != 0;
    e.writable = (r & POLLWRNORM) != 0;
    e.hangup = (r & POLLHUP) != 0;
    e.error = (r & (POLLERR | POLLNVAL)) != 0;
    Arm& a = it->second;
    if (e.readable || e.hangup || e.error) a.read = false;
    if (e.writable || e.error) a.write = false;
    if (e.hangup || e.error) a.sticky = true;
    out.push_back(e);
  }
  for (const auto& [fd, token] : sticky) {
    auto it = arms().find(fd);
    if (it == arms().end()) continue;
    PollEvent e;
    e.token = token;
    e.readable = it->second.read;
    e.writable = it->second.write;
    e.hangup = true;
    it->second.read = it->second.write = false;
    out.push_back(e);
  }
  return static_cast<int>(out.size());
}

}  // namespace cage::proxy
