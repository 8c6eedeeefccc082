# Cross builds driven by zig (`zig cc` / `zig c++`: clang with the C libraries and libc++ for many
# targets). Included by the per-target files in cmake/toolchains/, which set CAGE_ZIG_TARGET and the
# CMAKE_SYSTEM_* variables first. The zig binary comes from -DCAGE_ZIG=..., $CAGE_ZIG, or PATH.
# CMake needs a compiler it can call with no extra words, so one-line wrapper scripts (`exec zig
# c++ "$@"`, likewise cc, ar, ranlib) are written into the build directory and named as the tools.
# The target reaches the compiler as --target=... through CMAKE_<LANG>_COMPILER_TARGET.
if(NOT CAGE_ZIG)
  set(CAGE_ZIG "$ENV{CAGE_ZIG}")
endif()
if(NOT CAGE_ZIG)
  find_program(CAGE_ZIG zig)
endif()
if(NOT CAGE_ZIG OR NOT EXISTS "${CAGE_ZIG}")
  message(FATAL_ERROR "zig 0.11 not found: pass -DCAGE_ZIG=/path/to/zig or set CAGE_ZIG (.ci/cross.sh installs it)")
endif()

# try_compile projects re-read this file: they reuse the top-level wrappers (passed down below).
if(NOT CAGE_ZIG_WRAPPERS)
  set(CAGE_ZIG_WRAPPERS "${CMAKE_BINARY_DIR}/zig-wrappers")
  foreach(tool cc c++ ar ranlib)
    # CMake's compiler ABI probe passes -Wl,-v, which zig's linkers reject: dropped.
    file(WRITE "${CAGE_ZIG_WRAPPERS}/zig-${tool}" "#!/bin/sh\n"
         "for a; do shift; [ \"$a\" = -Wl,-v ] || set -- \"$@\" \"$a\"; done\n"
         "exec \"${CAGE_ZIG}\" ${tool} \"$@\"\n")
    file(CHMOD "${CAGE_ZIG_WRAPPERS}/zig-${tool}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
         GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endforeach()
endif()
set(CAGE_ZIG "${CAGE_ZIG}" CACHE FILEPATH "zig 0.11 binary driving the cross build")
set(CAGE_ZIG_WRAPPERS "${CAGE_ZIG_WRAPPERS}" CACHE PATH "zig wrapper scripts")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CAGE_ZIG CAGE_ZIG_WRAPPERS CAGE_ZIG_TARGET)

set(CMAKE_C_COMPILER "${CAGE_ZIG_WRAPPERS}/zig-cc")
set(CMAKE_CXX_COMPILER "${CAGE_ZIG_WRAPPERS}/zig-c++")
set(CMAKE_AR "${CAGE_ZIG_WRAPPERS}/zig-ar" CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB "${CAGE_ZIG_WRAPPERS}/zig-ranlib" CACHE FILEPATH "" FORCE)
set(CMAKE_C_COMPILER_TARGET ${CAGE_ZIG_TARGET})
set(CMAKE_CXX_COMPILER_TARGET ${CAGE_ZIG_TARGET})

# Nothing from the build host: its headers (glibc) break every target, its libraries are foreign.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_FIND_ROOT_PATH "${CAGE_ZIG_WRAPPERS}/no-root")
