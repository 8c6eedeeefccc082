#!/usr/bin/env bash
# The whole test suite: builds cage (Release, static) if needed, then runs every CTest test: unit
# tests, and the integration and escape scripts as the invoking user and again as an unprivileged
# user (created here when run as root). Usage: bash tests/run.sh [ctest args...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${CAGE_BUILD:-$top/build}
if [ ! -f "$top/third_party/mimalloc/src/static.c" ] || ! command -v cmake >/dev/null; then
  bash "$top/packaging/setup-debian.sh"
fi
cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build"
if [ "$(id -u)" -eq 0 ]; then
  user=${CAGE_TEST_USER:-cagetest}
  id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
  # The unprivileged runs need to reach the binaries and the sources.
  for d in "$top" "$build"; do
    p=$d
    while [ "$p" != / ]; do chmod o+x "$p" 2>/dev/null || true; p=$(dirname "$p"); done
  done
fi
cd "$build"
# No test is retried: a test that fails under load has a race to fix at its cause.
ctest --no-tests=error --output-on-failure -j2 "$@"
