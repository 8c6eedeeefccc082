# Benchmarks that link cage's own code (the others under bench/ build their helpers themselves).
# Built with the rest so they keep compiling; run by hand, never by CTest. Results: bench/README.md.
add_executable(cage_relay_bench bench/relay_bulk.cc)  # the relay's bulk pipe, before/after in one run
target_link_libraries(cage_relay_bench PRIVATE cage_core pthread)
target_compile_options(cage_relay_bench PRIVATE ${CAGE_WARNINGS})
