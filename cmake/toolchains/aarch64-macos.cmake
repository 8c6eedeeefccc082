# Cross build for aarch64-macos with zig (see cmake/zig.cmake and .ci/cross.sh):
#   cmake -S . -B build-aarch64-macos -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-macos.cmake
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CAGE_ZIG_TARGET aarch64-macos)
# No Xcode here: zig brings the macOS SDK headers and libSystem stubs itself.
set(CMAKE_OSX_SYSROOT "" CACHE PATH "" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "" FORCE)
include(${CMAKE_CURRENT_LIST_DIR}/../zig.cmake)
