#!/usr/bin/env bash
# Builds the guest's initramfs: busybox-static, the kernel's own modules for virtio disks, 9p, ext4
# and overlayfs, veth and dummy links for the tests' network namespaces (in dependency order), and
# init.sh as /init. Usage: initramfs.sh VERSION KROOT OUT
set -euo pipefail
ver=$1 kroot=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir"/{bin,mod,proc,sys,dev,newroot,lower,scratch,results,run}
cp /bin/busybox "$dir/bin/busybox"
ln -s busybox "$dir/bin/sh"
cp "$here/init.sh" "$dir/init"
chmod +x "$dir/init"
# Debian builds most of these as modules (6.1 even virtio_pci); "builtin" lines need nothing.
n=0
for m in virtio_pci virtio_blk 9pnet_virtio 9p ext4 overlay veth dummy; do
  modprobe -d "$kroot" -S "$ver" --show-depends "$m"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
  n=$((n + 1))
  # busybox insmod cannot read compressed modules.
  case $ko in
    *.xz) xz -dc "$ko" ;;
    *.zst) zstd -dcq "$ko" ;;
    *) cat "$ko" ;;
  esac >"$dir/mod/$(printf %02d "$n")-$(basename "${ko%.ko*}").ko"
done
(cd "$dir" && find . | busybox cpio -o -H newc) >"$out" 2>/dev/null
