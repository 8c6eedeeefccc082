// The proxy's resolver: getaddrinfo in worker threads, with glibc's hosts lookup pinned to its
// built-in "files dns" via __nss_configure_lookup, so a host nsswitch.conf naming resolve, mdns or
// myhostname cannot make the static binary dlopen a module (which crashes). Workers are detached:
// a lookup stuck in the resolver's own timeouts never delays the supervisor's exit.
#include "proxy/resolver.h"

#if defined(__GLIBC__)
#include <netinet/in.h>
#include <nss.h>
#include <resolv.h>
#endif

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "proxy/socket_compat.h"
#include "proxy/waker.h"

namespace cage::proxy {

struct Resolver::Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<uint64_t, std::string>> queue;
  std::vector<Resolution> done;
  int idle = 0, workers = 0;
  bool stopping = false;
  Waker wake;  // lives as long as the last worker (they share this object)
};

namespace {

constexpr int kMaxWorkers = 4;

Resolution lookup(uint64_t id, const std::string& host) {
  Resolution r;
  r.id = id;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
#if defined(__GLIBC__)
  // The name the allowlist matched, and only it: the search list (resolv.conf "search"/"domain") is
  // never appended, or a missing allowed name would be looked up again under a search domain and
  // the proxy would connect wherever that domain's DNS pointed, under the listed name's consent
  // (tests/integration/net_search_domain.sh). _res is per thread; set before every lookup, since
  // glibc reloads it when resolv.conf changes.
  if (!(_res.options & RES_INIT)) res_init();
  _res.options &= ~static_cast<decltype(_res.options)>(RES_DNSRCH | RES_DEFNAMES);
#endif
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
    s->wake.signal();
  }
  --s->workers;
}

}  // namespace

void pin_host_lookup() {
  static std::once_flag once;
#if defined(__GLIBC__)
  std::call_once(once, [] { __nss_configure_lookup("hosts", "files dns"); });
#else
  (void)once;  // other C libraries resolve without loadable modules (macOS: the system resolver)
#endif
}

Resolver::Resolver() : s_(std::make_shared<Shared>()) {
  pin_host_lookup();
}

Resolver::~Resolver() {
  std::lock_guard lock(s_->mu);
  s_->stopping = true;
  s_->cv.notify_all();
}

int Resolver::notify_fd() const { return s_->wake.valid() ? s_->wake.get() : -1; }

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
  s_->wake.drain();
  return std::exchange(s_->done, {});
}

}  // namespace cage::proxy
