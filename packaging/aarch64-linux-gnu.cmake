# CMake toolchain for a static aarch64 cage from Debian's cross toolchain (g++-aarch64-linux-gnu)
# and multiarch libraries (libseccomp-dev:arm64, libcap-ng-dev:arm64). Used by packaging/release.sh,
# which also passes -DCAGE_SECCOMP_GEN (the BPF generator runs on the build host).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
