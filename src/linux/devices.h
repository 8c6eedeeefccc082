// The host devices of cage's minimal /dev, in one table: mount.cc binds each into the sandbox's
// /dev, and compile.cc / compile_landlock.cc give each Landlock's device read-write right.
#pragma once
#include <string>

namespace cage::lx {

inline constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom", "tty"};

inline std::string dev_path(const char* name) { return std::string("/dev/") + name; }

}  // namespace cage::lx
