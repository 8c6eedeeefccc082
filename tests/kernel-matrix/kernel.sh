#!/usr/bin/env bash
# Fetches the newest Debian kernel package of a series into the cache and unpacks it there (never
# installed on the host). Usage: kernel.sh SERIES CACHE -> prints "VERSION KERNEL_ROOT".
# SERIES: 6.1 (bookworm's stock kernel) or 6.12 (bookworm's newer kernel), or a package regex.
set -euo pipefail
series=$1 cache=$2
case $series in
  6.1) re='linux-image-6\.1\.0-[0-9]+-amd64' ;;
  6.12) re='linux-image-6\.12\.[0-9]+\+deb12-amd64' ;;
  *) re=$series ;;
esac
# The unsigned variant: the same kernel without the Secure Boot signature, which QEMU does not need.
pkg=$(apt-cache search --names-only "^${re}-unsigned\$" | cut -d' ' -f1 | sort -V | tail -n1)
[ -n "$pkg" ] || { echo "kernel.sh: no package matches ^${re}-unsigned\$ (apt-get update?)" >&2; exit 1; }
root=$cache/${pkg%-unsigned}
if [ ! -f "$root/.unpacked" ]; then
  mkdir -p "$cache"
  # apt-get download checks the package against the archive's signed checksums; it writes into the
  # current directory. Running as _apt cannot write a root-owned cache: that warning is expected.
  (cd "$cache" && apt-get download -q "$pkg" 2>&1 | grep -v 'unsandboxed' >&2 || true)
  deb=$(ls "$cache/${pkg}"_*.deb | sort -V | tail -n1)
  rm -rf "$root" && mkdir -p "$root"
  dpkg-deb -x "$deb" "$root"
  # The package's postinst would run depmod; the initramfs builder needs modules.dep.
  depmod -b "$root" "$(ls "$root/lib/modules")"
  touch "$root/.unpacked"
fi
echo "$(ls "$root/lib/modules") $root"
