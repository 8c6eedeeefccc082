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
  UniqueFd read_, write_;  // the same eventfd on Linux (write_ unused)
};

}  // namespace cage::proxy
