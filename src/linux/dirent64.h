// getdents64's record, for code that lists directories without allocating (cage's init after fork:
// the private directory's removal, the process-tree walk); glibc 2.36 has no wrapper for it.
#pragma once

#include <cstdint>

namespace cage::lx {

struct Dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

}  // namespace cage::lx
