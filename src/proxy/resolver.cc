// The proxy's resolver: getaddrinfo in worker threads, with glibc's hosts lookup pinned to its
// built-in "files dns" via __nss_configure_lookup, so a host nsswitch.conf naming resolve, mdns or
// myhostname cannot make the static binary dlopen a module (which crashes). Workers are detached:
// a lookup stuck in the resolver's own timeouts never delays the supervisor's exit.
#include "proxy/resolver.h"

#include <netdb.h>
#include <nss.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace cage::proxy {

struct Resolver::Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<uint64_t, std::string>> queue;
  std::vector<Resolution> done;
  int idle = 0, workers = 0;
  bool stopping = false;
  int efd = -1;
};

namespace {

constexpr int kMaxWorkers = 4;

Resolution lookup(uint64_t id, const std::string& host) {
  Resolution r;
  r.id = id;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* res = nullptr;
  int e = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (e != 0) {
    r.error = e;
    return r;
  }
  for (addrinfo* p = res; p; p = p->ai_next) {
    Address a{};
    if (p->ai_family == AF_INET) {
      a[10] = a[11] = 0xff;
      std::memcpy(a.data() + 12, &reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr, 4);
    } else if (p->ai_family == AF_INET6) {
      std::memcpy(a.data(), &reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr, 16);
    } else {
      continue;
    }
    bool seen = false;
    for (auto& b : r.addrs) seen |= b == a;
    if (!seen) r.addrs.push_back(a);
  }
  freeaddrinfo(res);
  if (r.addrs.empty()) r.error = EAI_NONAME;
  return r;
}

void worker(std::shared_ptr<Resolver::Shared> s) {
  std::unique_lock lock(s->mu);
  while (true) {
    ++s->idle;
    s->cv.wait(lock, [&] { return s->stopping || !s->queue.empty(); });
    --s->idle;
    if (s->stopping) break;
    auto [id, host] = std::move(s->queue.front());
    s->queue.pop_front();
    lock.unlock();
    Resolution r = lookup(id, host);
    lock.lock();
    if (s->stopping) break;
    s->done.push_back(std::move(r));
    uint64_t one = 1;
    if (write(s->efd, &one, sizeof one) < 0) { /* eventfd counter full: already signalled */ }
  }
  --s->workers;
  if (s->workers == 0 && s->efd >= 0) {
    close(s->efd);
    s->efd = -1;
  }
}

}  // namespace

void pin_host_lookup() {
  static std::once_flag once;
  std::call_once(once, [] { __nss_configure_lookup("hosts", "files dns"); });
}

Resolver::Resolver() : s_(std::make_shared<Shared>()) {
  pin_host_lookup();
  s_->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

Resolver::~Resolver() {
  std::lock_guard lock(s_->mu);
  s_->stopping = true;
  s_->cv.notify_all();
  // The last worker closes the eventfd; without workers it is ours to close.
  if (s_->workers == 0 && s_->efd >= 0) {
    close(s_->efd);
    s_->efd = -1;
  }
}

int Resolver::notify_fd() const { return s_->efd; }

void Resolver::submit(uint64_t id, std::string host) {
  std::lock_guard lock(s_->mu);
  s_->queue.emplace_back(id, std::move(host));
  if (s_->idle == 0 && s_->workers < kMaxWorkers) {
    ++s_->workers;
    std::thread(worker, s_).detach();
  }
  s_->cv.notify_one();
}

std::vector<Resolution> Resolver::take() {
  std::lock_guard lock(s_->mu);
  uint64_t n;
  if (read(s_->efd, &n, sizeof n) < 0) { /* nothing pending */ }
  return std::exchange(s_->done, {});
}

}  // namespace cage::proxy
