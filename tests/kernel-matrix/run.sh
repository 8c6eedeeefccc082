#!/usr/bin/env bash
# The kernel matrix: boots real Debian kernels under QEMU, each running a test set against an already
# built cage in the host's build directory (shared read-only), one guest at a time. See README.md.
# Usage: run.sh [--build DIR] [--run SCRIPT] [--timeout SECONDS] [ENTRY...]
#   ENTRY = SERIES:SET[:VARIANT[,VARIANT...]]   (default: 6.1:ci 6.12:quick, as CI runs it)
#   SERIES 6.1 | 6.12; SET full | kernel | ci | quick | select | none; VARIANT nolandlock | nouserns | systemd
# Prints one line per entry and exits non-zero if any entry had a failure or did not finish.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build run='' limit=3600
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --run) run=$(realpath "$2"); shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- 6.1:ci 6.12:quick
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (apt-get download, the scratch disk's owners)" >&2; exit 2; }
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
[ -x "$build/cage" ] && [ -n "$src" ] || { echo "run.sh: no built cage in $build" >&2; exit 2; }
cache=${CAGE_KERNEL_CACHE:-/var/cache/cage-kernels}
out=${CAGE_MATRIX_OUT:-/var/tmp/cage-kernel-matrix}
user=${CAGE_TEST_USER:-cagetest}

# CI runs on a fresh machine: install the tools (never the kernels) when missing.
need=()
dpkg -s qemu-system-x86 busybox-static kmod e2fsprogs xz-utils zstd >/dev/null 2>&1 ||
  need=(qemu-system-x86 busybox-static kmod e2fsprogs xz-utils zstd)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The guest reads the host's /etc/passwd: the test user must exist here (tests/run.sh makes it too).
id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"

work=$(mktemp -d /var/tmp/cage-matrix.XXXXXX)
qemu_pid=''
cleanup() {
  # Only the guest this script started; its disk and initramfs are files in $work.
  if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2>/dev/null || true; wait "$qemu_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

boot() { # ACCEL SECONDS KERNEL RESULTS CMDLINE: one guest, waited for
  bash "$here/boot.sh" "$1" "$2" "$3" "$work/initrd" "$work/scratch.img" "$4" "$5" &
  qemu_pid=$!
  wait "$qemu_pid" || true
  qemu_pid=''
}

choose_accel() { # KERNEL RESULTS: kvm if a probe boot under KVM reaches init, else tcg
  if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then
    rm -f "$2/booted"
    printf 'INIT=probe\n' >"$2/job.env"
    boot kvm 120 "$1" "$2" ''
    [ -s "$2/booted" ] && { echo kvm; return; }
  fi
  echo tcg
}

status=0
for entry in "$@"; do
  IFS=: read -r series set variants <<<"$entry"
  variants=${variants:-default}
  res=$out/${series}-${set}-${variants//,/-}
  rm -rf "$res" && mkdir -p "$res"
  kernel=$(bash "$here/kernel.sh" "$series" "$cache")
  read -r ver kroot <<<"$kernel"
  bash "$here/initramfs.sh" "$ver" "$kroot" "$work/initrd"
  init=bash cmdline=''
  for v in ${variants//,/ }; do
    case $v in
      # A host without Landlock: the kernel's LSM list with landlock left out.
      nolandlock) cmdline+=' lsm=lockdown,capability,yama,apparmor' ;;
      systemd) init=systemd cmdline+=' systemd.unit=cage-matrix.target' ;;
      nouserns|default) ;;
      *) echo "run.sh: unknown variant $v" >&2; exit 2 ;;
    esac
  done
  rm -rf "$work/seed" "$work/scratch.img"
  bash "$here/seed.sh" "$work/seed" "$user" "$init" "$here/guest.sh"
  truncate -s 8G "$work/scratch.img"
  mkfs.ext4 -q -F -d "$work/seed" "$work/scratch.img"
  accel=$(choose_accel "$kroot/boot/vmlinuz-$ver" "$res")
  scale=1
  [ "$accel" = kvm ] || scale=${CAGE_MATRIX_TIMEOUT_SCALE:-4}
  printf '%s=%q\n' ACCEL "$accel" TIMEOUT_SCALE "$scale" INIT "$init" BUILD "$build" SRC "$src" GUEST "$here/guest.sh" SET "$set" \
    VARIANTS "$variants" RUN "$run" TEST_USER "$user" TESTS "${CAGE_MATRIX_TESTS:-}" >"$res/job.env"
  echo "== kernel matrix: $ver ($set, $variants), accel $accel, results in $res"
  t0=$SECONDS
  boot "$accel" "$limit" "$kroot/boot/vmlinuz-$ver" "$res" "$cmdline"
  secs=$((SECONDS - t0))
  if [ -f "$res/finished" ]; then
    read -r pass fail skip < <(awk '{ n[$1]++ } END { print n["PASS"]+0, n["FAIL"]+0, n["SKIP"]+0 }' "$res/results.txt")
    failed=$(awk '$1 == "FAIL" { printf " %s", $2 }' "$res/results.txt")
  else
    # Cut off (time limit) or crashed: what ctest finished so far, and the entry counts as failed.
    awk -f "$here/ctest-results.awk" "$res/ctest.log" >"$res/partial.txt" 2>/dev/null || true
    read -r pass fail skip < <(awk '{ n[$1]++ } END { print n["PASS"]+0, n["FAIL"]+0, n["SKIP"]+0 }' "$res/partial.txt")
    failed="$(awk '$1 == "FAIL" { printf " %s", $2 }' "$res/partial.txt") (guest did not finish: see $res/console.log, guest.log)"
    fail=$((fail + 1))
  fi
  [ "$fail" -eq 0 ] || status=1
  echo "kernel $ver [$set $variants] accel=$accel: $pass passed, $fail failed, $skip skipped in $((secs / 60))m$((secs % 60))s${failed:+; failed:$failed}"
done
exit "$status"
