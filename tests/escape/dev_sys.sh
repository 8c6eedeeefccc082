#!/usr/bin/env bash
# Attack: reach the host kernel or hardware through /dev, /sys and /proc: block devices, /dev/mem,
# /dev/kmem, /dev/port, /dev/kmsg, mknod of a new device node, /sys (not mounted), and writes to
# /proc/sys (kernel/hostname, vm/drop_caches), /proc/sysrq-trigger, reads of /proc/kcore, kallsyms.
# Policy: default view. Expected: all fail, as root and as the user. Twins: /dev/null, /dev/zero and
# /dev/urandom work; /proc/self/status reads; --hostname sets the name inside.
. "$(dirname "$0")/lib.bash"
require_sandbox
if landlock_only; then  # no UTS namespace: --hostname is refused (tests/integration/landlock_only.sh)
  cage_run -- sh -c 'echo x >/dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c && grep -c . /proc/self/status >/dev/null && echo esc-twin'
else
  cage_run --hostname esc-twin -- sh -c 'echo x >/dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c && grep -c . /proc/self/status >/dev/null && hostname'
fi
[ "$rc" -eq 0 ] && [ "$(echo $out)" = "4 4 esc-twin" ] && pass "twin: null, zero, urandom, /proc/self, --hostname" ||
  fail "twin: exit $rc, '$out' $err"
if landlock_only; then  # the host's /dev and /sys: names can be seen (stat), nothing beyond the minimal set opens
  cage_run -- sh -c 'for f in /dev/mem /dev/kmem /dev/port /dev/kmsg /dev/sda /dev/vda /dev/nvme0 /sys/kernel/notes; do
    [ -e "$f" ] && head -c 1 "$f" >/dev/null 2>&1 && echo "OPENED $f"; done; ls /sys >/dev/null 2>&1 && echo "LISTED /sys"; :'
  [ -z "$out" ] && pass "no block device, mem, kmsg or /sys entry opens" || fail "opened: $out"
else
  cage_run -- sh -c 'find /dev -type b; ls /dev/mem /dev/kmem /dev/port /dev/kmsg /dev/sda /dev/vda /dev/nvme0 2>/dev/null; ls /sys 2>/dev/null; :'
  [ -z "$out" ] && pass "no block devices, mem, kmsg or /sys" || fail "visible: $out"
fi
cage_run -- "$py" -c '
import os, stat
for path, dev in (("/tmp/mem", os.makedev(1, 1)), ("/tmp/sda", os.makedev(8, 0))):
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, dev); print("MADE", path)
        open(path, "rb").read(1); print("OPENED", path)
    except OSError as e:
        print("denied", path, e.errno)'
grep -q OPENED <<<"$out" && fail "opened a device node made inside: $out" || pass "mknod'd devices unusable ($(echo $out))"
hn=$(cat /proc/sys/kernel/hostname)
for f in /proc/sys/kernel/hostname /proc/sys/vm/drop_caches /proc/sys/kernel/core_pattern /proc/sysrq-trigger \
         /proc/sys/kernel/modprobe; do
  cage_run -- sh -c "echo 1 >$f"
  [ "$rc" -ne 0 ] && pass "write to $f fails" || fail "wrote $f inside cage"
done
[ "$(cat /proc/sys/kernel/hostname)" = "$hn" ] || fail "host name changed"
# Landlock-only: /proc is the host's (the accepted "pid" loss): timer_list and keys read as outside.
kernel_files="/proc/kcore /proc/kmsg /proc/timer_list /proc/keys"
landlock_only && kernel_files="/proc/kcore /proc/kmsg"
for f in $kernel_files; do
  cage_run -- sh -c "timeout 2 head -c 64 $f | wc -c"
  [ "$out" = 0 ] || fail "read $out bytes of $f"
done
pass "kcore, kmsg, timer_list, keys unreadable"
# Guarded only by their mode (0400 root): a root caller's uid 0 would read them. Physical page flags
# and counts (Rowhammer-style targeting), slab and vmalloc layouts (heap exploitation).
if ! landlock_only; then
  for f in /proc/kpageflags /proc/kpagecount /proc/kpagecgroup /proc/slabinfo /proc/vmallocinfo /proc/pagetypeinfo; do
    [ -e "$f" ] || continue
    cage_run -- sh -c "timeout 2 head -c 64 $f 2>/dev/null | wc -c"
    [ "$out" = 0 ] && pass "$f unreadable" || fail "read $out bytes of $f"
  done
fi
# kallsyms is readable (0444) but the kernel shows real addresses only to CAP_SYSLOG of the initial
# user namespace: every address inside must be zero.
cage_run -- sh -c 'head -n 2000 /proc/kallsyms | cut -d" " -f1 | sort -u'
[ -z "$out" ] || [ "$out" = 0000000000000000 ] && pass "kallsyms shows no kernel addresses" ||
  fail "kernel addresses leak through /proc/kallsyms: $(head -3 <<<"$out")"
cage_run -- sh -c 'mount -t sysfs sysfs /tmp && echo MOUNTED'
grep -q MOUNTED <<<"$out" && fail "mounted sysfs inside" || pass "sysfs cannot be mounted"
finish
