// --learn's file and secret checks (see learn_file.h).
#include "linux/learn_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <random>

#include "common/audit.h"
#include "linux/learn.h"

namespace cage::lx::learn {

std::vector<std::string> present_secrets(const std::string& home) {
  std::vector<std::string> out;
  if (home.empty() || home == "/") return out;
  struct stat st {};
  for (const auto& rel : secret_locations())
    if (::lstat((home + "/" + rel).c_str(), &st) == 0) out.push_back(home + "/" + rel);
  return out;
}

Result<Target> open_target(const std::string& path, const std::string& origin) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0)
    return invalid(origin, "the file exists: --learn never replaces a file", "remove it, or name a new file");
  const auto slash = path.rfind('/');
  const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    Error e = invalid(origin, "its directory cannot be opened: " + std::string(std::strerror(errno)),
                      "create the directory, or name a file in an existing one");
    e.sys_errno = errno;
    return e;
  }
  return Target{UniqueFd(fd), path.substr(slash + 1), path};
}

Status write_profile(const Target& t, const std::string& text, const std::string& origin) {
  std::random_device rd;
  const std::string tmp = "." + t.name + ".cage-learn." + std::to_string(rd());
  auto failed = [&](const std::string& what) {
    Error e = invalid(origin, what + ": " + std::string(std::strerror(errno)),
                      "the profile was not written; free the name, then learn again");
    e.sys_errno = errno;
    return e;
  };
  // O_EXCL|O_NOFOLLOW: the temporary name is ours alone, never a link the workload left.
  int fd = ::openat(t.dir.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return failed("cannot create a temporary file beside it");
  UniqueFd own(fd);
  if (int err = audit::write_all(fd, text); err != 0 || ::fsync(fd) != 0) {
    if (err != 0) errno = err;
    Error e = failed("cannot write it");
    ::unlinkat(t.dir.get(), tmp.c_str(), 0);
    return e;
  }
  // link() never replaces: a name that appeared during the run (the workload's) fails with EEXIST.
  if (::linkat(t.dir.get(), tmp.c_str(), t.dir.get(), t.name.c_str(), 0) != 0) {
    Error e = failed(errno == EEXIST ? "the file appeared during the run" : "cannot put it in place");
    ::unlinkat(t.dir.get(), tmp.c_str(), 0);
    return e;
  }
  ::unlinkat(t.dir.get(), tmp.c_str(), 0);
  ::fsync(t.dir.get());
  return Ok{};
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace cage::lx::learn
