// An owned file descriptor, closed once when it goes out of scope. UniqueSocket is the same for a
// socket: on POSIX hosts the very same type; on Windows a Winsock SOCKET (held as an int: socket
// handles fit in 32 bits) closed with closesocket (src/proxy/socket_windows.cc).
#pragma once
#include <unistd.h>

#include <utility>

namespace cage {

namespace detail {
inline void close_fd(int fd) { ::close(fd); }
}  // namespace detail

template <void (*Close)(int)>
class BasicUniqueFd {
 public:
  BasicUniqueFd() = default;
  explicit BasicUniqueFd(int fd) : fd_(fd) {}
  BasicUniqueFd(BasicUniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  BasicUniqueFd& operator=(BasicUniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  BasicUniqueFd(const BasicUniqueFd&) = delete;
  BasicUniqueFd& operator=(const BasicUniqueFd&) = delete;
  ~BasicUniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) Close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

using UniqueFd = BasicUniqueFd<detail::close_fd>;

#if defined(_WIN32)
void close_socket(int s);
using UniqueSocket = BasicUniqueFd<close_socket>;
#else
using UniqueSocket = UniqueFd;
#endif

}  // namespace cage
