// Path arithmetic for grants: "~" expansion, joining a relative path to its base (the current
// directory, or a profile's directory), lexical cleaning. Pure string work; symlinks are resolved
// later against the host (HostView), because only the kernel knows what ".." means there.
#include <string>
#include <vector>

#include "policy/policy.h"

namespace cage::policy {

std::string lexically_clean(const std::string& abs) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < abs.size()) {
    size_t j = abs.find('/', i);
    if (j == std::string::npos) j = abs.size();
    std::string part = abs.substr(i, j - i);
    if (!part.empty() && part != ".") parts.push_back(part);
    i = j + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

Result<std::string> absolute_path(const Value& v, const std::string& home) {
  const std::string where = v.origin + " " + v.text;
  std::string p = v.text;
  if (p.empty()) return invalid(where, "empty path", "give a file or directory path");
  if (p.find('\0') != std::string::npos) return invalid(where, "path contains a NUL byte");
  for (unsigned char c : p)
    if (c < 0x20 || c == 0x7f)
      return invalid(where, "path contains a control character", "rename the file or pick another path");
  if (p == "~" || p.rfind("~/", 0) == 0) {
    if (home.empty()) return invalid(where, "'~' used but HOME is not set", "give an absolute path");
    p = home + p.substr(1);
  } else if (p[0] == '~') {
    return invalid(where, "'~user' is not supported", "write the home directory out in full");
  }
  if (p[0] != '/') {
    if (v.base.empty() || v.base[0] != '/')
      return invalid(where, "a relative path, and the current directory it is relative to is gone",
                     "give an absolute path, or cd to an existing directory");
    p = v.base + "/" + p;
  }
  if (p.size() > 4000) return invalid(where, "path is too long", "use a shorter path");
  return lexically_clean(p);
}

std::string resolve_dot_dot(const std::string& abs) {
  std::string out;
  for (size_t i = 0; i < abs.size();) {
    size_t j = abs.find('/', i);
    if (j == std::string::npos) j = abs.size();
    std::string part = abs.substr(i, j - i);
    i = j + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      out.resize(out.rfind('/') == std::string::npos ? 0 : out.rfind('/'));
      continue;
    }
    out += "/" + part;
  }
  return out.empty() ? "/" : out;
}

std::string parent_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : p.substr(0, slash);
}

std::string wide_directory(const std::string& real, const std::string& home) {
  if (real == "/") return "the root";
  if (!home.empty() && is_beneath(home, real)) return real == home ? "$HOME (" + real + ")" : real + ", which holds $HOME";
  for (const char* sys : {"/bin", "/boot", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/root", "/run", "/sbin",
                          "/srv", "/tmp", "/usr", "/usr/local", "/var", "/var/tmp", "/dev/shm"})
    if (real == sys) return "the system directory " + real;
  return "";
}

std::pair<std::string, std::string> split_tmpfs_spec(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || text.compare(colon + 1, 5, "size=") != 0) return {text, ""};
  return {text.substr(0, colon), text.substr(colon + 6)};
}

bool is_beneath(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  if (path.size() < dir.size() || path.compare(0, dir.size(), dir) != 0) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

}  // namespace cage::policy
