#!/bin/bash
# The README's first quick-start command (cage --rw build -- sh -c ...), as root in the shared
# checkout and as the test user in a copy it owns; prints "PASS|FAIL quickstart.WHO SECONDS".
set -u
. /run/cage-matrix/job.env
user=${TEST_USER:-cagetest}
qs='touch README.md; ls ~/.ssh; echo written > build/out.txt'
check() { # WHO DIR [setpriv args...]: runs the command in DIR (with DIR/build) and checks what it says
  local who=$1 dir=$2 t0=$SECONDS out
  shift 2
  out=$(cd "$dir" && "$@" "$BUILD/cage" --rw build -- sh -c "$qs" 2>&1 && cat build/out.txt)
  echo "quickstart.$who: $out" >&2
  if [[ $out == *"cannot touch 'README.md': Read-only file system"* && $out == *".ssh': No such file or directory"* &&
        $out == *written* ]]; then
    echo "PASS quickstart.$who $((SECONDS - t0))"
  else
    echo "FAIL quickstart.$who $((SECONDS - t0))"
  fi
}
# Root: in the shared read-only checkout when the build is its build/ (the guest's writable layer
# over it takes out.txt), else in a copy.
if [ "$BUILD" = "$SRC/build" ]; then
  check root "$SRC"
else
  mkdir -p /tmp/qs-root/build && cp "$SRC/README.md" /tmp/qs-root/ && check root /tmp/qs-root
fi
# The test user: its own checkout copy, as a user who cloned the repository would have.
d=$(setpriv --reuid="$user" --regid="$user" --init-groups mktemp -d)
cp "$SRC/README.md" "$d/" && chown -R "$user:" "$d" && setpriv --reuid="$user" --regid="$user" --init-groups mkdir "$d/build"
check user "$d" setpriv --reuid="$user" --regid="$user" --init-groups env HOME="$(getent passwd "$user" | cut -d: -f6)"
