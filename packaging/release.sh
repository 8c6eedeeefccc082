#!/usr/bin/env bash
# Release artefacts: static Linux binaries for x86_64 and aarch64 as tarballs, a source tarball,
# SHA256SUMS, and the package manifests rendered with those checksums.
#   packaging/release.sh [--cross] [OUT_DIR]   (default: dist/)
#   packaging/release.sh --setup               install the cross toolchain and arm64 libraries (root)
# --cross also builds macOS (x86_64, arm64) and Windows (x86_64) with zig through .ci/cross.sh and
# packs cage-V-macos-ARCH.tar.gz and cage-V-windows-x86_64.zip (the Homebrew formula, Scoop and
# winget manifests point at these; without --cross they are not rendered). Those binaries are only
# checked for their format here: nothing can run them on Linux.
# aarch64 is cross-built with Debian's g++-aarch64-linux-gnu against libseccomp-dev:arm64 and
# libcap-ng-dev:arm64, and its --version is smoke-run under qemu-aarch64-static. Set
# CAGE_RELEASE_ARCHES="x86_64" to build only the native one.
# Reuse of earlier builds (the test suite and CI do, so a release check costs no second compile):
#   CAGE_RELEASE_NATIVE_BUILD=DIR  a Release build directory of this tree whose cage is packed
#   CAGE_RELEASE_NATIVE_FROZEN=1   use that build as it is (the test suite runs its cage meanwhile)
#   CAGE_RELEASE_CROSS_DIR=DIR     .ci/cross.sh's build directory (default: a fresh one under work)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--setup" ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends g++-aarch64-linux-gnu qemu-user-static \
    libseccomp-dev:arm64 libcap-ng-dev:arm64
  exit 0
fi
cross=0
if [ "${1:-}" = "--cross" ]; then cross=1; shift; fi
out=$(mkdir -p "${1:-$top/dist}" && cd "${1:-$top/dist}" && pwd)
version=$(sed -n 's/^project(cage VERSION \([0-9][0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
arches=${CAGE_RELEASE_ARCHES:-x86_64 aarch64}
work=${CAGE_RELEASE_WORK:-$(mktemp -d)}
# Reproducible archives: fixed owner, order and time (the last commit's, or now outside git).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}
tar_gz() {  # tar_gz OUT.tar.gz DIR NAME
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$2" -cf - "$3" | gzip -9n > "$1"
}
[ "$(uname -m)" = x86_64 ] || { echo "release.sh: run on an x86_64 host" >&2; exit 1; }
[ -f "$top/third_party/mimalloc/src/static.c" ] || bash "$top/packaging/setup-debian.sh"

build_native() {
  if [ -n "${CAGE_RELEASE_NATIVE_BUILD:-}" ]; then  # an existing Release build: brought up to date,
    # unless the test suite runs from it (CAGE_RELEASE_NATIVE_FROZEN=1): relinking the cage under test
    # would fail the tests running it at that moment.
    if [ -z "${CAGE_RELEASE_NATIVE_FROZEN:-}" ]; then ninja -C "$CAGE_RELEASE_NATIVE_BUILD" cage cage_seccomp_gen >/dev/null; fi
    mkdir -p "$work" && rm -rf "$work/build-x86_64" && ln -s "$(cd "$CAGE_RELEASE_NATIVE_BUILD" && pwd)" "$work/build-x86_64"
    return
  fi
  cmake -S "$top" -B "$work/build-x86_64" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAGE_TESTS=OFF >/dev/null
  ninja -C "$work/build-x86_64" cage cage_seccomp_gen >/dev/null
}
build_aarch64() {
  for need in aarch64-linux-gnu-g++ qemu-aarch64-static; do
    command -v $need >/dev/null || { echo "release.sh: $need missing: run packaging/release.sh --setup" >&2; exit 1; }
  done
  [ -f /usr/lib/aarch64-linux-gnu/libseccomp.a ] && [ -f /usr/lib/aarch64-linux-gnu/libcap-ng.a ] ||
    { echo "release.sh: arm64 libseccomp/libcap-ng missing: run packaging/release.sh --setup" >&2; exit 1; }
  cmake -S "$top" -B "$work/build-aarch64" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAGE_TESTS=OFF \
    -DCMAKE_TOOLCHAIN_FILE="$top/packaging/aarch64-linux-gnu.cmake" -DCAGE_SECCOMP_ARCH=aarch64 \
    -DCAGE_SECCOMP_GEN="$work/build-x86_64/cage_seccomp_gen" >/dev/null
  ninja -C "$work/build-aarch64" cage >/dev/null
}

build_native
rm -f "$out"/cage-"$version"-* "$out/SHA256SUMS"
for arch in $arches; do
  [ "$arch" = aarch64 ] && build_aarch64
  bin=$work/build-$arch/cage
  strip_tool=strip; [ "$arch" = aarch64 ] && strip_tool=aarch64-linux-gnu-strip
  file -L "$bin" | grep -Eq 'statically linked|static-pie linked' || { echo "release.sh: $arch binary is not static" >&2; exit 1; }
  run=(); [ "$arch" = aarch64 ] && run=(qemu-aarch64-static)
  got=$("${run[@]}" "$bin" --version)
  [ "$got" = "cage $version" ] || { echo "release.sh: $arch --version said '$got'" >&2; exit 1; }
  echo "release.sh: $arch: $got ($(file -L "$bin" | cut -d, -f2 | sed 's/^ //'))"
  name=cage-$version-linux-$arch
  d=$work/stage/$name; rm -rf "$d"; mkdir -p "$d/completions" "$d/profiles"
  install -m 0755 "$bin" "$d/cage"; $strip_tool --strip-all "$d/cage"
  install -m 0644 "$top/man/cage.1" "$top/README.md" "$d/"
  install -m 0644 "$top/completions/cage.bash" "$top/completions/_cage" "$top/completions/cage.fish" \
    "$top/completions/cage.ps1" "$d/completions/"
  cp "$top"/profiles/*.toml "$d/profiles/" 2>/dev/null || rmdir "$d/profiles"
  chmod -R u=rwX,go=rX "$d"
  tar_gz "$out/$name.tar.gz" "$work/stage" "$name"
done

# macOS and Windows: cross-built with zig (.ci/cross.sh checks each format), same contents as Linux.
stage_common() {  # stage_common DIR
  mkdir -p "$1/completions" "$1/profiles"
  install -m 0644 "$top/man/cage.1" "$top/README.md" "$1/"
  install -m 0644 "$top/completions/cage.bash" "$top/completions/_cage" "$top/completions/cage.fish" \
    "$top/completions/cage.ps1" "$1/completions/"
  cp "$top"/profiles/*.toml "$1/profiles/" 2>/dev/null || rmdir "$1/profiles"
}
if [ $cross -eq 1 ]; then
  cross_dir=${CAGE_RELEASE_CROSS_DIR:-$work/cross}
  CAGE_CROSS_BUILD_DIR=$cross_dir bash "$top/.ci/cross.sh" | sed 's/^/release.sh: /'
  for t in x86_64-macos:macos-x86_64 aarch64-macos:macos-arm64; do
    name=cage-$version-${t#*:}
    d=$work/stage/$name; rm -rf "$d"; mkdir -p "$d"
    install -m 0755 "$cross_dir/${t%%:*}/cage" "$d/cage"
    stage_common "$d"
    chmod -R u=rwX,go=rX "$d"
    tar_gz "$out/$name.tar.gz" "$work/stage" "$name"
  done
  name=cage-$version-windows-x86_64
  d=$work/stage/$name; rm -rf "$d"; mkdir -p "$d"
  install -m 0644 "$cross_dir/x86_64-windows-gnu/cage.exe" "$d/cage.exe"
  stage_common "$d"
  # zip: sorted names, fixed times (-X drops extra attributes), so the archive is reproducible.
  find "$d" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  rm -f "$out/$name.zip"
  (cd "$work/stage" && find "$name" | LC_ALL=C sort | zip -q -X -9 -@ "$out/$name.zip")
fi

# Source tarball (what the RPM spec, the Homebrew formula and the PKGBUILD build from): the
# tracked files plus mimalloc's source, which the build compiles in.
src=cage-$version
rm -rf "$work/src"; mkdir -p "$work/src/$src"
(cd "$top" && git ls-files -z 2>/dev/null || find . -path ./third_party -prune -o -path './build*' -prune -o -path ./dist -prune -o -type f -print0) |
  (cd "$top" && xargs -0 cp --parents -t "$work/src/$src")
mkdir -p "$work/src/$src/third_party" && cp -a "$top/third_party/mimalloc" "$work/src/$src/third_party/"
tar_gz "$out/$src.tar.gz" "$work/src" "$src"

(cd "$out" && sha256sum cage-"$version"*.tar.gz $(ls cage-"$version"*.zip 2>/dev/null) > SHA256SUMS &&
  sha256sum -c --quiet SHA256SUMS)
python3 "$top/packaging/manifests.py" render --version "$version" --dist "$out" --out "$out/packaging"
python3 "$top/packaging/manifests.py" check --version "$version" --dist "$out" "$out/packaging"
echo "release.sh: artefacts in $out:"; (cd "$out" && ls -1 && cat SHA256SUMS)
