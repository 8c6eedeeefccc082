// The Waker on POSIX hosts without eventfd (macOS): a non-blocking, close-on-exec pipe; a full pipe
// means "already signalled".
#include <fcntl.h>
#include <unistd.h>

#include "proxy/waker.h"

namespace cage::proxy {

Waker::Waker() {
  int p[2];
  if (pipe(p) != 0) return;
  for (int fd : p) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  read_.reset(p[0]);
  write_.reset(p[1]);
}

void Waker::signal() {
  char one = 1;
  if (write(write_.get(), &one, 1) < 0) { /* pipe full: already signalled */ }
}

void Waker::drain() {
  char buf[256];
  while (read(read_.get(), buf, sizeof buf) > 0) {
  }
}

}  // namespace cage::proxy
