# Seccomp profiles: seccomp/*.txt become BPF at build time (gen_profiles, linked with libseccomp, runs
# on the build host) and the BPF is compiled into cage as a constant table, so start-up does no
# libseccomp work. Included from the top-level CMakeLists.txt after the `cage` target exists.

# Parser + libseccomp compiler, for the generator, the unit tests and the benchmark (not for cage).
add_library(cage_seccomp_rules STATIC src/linux/seccomp_rules.cc)
# -iquote, not -I: under -I src, src/linux/seccomp.h would shadow the kernel's <linux/seccomp.h>,
# which libseccomp's <seccomp.h> includes.
target_compile_options(cage_seccomp_rules PUBLIC -iquote ${CMAKE_SOURCE_DIR}/src)
target_include_directories(cage_seccomp_rules PUBLIC ${SECCOMP_INCLUDE_DIRS})
target_compile_options(cage_seccomp_rules PRIVATE ${CAGE_WARNINGS})
target_link_libraries(cage_seccomp_rules PUBLIC ${SECCOMP_LINK_LIBRARIES})

set(CAGE_SECCOMP_ARCH ${CMAKE_SYSTEM_PROCESSOR} CACHE STRING
  "Architecture the seccomp BPF is generated for (x86_64, aarch64)")
if(CMAKE_CROSSCOMPILING)
  set(CAGE_SECCOMP_GEN "" CACHE FILEPATH "gen_profiles built for the build host (needed for cross builds)")
  if(NOT CAGE_SECCOMP_GEN)
    message(FATAL_ERROR "cross build: build cage_seccomp_gen natively and pass -DCAGE_SECCOMP_GEN=<path>")
  endif()
  set(cage_seccomp_gen_cmd ${CAGE_SECCOMP_GEN})
else()
  add_executable(cage_seccomp_gen seccomp/gen_profiles.cc)
  target_compile_options(cage_seccomp_gen PRIVATE ${CAGE_WARNINGS})
  target_link_libraries(cage_seccomp_gen PRIVATE cage_seccomp_rules)
  set(cage_seccomp_gen_cmd $<TARGET_FILE:cage_seccomp_gen>)
endif()

set(cage_seccomp_out ${CMAKE_BINARY_DIR}/generated/seccomp_profiles.cc)
add_custom_command(OUTPUT ${cage_seccomp_out}
  COMMAND ${cage_seccomp_gen_cmd} ${CAGE_SECCOMP_ARCH} ${cage_seccomp_out}
          floor=${CMAKE_SOURCE_DIR}/seccomp/floor.txt default=${CMAKE_SOURCE_DIR}/seccomp/default.txt relaxed=${CMAKE_SOURCE_DIR}/seccomp/relaxed.txt
          landlock_only=${CMAKE_SOURCE_DIR}/seccomp/landlock_only.txt
  DEPENDS ${cage_seccomp_gen_cmd} ${CMAKE_SOURCE_DIR}/seccomp/floor.txt ${CMAKE_SOURCE_DIR}/seccomp/default.txt ${CMAKE_SOURCE_DIR}/seccomp/relaxed.txt
          ${CMAKE_SOURCE_DIR}/seccomp/landlock_only.txt
  COMMENT "Generating seccomp BPF from seccomp/*.txt for ${CAGE_SECCOMP_ARCH}"
  VERBATIM)
add_library(cage_seccomp_profiles STATIC ${cage_seccomp_out})
target_compile_options(cage_seccomp_profiles PUBLIC -iquote ${CMAKE_SOURCE_DIR}/src)
target_compile_options(cage_seccomp_profiles PRIVATE ${CAGE_WARNINGS})
target_link_libraries(cage PRIVATE cage_seccomp_profiles)

# bench/seccomp_build.cc: what building the filter at start-up would cost, against the embedded copy.
add_executable(cage_seccomp_bench bench/seccomp_build.cc src/linux/seccomp.cc)
target_compile_options(cage_seccomp_bench PRIVATE ${CAGE_WARNINGS})
target_compile_definitions(cage_seccomp_bench PRIVATE CAGE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  CAGE_SECCOMP_ARCH="${CAGE_SECCOMP_ARCH}")
target_link_libraries(cage_seccomp_bench PRIVATE cage_seccomp_rules cage_seccomp_profiles)

# Called from tests/tests.cmake: the seccomp unit tests need the runtime side and the rule compiler.
function(cage_seccomp_unit_tests target)
  target_sources(${target} PRIVATE ${CMAKE_SOURCE_DIR}/src/linux/seccomp.cc)
  target_link_libraries(${target} PRIVATE cage_seccomp_rules cage_seccomp_profiles)
  target_compile_definitions(${target} PRIVATE CAGE_SECCOMP_ARCH="${CAGE_SECCOMP_ARCH}")
endfunction()
