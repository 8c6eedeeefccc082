// A wake-up the proxy's poller can watch: signal() from any thread makes get() readable. Linux uses
// one eventfd (waker_eventfd.cc), other POSIX hosts a non-blocking pipe (waker_pipe.cc).
#pragma once
#include "common/unique_fd.h"

namespace cage::proxy {

class Waker {
 public:
  Waker();
  bool valid() const { return read_.valid(); }
  int get() const { return read_.get(); }  // watch this for input
  void signal();                           // thread-safe; never blocks
  void drain();                            // consumes pending signals

 private:
  // Linux: one eventfd (write_ unused); other POSIX hosts: a pipe; Windows: one UDP socket sent to
  // itself (write_ unused). UniqueSocket is UniqueFd on POSIX hosts.
  UniqueSocket read_, write_;
};

}  // namespace cage::proxy
