#!/usr/bin/env bash
# A workload started from a terminal can name it: the caller's pty is bound at /dev/console, so
# ttyname(3) (tty, tmux, screen, gpg) works, stty sees the real size, and writes reach the terminal.
# Twin: without a terminal, nothing is bound and tty says so. Run under script(1), which gives
# cage a fresh pty of the test's own user.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v script >/dev/null || { echo "skip: no script(1)" >&2; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
cat >"$d/inner.sh" <<INNER
stty cols 91 rows 27
"$CAGE" --no-cwd -- sh -c 'tty; stty size; python3 -c "import os; print(os.ttyname(1))"; echo via-console >/dev/console'
INNER
out=$(script -qec "bash $d/inner.sh" /dev/null </dev/null | tr -d '\r')
grep -qx "/dev/console" <<<"$out" || fail "tty inside: $out"
grep -qx "27 91" <<<"$out" || fail "terminal size inside: $out"
grep -qx "via-console" <<<"$out" || fail "write to /dev/console did not reach the terminal: $out"
[ "$(grep -c '^/dev/console$' <<<"$out")" = 2 ] || fail "ttyname(3): $out"
# Twin: no terminal, no console.
out=$("$CAGE" --no-cwd -- sh -c 'tty; ls /dev/console 2>&1' </dev/null 2>&1)
grep -q "not a tty" <<<"$out" && grep -q "No such file" <<<"$out" || fail "without a terminal: $out"
echo "terminal: ok"
