# Test sets a matrix entry can ask for (sourced by guest.sh; the times are in README.md).
#   full:  the unit, integration and escape suites (root and the test user, and the Landlock-only variants)
#   kernel: the integration and escape suites only (the unit tests exercise pure layers, the same
#          on every kernel)
#   quick: the README quick-start, --self-test and a core subset of the integration and escape suites
#   ci:    the README quick-start and the tests whose outcome depends on the kernel (Landlock ABI,
#          mount API, Landlock as a layer, --net with a local server, the seccomp floor, process
#          lifetime), as root and the test user:
#          what CI runs on 6.1, where the whole suite under emulation would not fit CI's time
#   select: the tests whose names match $TESTS (CAGE_MATRIX_TESTS on the host): a failure's
#          cause chased on one kernel without the whole set's hour under emulation
#   none:  nothing (boot, facts, and the entry's --run script only)
# quick: 6.12 has Landlock ABI 6, so the Landlock-only mechanism (escape.landlock_only.*) runs there.
# workloads (cc, git, pip, npm) and landlock_only_net each take minutes under emulation: not here.
# ctest writes each test's status to results.txt (no retry: a failure is a failure).
# Tests that assert wall-clock bounds (limits_cgroup's fork latency, net_loopback's fail-fast) are
# left to the full set: emulation is several times slower than the host they were tuned on.
quick_tests='^(integration\.(root|user)\.(self_test|net_own_loopback)|escape\.(root|user)\.(write_outside|read_host_files|processes)|escape\.landlock_only\.(root|user)\.(write_outside|processes|network))$'
ci_tests='^(integration\.(root|user)\.(self_test|net_own_loopback|check_layers)|escape\.(root|user)\.(write_outside|read_host_files|processes|network|nested_rename|mount_propagation|kernel_interfaces|setid_create|terminal_inject|outlive))$'

run_ctest() {
  # Software emulation runs several times slower than the host the time limits were set for: scale
  # them in the guest's writable layer over the build (never in the host's build directory).
  find "$BUILD" -name CTestTestfile.cmake -exec perl -pi -e \
    's/TIMEOUT "(\d+)"/sprintf("TIMEOUT \"%d\"", $1 * ($ENV{TIMEOUT_SCALE} || 1))/ge' {} +
  (cd "$BUILD" && ctest --no-tests=error -j2 --output-on-failure "$@") >>"$R/ctest.log" 2>&1
  awk -f "$here/ctest-results.awk" "$R/ctest.log" >"$R/ctest-results.txt"
}

run_set() {
  case $1 in
    full) run_ctest -L 'unit|integration|escape' ;;
    kernel) run_ctest -L 'integration|escape' ;;
    quick) bash "$here/quickstart.sh" >>"$R/results.txt"; run_ctest -R "$quick_tests" ;;
    ci) bash "$here/quickstart.sh" >>"$R/results.txt"; run_ctest -R "$ci_tests" ;;
    select) run_ctest -R "${TESTS:?CAGE_MATRIX_TESTS names no tests}" ;;
    none) ;;
    *) echo "FAIL unknown-set:$1 0" >>"$R/results.txt" ;;
  esac
  [ -f "$R/ctest-results.txt" ] && sort -k2 "$R/ctest-results.txt" >>"$R/results.txt"
  true
}
