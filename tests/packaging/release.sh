#!/usr/bin/env bash
# Release artefacts: packaging/release.sh builds static tarballs (x86_64, and aarch64 when Debian's
# cross toolchain and arm64 libraries are installed: `packaging/release.sh --setup`), a source
# tarball and SHA256SUMS. Checks: the sums verify, each binary is static and says its version
# (aarch64 under qemu-aarch64-static), the tarball holds the man page, completions and profiles,
# and the x86_64 binary from the tarball confines a real command.
set -euo pipefail
: "${CAGE_SOURCE_DIR:?}"
src=$CAGE_SOURCE_DIR
[ "$(uname -m)" = x86_64 ] || { echo "skip: release builds run on x86_64 hosts"; exit 77; }
command -v python3 >/dev/null && command -v file >/dev/null || { echo "skip: python3/file missing"; exit 77; }
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; chmod 755 "$tmp"
version=$(sed -n 's/^project(cage VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
arches="x86_64"
if command -v aarch64-linux-gnu-g++ >/dev/null && command -v qemu-aarch64-static >/dev/null &&
   [ -f /usr/lib/aarch64-linux-gnu/libseccomp.a ] && [ -f /usr/lib/aarch64-linux-gnu/libcap-ng.a ]; then
  arches="x86_64 aarch64"
else
  echo "note: no aarch64 cross toolchain/arm64 libraries (packaging/release.sh --setup): x86_64 only"
fi
# macOS and Windows too when .ci/cross.sh has built them ($CAGE_RELEASE_CROSS_DIR, as .ci/run sets
# after its cross stage): the suite itself compiles no cross target, and packs the x86_64 binary
# the suite has built and tested ($CAGE_BUILD_DIR) rather than compiling it again.
cross=()
if [ -n "${CAGE_RELEASE_CROSS_DIR:-}" ]; then
  [ -f "$CAGE_RELEASE_CROSS_DIR/x86_64-windows-gnu/cage.exe" ] || { echo "FAIL: no cross build in $CAGE_RELEASE_CROSS_DIR"; exit 1; }
  cross=(--cross)
else
  echo "note: CAGE_RELEASE_CROSS_DIR unset (.ci/run sets it after .ci/cross.sh): macOS and Windows artefacts not checked"
fi
# The aarch64 build tree is kept in the build directory, so that a second run is incremental.
native=(); [ -n "${CAGE_BUILD_DIR:-}" ] && grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' "$CAGE_BUILD_DIR/CMakeCache.txt" 2>/dev/null &&
  ! grep -q '^CAGE_SANITIZE:BOOL=ON' "$CAGE_BUILD_DIR/CMakeCache.txt" &&
  native=(CAGE_RELEASE_NATIVE_BUILD="$CAGE_BUILD_DIR" CAGE_RELEASE_NATIVE_FROZEN=1)
env "${native[@]}" CAGE_RELEASE_ARCHES=$arches CAGE_RELEASE_WORK=${CAGE_BUILD_DIR:-$tmp}/release-work bash "$src/packaging/release.sh" "${cross[@]}" "$tmp/dist" > "$tmp/release.log" 2>&1 ||
  { cat "$tmp/release.log" >&2; echo "FAIL: release.sh"; exit 1; }
cd "$tmp/dist"
sha256sum -c --quiet SHA256SUMS || bad "SHA256SUMS does not verify"
grep -q " cage-$version.tar.gz\$" SHA256SUMS || bad "no source tarball in SHA256SUMS"
for arch in $arches; do
  t=cage-$version-linux-$arch.tar.gz
  grep -q " $t\$" SHA256SUMS || bad "$t not in SHA256SUMS"
  mkdir -p "$tmp/x/$arch" && tar -C "$tmp/x/$arch" -xzf "$t" || { bad "cannot extract $t"; continue; }
  d=$tmp/x/$arch/cage-$version-linux-$arch
  for f in cage cage.1 README.md completions/cage.bash completions/_cage completions/cage.fish completions/cage.ps1; do
    [ -f "$d/$f" ] || bad "$t lacks $f"
  done
  file -L "$d/cage" | grep -Eq 'statically linked|static-pie linked' || bad "$arch binary not static"
  case $arch in
    x86_64) file -L "$d/cage" | grep -q 'x86-64' || bad "x86_64 tarball holds $(file -L "$d/cage")"
            got=$("$d/cage" --version) ;;
    aarch64) file -L "$d/cage" | grep -q 'ARM aarch64' || bad "aarch64 tarball holds $(file -L "$d/cage")"
             got=$(qemu-aarch64-static "$d/cage" --version) ;;
  esac
  [ "$got" = "cage $version" ] || bad "$arch: --version said '$got'"
done
# macOS and Windows artefacts: the right binary format and the same documents (they cannot run here)
if [ ${#cross[@]} -gt 0 ]; then
  for a in macos-x86_64:'Mach-O 64-bit x86_64' macos-arm64:'Mach-O 64-bit arm64' windows-x86_64:'PE32+ executable (console) x86-64'; do
    name=cage-$version-${a%%:*}; x=$tmp/x/${a%%:*}; mkdir -p "$x"
    case $name in
      *windows*) f=$name.zip; bin=cage.exe; unzip -q "$f" -d "$x" || bad "cannot extract $f" ;;
      *) f=$name.tar.gz; bin=cage; tar -C "$x" -xzf "$f" || bad "cannot extract $f" ;;
    esac
    grep -q " $f\$" SHA256SUMS || bad "$f not in SHA256SUMS"
    file -b "$x/$name/$bin" | grep -q "^${a#*:}" || bad "$f holds $(file -b "$x/$name/$bin")"
    for doc in cage.1 README.md completions/cage.bash completions/_cage completions/cage.fish completions/cage.ps1; do
      [ -f "$x/$name/$doc" ] || bad "$f lacks $doc"
    done
  done
  for m in homebrew/cage-sandbox.rb scoop/cage-sandbox.json winget/CageSandbox.Cage.installer.yaml; do
    [ -f "$tmp/dist/packaging/$m" ] || bad "release.sh --cross did not render $m"
  done
  arches="$arches macos-x86_64 macos-arm64 windows-x86_64"
fi
# the released x86_64 binary really confines
w=$tmp/w; mkdir -p "$w/out"; chmod -R a+rwX "$w"; cd "$w"
out=$("$tmp/x/x86_64/cage-$version-linux-x86_64/cage" --rw out -- sh -c 'echo ok > out/f; cat /etc/shadow 2>/dev/null || echo no-shadow') ||
  bad "released binary failed to run a sandboxed command"
[ "$out" = no-shadow ] && [ "$(cat out/f 2>/dev/null)" = ok ] || bad "released binary: '$out'"
[ $fail -eq 0 ] && echo "ok: release artefacts for $arches verified" && grep '^release.sh: ' "$tmp/release.log"
exit $fail
