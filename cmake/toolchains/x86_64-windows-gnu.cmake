# Cross build for x86_64-windows-gnu with zig (see cmake/zig.cmake and .ci/cross.sh):
#   cmake -S . -B build-x86_64-windows-gnu -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/x86_64-windows-gnu.cmake
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CAGE_ZIG_TARGET x86_64-windows-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/../zig.cmake)
