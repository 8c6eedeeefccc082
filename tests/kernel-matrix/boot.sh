#!/usr/bin/env bash
# Boots one guest and waits for it to power off (or the time limit). Usage:
#   boot.sh ACCEL SECONDS KERNEL INITRD SCRATCH RESULTS CMDLINE
# ACCEL kvm or tcg. 2 vCPUs (CI's machine has 2 cores); no network device at all (-nic none); the
# host's / as a read-only 9p share (tag hostroot) and RESULTS as a writable one (tag results).
set -euo pipefail
accel=$1 limit=$2 kernel=$3 initrd=$4 scratch=$5 results=$6 cmdline=$7
if [ "$accel" = kvm ]; then
  accel_args=(-accel kvm -cpu host)
else
  # Software emulation: /dev/kvm here may be kvm_pvm, which boots only PVM-enabled guest kernels.
  # One host thread for both vCPUs (thread=single): with a thread each, a vCPU could run a stale int3
  # of the kernel's own code patching (text_poke_bp) after the other had finished it, and the guest
  # oopsed at boot ("Oops: int3" in sched_init_debug, 6.12, once in a CI run of .ci/run).
  accel_args=(-accel tcg,thread=single -cpu max)
fi
# multidevs=remap: the host's / spans several filesystems; without it their inode numbers collide.
exec timeout -k 10 "$limit" qemu-system-x86_64 "${accel_args[@]}" -smp 2 -m 2048 \
  -nodefaults -display none -no-reboot -nic none \
  -kernel "$kernel" -initrd "$initrd" -append "console=ttyS0 panic=-1 loglevel=4 $cmdline" \
  -serial "file:$results/console.log" \
  -drive "file=$scratch,format=raw,if=virtio,cache=unsafe" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$results,mount_tag=results,security_model=none,multidevs=remap"
