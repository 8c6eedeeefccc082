#!/usr/bin/env bash
# Builds cage on a fresh Debian 12 / Ubuntu machine: installs the build dependencies (apt, with sudo
# when not root; packaging/setup-debian.sh), then a static Release build into build/ (or $CAGE_BUILD).
# Idempotent: a second run rebuilds only what changed. The binary is build/cage.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${CAGE_BUILD:-$top/build}
bash "$top/packaging/setup-debian.sh"
cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" cage
echo "build: $build/cage"
