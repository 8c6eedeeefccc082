// Name resolution for the proxy, off the event loop: a few worker threads call getaddrinfo with
// the hosts lookup pinned to glibc's built-in "files dns" (no NSS module is ever dlopen'ed by the
// static binary); results come back through a Waker (waker.h) the loop watches.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "proxy/allowlist.h"

namespace cage::proxy {

struct Resolution {
  uint64_t id = 0;           // the caller's request id
  std::vector<Address> addrs;
  int error = 0;             // EAI_* when no address came back
};

class Resolver {
 public:
  Resolver();
  ~Resolver();
  int notify_fd() const;                     // readable when results are waiting
  void submit(uint64_t id, std::string host);
  std::vector<Resolution> take();            // drains results (and the Waker)

 struct Shared;  // shared with the detached workers

 private:
  std::shared_ptr<Shared> s_;
};

// Pins the hosts database to "files dns" for this process (see README: static glibc and NSS).
void pin_host_lookup();

}  // namespace cage::proxy
