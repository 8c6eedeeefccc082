#!/usr/bin/env bash
# Attack: change the inode flags of a --ro file the caller owns (chattr +d: nodump), which the kernel
# allows on a read-only fd, by FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR and file_setattr (Linux 6.17).
# Policy: --ro ro --rw rw. Expected: refused (namespaces: read-only mount, EROFS; Landlock-only: cage
# mediates the ioctls per call and refuses them outside --rw, EACCES; file_setattr refused, EPERM);
# the host's flags unchanged. Found (Landlock-only): Landlock checks no ioctl of a regular file, so
# `chattr +d` of a --ro file worked. Twin: the same calls on a file in --rw set the flag on the host.
# Skips (77) where the work directory's filesystem keeps no inode flags.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/ro" "$work/rw" "$work/prog"
echo data >"$work/ro/f"
echo data >"$work/rw/g"
echo data >"$work/rw/h"
echo data >"$work/rw/i"
echo data >"$work/rw/j"
cat >"$work/prog/flags.py" <<'EOF'
# flags.py OP PATH: OP is get (prints the flags), setflags, fsxattr or file_setattr (adds nodump).
import ctypes, errno, fcntl, os, struct, sys
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR = 0x801c581f, 0x401c5820
FS_NODUMP_FL, FS_XFLAG_NODUMP = 0x40, 0x80
op, path = sys.argv[1], sys.argv[2]
try:
    if op == "file_setattr":
        libc = ctypes.CDLL(None, use_errno=True)
        attr = ctypes.create_string_buffer(24)
        if libc.syscall(468, -100, path.encode(), attr, ctypes.c_size_t(24), 0) != 0:
            raise OSError(ctypes.get_errno(), "file_getattr")
        xflags = struct.unpack_from("Q", attr.raw)[0] | FS_XFLAG_NODUMP
        struct.pack_into("Q", attr, 0, xflags)
        if libc.syscall(469, -100, path.encode(), attr, ctypes.c_size_t(24), 0) != 0:
            raise OSError(ctypes.get_errno(), "file_setattr")
        print("ok")
        sys.exit(0)
    fd = os.open(path, os.O_RDONLY)
    flags = struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 4))[0]
    if op == "get":
        print(flags)
    elif op == "setflags":
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", flags | FS_NODUMP_FL))
        print("ok")
    elif op == "fsxattr":
        attr = bytearray(fcntl.ioctl(fd, FS_IOC_FSGETXATTR, b"\0" * 28))
        struct.pack_into("I", attr, 0, struct.unpack_from("I", attr)[0] | FS_XFLAG_NODUMP)
        fcntl.ioctl(fd, FS_IOC_FSSETXATTR, bytes(attr))
        print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
    sys.exit(1)
EOF
flags() { "$py" "$work/prog/flags.py" get "$1"; }
nodump() { [ $(( $(flags "$1") & 0x40 )) -ne 0 ]; }
# The filesystem must keep flags at all: set and clear nodump on a scratch file on the host.
echo x >"$work/scratch"
probe=$("$py" "$work/prog/flags.py" setflags "$work/scratch")
if [ "$probe" != ok ]; then echo "skip: $work's filesystem keeps no inode flags (FS_IOC_SETFLAGS: $probe)" >&2; exit 77; fi
before=$(flags "$work/ro/f")
have_file_setattr=0
"$py" "$work/prog/flags.py" file_setattr "$work/scratch" >/dev/null && have_file_setattr=1
ops=(setflags fsxattr)
[ "$have_file_setattr" = 1 ] && ops+=(file_setattr)

for op in "${ops[@]}"; do
  cage_run --ro "$work/prog" --ro "$work/ro" --rw "$work/rw" -- "$py" "$work/prog/flags.py" "$op" "$work/ro/f"
  if [ "$rc" -ne 0 ] && [ "$(flags "$work/ro/f")" = "$before" ]; then
    pass "$op of a --ro file refused ($out), host flags unchanged"
  else
    fail "$op of a --ro file: exit $rc ($out $err), host flags $before -> $(flags "$work/ro/f")"
  fi
done

# Twins: in --rw each call sets nodump on the host file (file_setattr excepted under Landlock-only,
# where it is refused everywhere: its argument is a struct the per-call check does not read).
twin_files=("$work/rw/g" "$work/rw/h" "$work/rw/i")
for k in "${!ops[@]}"; do
  op=${ops[$k]} file=${twin_files[$k]}
  cage_run --ro "$work/prog" --ro "$work/ro" --rw "$work/rw" -- "$py" "$work/prog/flags.py" "$op" "$file"
  if [ "$op" = file_setattr ] && landlock_only; then
    [ "$rc" -ne 0 ] && ! nodump "$file" && pass "file_setattr refused under Landlock-only, also in --rw ($out)" ||
      fail "file_setattr under Landlock-only: exit $rc ($out $err)"
    continue
  fi
  [ "$rc" -eq 0 ] && nodump "$file" && pass "twin: $op in --rw sets nodump on the host" ||
    fail "twin: $op in --rw: exit $rc ($out $err), flags $(flags "$file")"
done
# Under an outer filter that refuses pidfd_getfd and process_vm_readv (Docker's default profile
# without CAP_SYS_PTRACE; tests/escape/outer_filter.py): found, Landlock-only: chattr in --rw failed
# (EACCES), since the mediator could not take the workload's fd; now it reopens the same file from
# /proc. The --ro file stays refused, the --rw twin sets nodump on the host.
# (A sanitized cage runs without LeakSanitizer there: its tracer needs the ptrace the filter refuses.)
outer=("$py" "$escape_dir/outer_filter.py" pidfd_getfd,process_vm_readv,ptrace -- env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
for target in "$work/ro/f" "$work/rw/j"; do
  rc=0
  "${outer[@]}" "$CAGE" ${mech[@]+"${mech[@]}"} --ro "$work/prog" --ro "$work/ro" --rw "$work/rw" -- \
    "$py" "$work/prog/flags.py" setflags "$target" </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out") err=$(cat "$work/.err")
  [ "$rc" = 77 ] && { echo "skip: $err" >&2; exit 77; }
  if [ "$target" = "$work/ro/f" ]; then
    [ "$rc" -ne 0 ] && [ "$(flags "$target")" = "$before" ] && pass "outer filter: setflags of a --ro file refused ($out)" ||
      fail "outer filter: setflags of a --ro file: exit $rc ($out $err), flags $(flags "$target")"
  else
    [ "$rc" -eq 0 ] && nodump "$target" && pass "outer filter: twin: setflags in --rw sets nodump on the host" ||
      fail "outer filter: setflags in --rw: exit $rc ($out $err), flags $(flags "$target")"
  fi
done
finish
