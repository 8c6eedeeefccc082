#include "common/secret.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace cage {

namespace {

Error secret_error(const policy::Secret& s, const std::string& why, const std::string& remedy, int err = 0) {
  return Error{ErrorClass::invalid_policy, why, remedy, s.origin, err};
}

// Reads fd to its end, at most kMaxSecretBytes; false when larger.
bool read_all(int fd, std::string& out, int& err) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      explicit_bzero(buf, sizeof buf);
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxSecretBytes) break;
  }
  explicit_bzero(buf, sizeof buf);
  return true;
}

Result<std::string> read_one(const policy::Secret& s) {
  std::string value;
  value.reserve(kMaxSecretBytes + 8192);  // no reallocation leaves an unwiped copy behind
  int err = 0;
  if (s.source[0] == '@') {
    int fd = ::open(s.source.c_str() + 1, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
      return secret_error(s, "cannot read the secret's file", "check the path and its permissions", errno);
    bool ok = read_all(fd, value, err);
    ::close(fd);
    if (!ok) return secret_error(s, "cannot read the secret's file", "check the file", err);
  } else if (s.source.rfind("fd:", 0) == 0) {
    int fd = std::atoi(s.source.c_str() + 3);
    if (::fcntl(fd, F_GETFD) < 0)
      return secret_error(s, "file descriptor " + std::to_string(fd) + " is not open",
                          "open it for reading before starting cage (e.g. 3<token-file)", errno);
    bool ok = read_all(fd, value, err);
    ::close(fd);  // read once: the workload never inherits it
    if (!ok)
      return secret_error(s, "cannot read the secret from its descriptor", "pass a readable descriptor", err);
  } else {
    const std::string var = s.source.substr(4);
    char** entry = nullptr;
    for (char** e = environ; e && *e; ++e)
      if (std::strncmp(*e, var.c_str(), var.size()) == 0 && (*e)[var.size()] == '=') entry = e;
    if (!entry)
      return secret_error(s, "the variable " + var + " is not set", "set it, or name another source");
    char* v = *entry + var.size() + 1;
    value.append(v);
    explicit_bzero(v, std::strlen(v));  // the block /proc/PID/environ shows
  }
  if (value.size() > kMaxSecretBytes) {
    explicit_bzero(value.data(), value.size());
    return secret_error(s, "the secret is larger than 128 KiB (the kernel's limit for one variable)",
                        "pass a path to the secret instead");
  }
  if (value.find('\0') != std::string::npos) {
    explicit_bzero(value.data(), value.size());
    return secret_error(s, "the secret holds a NUL byte, which an environment variable cannot carry",
                        "pass a path to the secret instead");
  }
  if (!value.empty() && value.back() == '\n') value.pop_back();
  if (!value.empty() && value.back() == '\r') value.pop_back();
  return value;
}

}  // namespace

Result<std::vector<std::string>> read_secrets(const std::vector<policy::Secret>& secrets) {
  std::vector<std::string> out;
  out.reserve(secrets.size());
  for (const auto& s : secrets) {
    auto v = read_one(s);
    if (!v) {
      wipe(out);
      return v.error();
    }
    std::string entry;
    entry.reserve(s.name.size() + 1 + v->size());
    entry.append(s.name).append("=").append(*v);
    explicit_bzero(v->data(), v->size());
    out.push_back(std::move(entry));
  }
  return out;
}

void wipe(std::vector<std::string>& values) {
  for (auto& v : values) explicit_bzero(v.data(), v.size());
  values.clear();
}

}  // namespace cage
