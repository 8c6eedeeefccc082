#!/usr/bin/env bash
# Installs every build and test dependency of cage on a fresh Debian 12 / Ubuntu machine, and
# unpacks mimalloc's Debian source package into third_party/mimalloc (built static by CMake).
# Idempotent: a second run installs nothing new. Needs root (or sudo).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

pkgs=(build-essential g++ cmake ninja-build pkg-config dpkg-dev file
      libcli11-dev libtomlplusplus-dev libseccomp-dev libcap-ng-dev
      libgtest-dev libgmock-dev bats mandoc bubblewrap iproute2 util-linux
      python3 curl socat procps strace git make gcc netcat-openbsd openssl clang-14 libclang-rt-14-dev
      bind9-dnsutils  # dig: tests/integration/net_dns_answers.sh
      fuse3 python3-fusepy  # a FUSE witness: tests/integration/explain_fuse.sh
      python3-venv  # a real tool under --explain: tests/integration/explain_tools.sh (npm: below)
      man-db zsh fish lintian rpm ruby python3-yaml fakeroot  # packaging and docs tests (tests/packaging)
      xvfb x11-utils weston wayland-utils)  # the GUI recipe (tests/integration/recipe_gui.sh)
# npm for tests/integration/explain_tools.sh, unless one is installed already: Debian's npm
# conflicts with a nodejs from elsewhere (NodeSource's bundles its own npm).
command -v npm >/dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done

# deb-src for the same mirror, so that mimalloc's source package can be fetched.
enable_deb_src() {
  local f=/etc/apt/sources.list.d/debian.sources
  if [ -f "$f" ] && ! grep -q 'deb-src' "$f"; then
    $SUDO sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"; return 0
  fi
  if [ -f /etc/apt/sources.list ] && ! grep -q '^deb-src' /etc/apt/sources.list && grep -q '^deb ' /etc/apt/sources.list; then
    grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | $SUDO tee -a /etc/apt/sources.list >/dev/null; return 0
  fi
  return 1
}
need_update=0
enable_deb_src && need_update=1
[ ${#missing[@]} -eq 0 ] || need_update=1
mi_dir="$here/third_party/mimalloc"
[ -f "$mi_dir/src/static.c" ] || need_update=1
if [ $need_update -eq 1 ]; then $SUDO apt-get update -qq; fi
if [ ${#missing[@]} -gt 0 ]; then $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; fi

if [ ! -f "$mi_dir/src/static.c" ]; then
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get source -qq --only-source mimalloc >/dev/null 2>&1 || apt-get source --only-source mimalloc)
  src=$(find "$tmp" -maxdepth 1 -type d -name 'mimalloc-*' | head -n1)
  [ -n "$src" ] || { echo "setup: mimalloc source package not found" >&2; exit 1; }
  mkdir -p "$here/third_party"; rm -rf "$mi_dir"; cp -a "$src" "$mi_dir"
fi
echo "setup: dependencies ready"
