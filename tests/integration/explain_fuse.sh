#!/usr/bin/env bash
# --explain never sends the workload's chosen names to a FUSE server (host_lookup.h): the names a
# workload tries are judged on the host, and a path on FUSE (sshfs, a remote mount) is not looked up
# at all, so the server outside learns nothing from a run without --net. The twin: the same server
# sees a name asked for outside cage, so its log is a real witness.
set -u
. "$(dirname "$0")/net_lib.bash"
py=/usr/bin/python3  # Debian's python3-fusepy, whatever python3 is first on PATH
net_test_begin "$py" fusermount
$py -c 'import fusepy' 2>/dev/null || { echo "skip: python3-fusepy missing"; exit 77; }
[ -r /dev/fuse ] && [ -w /dev/fuse ] || { echo "skip: /dev/fuse is not usable by $(id -un)"; exit 77; }
mnt="$d/fuse"; log="$d/lookups"
mkdir "$mnt"; : > "$log"
# A file system with one file, "known", that writes every path it is asked about to the log.
$py - "$mnt" "$log" >"$d/server.out" 2>&1 <<'PY' &
import errno, stat, sys, time
from fusepy import FUSE, FuseOSError, Operations
mnt, log = sys.argv[1], sys.argv[2]
class Witness(Operations):
    def _saw(self, path):
        with open(log, "a") as f:
            f.write(path + "\n")
    def getattr(self, path, fh=None):
        self._saw(path)
        now = time.time()
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2, st_atime=now, st_mtime=now, st_ctime=now)
        if path == "/known":
            return dict(st_mode=stat.S_IFREG | 0o644, st_nlink=1, st_size=0, st_atime=now, st_mtime=now, st_ctime=now)
        raise FuseOSError(errno.ENOENT)
    def readdir(self, path, fh):
        self._saw(path)
        return [".", "..", "known"]
FUSE(Witness(), mnt, foreground=True, nothreads=True, attr_timeout=0, entry_timeout=0, negative_timeout=0)
PY
pids+=($!)
trap 'fusermount -u "$mnt" 2>/dev/null; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$d"' EXIT
for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.05; done
mountpoint -q "$mnt" || fail "the FUSE server did not mount: $(cat "$d/server.out")"

# The twin: a name asked for outside cage reaches the server.
outside=outside-$RANDOM$RANDOM
stat "$mnt/$outside" >/dev/null 2>&1
grep -qx "/$outside" "$log" || fail "the witness saw no lookup from outside: $(cat "$log")"

# The workload tries a name of its own beneath the FUSE mount, which it cannot see (no grant): the
# server never hears the name, and cage, which did not look, suggests nothing for it (cage(1)).
secret=secret-$RANDOM$RANDOM
"$CAGE" --no-cwd --explain -- cat "$mnt/$secret" "$mnt/known" >/dev/null 2>"$d/err" && fail "read beneath no grant"
grep -q "^cage: explain: " "$d/err" || fail "--explain said nothing: $(cat "$d/err")"
grep -q -- "--ro $mnt" "$d/err" && fail "a path cage did not look up was suggested: $(cat "$d/err")"
grep -q "$secret" "$log" && fail "the FUSE server learned the workload's name: $(cat "$log")"
grep -qx "/known" "$log" && fail "the FUSE server was asked about the workload's path: $(cat "$log")"
echo ok
