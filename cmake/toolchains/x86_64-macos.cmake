# Cross build for x86_64-macos with zig (see cmake/zig.cmake and .ci/cross.sh):
#   cmake -S . -B build-x86_64-macos -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/x86_64-macos.cmake
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CAGE_ZIG_TARGET x86_64-macos)
# No Xcode here: zig brings the macOS SDK headers and libSystem stubs itself.
set(CMAKE_OSX_SYSROOT "" CACHE PATH "" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "" FORCE)
include(${CMAKE_CURRENT_LIST_DIR}/../zig.cmake)
