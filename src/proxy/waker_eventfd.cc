// The Linux Waker: one eventfd; a saturated counter means "already signalled".
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "proxy/waker.h"

namespace cage::proxy {

Waker::Waker() : read_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void Waker::signal() {
  uint64_t one = 1;
  if (write(read_.get(), &one, sizeof one) < 0) { /* counter saturated: already signalled */ }
}

void Waker::drain() {
  uint64_t n;
  if (read(read_.get(), &n, sizeof n) < 0) { /* nothing pending */ }
}

}  // namespace cage::proxy
