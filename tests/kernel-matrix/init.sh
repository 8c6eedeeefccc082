#!/bin/sh
# The guest's /init (busybox): loads the modules, mounts the host's / read-only over 9p with a
# writable scratch disk where a host has writable places, then hands over to the host's userland:
# guest.sh as PID 1, or systemd over a writable overlay root (job.env: INIT=bash|systemd|probe).
export PATH=/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in /mod/*.ko; do insmod "$m" || echo "init: insmod $m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results /results
. /results/job.env
echo "$(uname -r)" >/results/booted
# The KVM probe ends here (sysrq powers off asynchronously: wait for it).
if [ "$INIT" = probe ]; then sync; echo o >/proc/sysrq-trigger; exec sleep 3600; fi
# cache=loose keeps 9p inode numbers stable: Landlock rules are tied to inodes.
ninep="trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro"
mount -t ext4 /dev/vda /scratch
if [ "$INIT" = systemd ]; then
  # systemd needs a writable /etc and /var: the whole root as an overlay, upper on the scratch disk.
  mount -t 9p -o "$ninep" hostroot /lower
  mount -t overlay -o lowerdir=/lower,upperdir=/scratch/root-upper,workdir=/scratch/root-work root /newroot
else
  # The host's root twice: the new root, and an uncovered view from which a checkout or build
  # beneath the directories covered next (CI may clone into /tmp) is bound back at its own path
  # (a 9p tag mounts once: the second view is a bind).
  mkdir -p /hostroot && mount -t 9p -o "$ninep" hostroot /hostroot && mount --bind /hostroot /newroot
  for d in tmp home root var/tmp; do mount --bind "/scratch/$(echo $d | tr / -)" "/newroot/$d"; done
  for p in "$SRC" "$BUILD"; do
    case "$p/" in
      /tmp/* | /home/* | /root/* | /var/tmp/*)
        mkdir -p "/newroot$p" && mount --bind "/hostroot$p" "/newroot$p" ;;
    esac
  done
  # ctest writes Testing/ into the build directory: a private writable layer over the shared build.
  mount -t overlay -o "lowerdir=/newroot$BUILD,upperdir=/scratch/build-upper,workdir=/scratch/build-work" build "/newroot$BUILD"
  mount -t securityfs securityfs /sys/kernel/security
  # v2 only, as current distributions mount it; nsdelegate as systemd does.
  mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
  # What systemd does at boot: the controllers enabled for the root's children.
  echo '+cpu +memory +pids +io' >/sys/fs/cgroup/cgroup.subtree_control
fi
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
if [ "$INIT" != systemd ]; then
  mkdir -p /newroot/dev/pts /newroot/dev/shm
  mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts /newroot/dev/pts
  mount -t tmpfs -o mode=1777,nosuid,nodev shm /newroot/dev/shm
  # The links udev or systemd make on every distribution (devtmpfs has none): without them a
  # shell's `echo >/dev/stderr` tries to create a file in /dev (terminal_name's Landlock-only half).
  ln -sf /proc/self/fd /newroot/dev/fd
  ln -sf /proc/self/fd/0 /newroot/dev/stdin
  ln -sf /proc/self/fd/1 /newroot/dev/stdout
  ln -sf /proc/self/fd/2 /newroot/dev/stderr
fi
# /run on tmpfs in both modes (systemd keeps a /run it finds mounted); the results share lives there.
mount -t tmpfs -o mode=755,nosuid,nodev run /newroot/run
mkdir /newroot/run/cage-matrix
mount --move /results /newroot/run/cage-matrix
if [ "$INIT" = systemd ]; then
  exec switch_root /newroot /lib/systemd/systemd  # systemd.unit= is on the kernel command line
fi
exec switch_root /newroot /bin/bash "$GUEST"
