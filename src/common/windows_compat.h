// Force-included first in every Windows translation unit (CMakeLists.txt: -include). The mingw CRT
// defines `environ` as a macro, which breaks the many members and parameters of that name; and the
// portable layers use two POSIX calls the CRT lacks. Windows code reads the environment through
// GetEnvironmentStringsW (src/backend/windows.cc), never through `environ`.
#pragma once
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#undef environ

#ifdef __cplusplus
// No symbolic links in the CRT's view of the file system: lstat is stat.
inline int lstat(const char* path, struct stat* st) { return stat(path, st); }
// Absolute and lexically clean (no link resolution): used for profile identities (include cycles).
inline char* realpath(const char* path, char* resolved) { return _fullpath(resolved, path, PATH_MAX); }
#endif
