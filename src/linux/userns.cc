// User namespace (parent side): maps the caller's uid and gid to the same ids inside, one id each,
// with setgroups denied; no other host id exists inside. Also, child side, the loopback of the new
// network namespace. Proved by tests/integration/proc_ids.sh.
#include <fcntl.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "linux/child.h"

namespace cage::lx {

namespace {

int write_proc(int pid, const char* file, const char* text) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = ::write(fd, text, std::strlen(text));
  int e = n < 0 ? errno : 0;
  ::close(fd);
  return e;
}

}  // namespace

int write_id_maps(const IdMaps& ids, int pid) {
  char line[64];
  if (int e = write_proc(pid, "setgroups", "deny")) return e;
  std::snprintf(line, sizeof line, "%u %u 1\n", ids.inner_uid, ids.outer_uid);
  if (int e = write_proc(pid, "uid_map", line)) return e;
  std::snprintf(line, sizeof line, "%u %u 1\n", ids.inner_gid, ids.outer_gid);
  return write_proc(pid, "gid_map", line);
}

int bring_up_loopback() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  struct ifreq ifr {};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  int e = 0;
  if (::ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
    e = errno;
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::ioctl(s, SIOCSIFFLAGS, &ifr) != 0) e = errno;
  }
  ::close(s);
  return e;
}

}  // namespace cage::lx
