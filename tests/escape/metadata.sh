#!/usr/bin/env bash
# Attack: change file metadata outside --rw: the mode (chmod, fchmod on a read-only fd), the
# timestamps (touch -d, utime, futimens), the group (chgrp to the caller's own) and extended
# attributes (user.*) of a --ro file, of an ungranted file of the caller, and of an outside file
# through a symlink planted in --rw. Landlock has no right for any of them, so without namespaces
# cage checks each such call itself (tests/escape/README.md).
# Policy: --ro $work/ro --rw $work/rw. Expected: every change fails and the host's mode and mtime stay.
# Twin: in --rw a build's steps work: chmod +x of a new program (then run), touch -d, utime, fchmod,
# cp -a (it copies modes, owners and ACLs), chgrp to the caller's group, a user.* attribute.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/ro" "$work/rw" "$work/secret"
echo original >"$work/ro/file"
echo secret >"$work/secret/file"
ln -s "$work/secret/file" "$work/rw/link"
pol=(--ro "$work/ro" --rw "$work/rw")
before() { stat -c '%a %Y' "$work/ro/file" "$work/secret/file"; }
was=$(before)
xattr() {  # PATH: 0 if a user.* attribute could be set (and is there), else 1
  echo "import os, sys
try:
    os.setxattr(sys.argv[1], 'user.cage', b'1'); sys.exit(0 if os.getxattr(sys.argv[1], 'user.cage') == b'1' else 1)
except OSError as e:
    print(e, file=sys.stderr); sys.exit(1)"
}

# Twin: what builds and package managers do in their output directory.
cage_run "${pol[@]}" -- sh -c "cd '$work/rw' && printf '#!/bin/sh\necho built\n' >prog && chmod +x prog && ./prog &&
  touch -d 2001-02-03 prog && $py -c 'import os; fd = os.open(\"prog\", os.O_RDONLY); os.fchmod(fd, 0o750); os.utime(fd, (5, 5)); os.utime(\"prog\", (7, 7))'"
expect_rc 0 "twin: chmod +x, touch -d, fchmod and utime in --rw"
[ "$out" = built ] || fail "twin: the program made executable did not run: $out $err"
[ "$(stat -c '%a %Y' "$work/rw/prog" 2>/dev/null)" = "750 7" ] ||
  fail "twin: mode and mtime did not reach the host: $(stat -c '%a %Y' "$work/rw/prog" 2>&1)"
cage_run "${pol[@]}" -- sh -c "cd '$work/rw' && mkdir -p tree/sub && echo x >tree/sub/f && chmod 750 tree/sub && cp -a tree copy &&
  chgrp $(id -g) copy/sub/f && $py -c \"\$1\" copy/sub/f" sh "$(xattr)"
expect_rc 0 "twin: cp -a, chgrp and a user.* attribute in --rw"
[ "$(stat -c %a "$work/rw/copy/sub" 2>/dev/null)" = 750 ] || fail "twin: cp -a did not keep the mode"

for target in "$work/ro/file" "$work/secret/file" "$work/rw/link"; do
  cage_run "${pol[@]}" -- chmod 777 "$target"
  [ "$rc" -ne 0 ] && pass "chmod of $target fails" || fail "chmod of $target worked"
  cage_run "${pol[@]}" -- touch -d 2001-02-03 "$target"
  [ "$rc" -ne 0 ] && pass "touch -d of $target fails" || fail "touch -d of $target worked"
  cage_run "${pol[@]}" -- "$py" -c "import os, sys; os.utime(sys.argv[1], (1, 1))" "$target"
  [ "$rc" -ne 0 ] && pass "utime of $target fails" || fail "utime of $target worked"
  cage_run "${pol[@]}" -- chgrp "$(id -g)" "$target"
  [ "$rc" -ne 0 ] && pass "chgrp of $target fails" || fail "chgrp of $target worked"
  cage_run "${pol[@]}" -- "$py" -c "$(xattr)" "$target"
  [ "$rc" -ne 0 ] && pass "setxattr of $target fails" || fail "setxattr of $target worked"
done
"$py" -c "import os, sys; sys.exit(any(os.listxattr(p) for p in sys.argv[1:]))" "$work/ro/file" "$work/secret/file" &&
  pass "no attribute reached the host" || fail "an extended attribute reached a host file outside --rw"
# On a descriptor the workload may hold: the --ro file opened for reading.
cage_run "${pol[@]}" -- "$py" -c "
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
done = []
for name, f in (('fchmod', lambda: os.fchmod(fd, 0o777)), ('futimens', lambda: os.utime(fd, (1, 1)))):
    try:
        f(); done.append(name)
    except OSError:
        pass
print(' '.join(done) or 'denied')" "$work/ro/file"
[ "$out" = denied ] && pass "fchmod and futimens on a read-only fd of a --ro file fail" ||
  fail "metadata changed through a --ro file's fd: $out $err"
[ "$(before)" = "$was" ] && pass "host modes and mtimes unchanged" || fail "host metadata changed: $was -> $(before)"
finish
