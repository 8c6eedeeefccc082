# Test sets a matrix entry can ask for (sourced by guest.sh; the times are in README.md).
#   full:  the unit, integration and escape suites (root and the test user, and the fallback variants)
#   quick: the README quick-start, --self-test and a core subset of the integration and escape suites
#   none:  nothing (boot, facts, and the entry's --run script only)
# ctest writes each test's final status (after the retry, as tests/run.sh does) to results.txt.
quick_tests='^(integration\.(root|user)\.(self_test|workloads|net_loopback|limits_cgroup)|escape\.(root|user)\.(write_outside|read_host_files|processes))$'

run_ctest() {
  # Software emulation runs several times slower than the host the time limits were set for: scale
  # them in the guest's writable layer over the build (never in the host's build directory).
  find "$BUILD" -name CTestTestfile.cmake -exec perl -pi -e \
    's/TIMEOUT "(\d+)"/sprintf("TIMEOUT \"%d\"", $1 * ($ENV{TIMEOUT_SCALE} || 1))/ge' {} +
  (cd "$BUILD" && ctest --no-tests=error -j2 --repeat until-pass:2 --output-on-failure "$@") >>"$R/ctest.log" 2>&1
  awk -f "$here/ctest-results.awk" "$R/ctest.log" >"$R/ctest-results.txt"
}

run_set() {
  case $1 in
    full) run_ctest -L 'unit|integration|escape' ;;
    quick) bash "$here/quickstart.sh" >>"$R/results.txt"; run_ctest -R "$quick_tests" ;;
    none) ;;
    *) echo "FAIL unknown-set:$1 0" >>"$R/results.txt" ;;
  esac
  [ -f "$R/ctest-results.txt" ] && sort -k2 "$R/ctest-results.txt" >>"$R/results.txt"
  true
}
