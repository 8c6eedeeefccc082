# Cross builds must never see the build host's /usr/include (glibc's headers break every target), yet
# CLI11 and toml++ are header libraries installed there. Copies of just those two trees are staged
# in a folder of their own and put on the include path. (toml++ is also copied and patched by
# cmake/profiles.cmake, whose copy comes first; this one is for any other consumer.)
set(CAGE_CLI11_SRC "/usr/include/CLI" CACHE PATH "CLI11 header tree (CLI/CLI.hpp) to stage for cross builds")
set(CAGE_CROSS_INCLUDE ${CMAKE_BINARY_DIR}/cross-include)
if(NOT EXISTS ${CAGE_CLI11_SRC}/CLI.hpp)
  message(FATAL_ERROR "CLI11 headers not found at ${CAGE_CLI11_SRC} (apt-get install libcli11-dev)")
endif()
file(COPY ${CAGE_CLI11_SRC}/ DESTINATION ${CAGE_CROSS_INCLUDE}/CLI)
include_directories(SYSTEM ${CAGE_CROSS_INCLUDE})
