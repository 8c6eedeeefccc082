#!/usr/bin/env bash
# Fills the guest's scratch disk (an ext4 image made with mkfs.ext4 -d: no loop device, no mount on
# the host). Usage: seed.sh DIR USER INIT GUEST_SH
# Layout: tmp, home, root, var-tmp (bound over the read-only root's writable places), build-upper/
# -work (ctest's layer over the build), root-upper/-work (systemd mode: the whole root as an overlay).
set -euo pipefail
dir=$1 user=$2 init=$3 guest=$4
mkdir -p "$dir"/{tmp,var-tmp,root,home,build-upper,build-work,root-upper,root-work}
chmod 1777 "$dir/tmp" "$dir/var-tmp"
chmod 700 "$dir/root"
for home in "$dir/home/$user" "$dir/root-upper/home/$user"; do
  mkdir -p "$home" && chown "$user:" "$home" && chmod 755 "$home"
done
[ "$init" = systemd ] || exit 0
etc=$dir/root-upper/etc
mkdir -p "$etc/systemd/system"
# A whiteout for the host's /.dockerenv (when the host is itself a container): systemd would take
# the guest for a container and ignore the kernel command line (systemd.unit=) and its hardware.
mknod "$dir/root-upper/.dockerenv" c 0 0
# The host's fstab names the host's disks: the guest would wait for them.
: >"$etc/fstab"
# Boot to basic.target plus the run, not to the host's default target (its docker, ssh, ...).
cat >"$etc/systemd/system/cage-matrix.target" <<UNIT
[Unit]
Description=cage kernel matrix
Requires=basic.target cage-matrix.service
After=basic.target cage-matrix.service
AllowIsolate=yes
UNIT
cat >"$etc/systemd/system/cage-matrix.service" <<UNIT
[Unit]
Description=cage kernel matrix run
After=basic.target
[Service]
Type=oneshot
ExecStart=/bin/bash $guest
UNIT
