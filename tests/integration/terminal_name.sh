#!/usr/bin/env bash
# A workload started from a terminal can name it: the caller's pty is bound at /dev/console, so
# ttyname(3) (tty, tmux, screen, gpg) works, stty sees the real size, and writes reach the terminal.
# Twin: without a terminal, nothing is bound and tty says so. Run under script(1), which gives
# cage a fresh pty of the test's own user. Without namespaces (--mechanism landlock) the terminal
# keeps its /dev/pts name: the workload may reopen that one device (echo >/dev/stderr), and no
# other pty of the same user (one this test holds open).
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
# Landlock-only (where it starts: Landlock ABI 6): the caller's own pty reopens by name; another pty
# of the same user does not.
. "$(dirname "$0")/../escape/mechanism.bash"
if landlock_mechanism; then
  python3 -c "import os, pty, sys, time
m, s = pty.openpty()
open(sys.argv[1], 'w').write(os.ttyname(s))
time.sleep(60)" "$d/other" </dev/null >/dev/null 2>&1 &
  holder=$!
  trap 'kill "$holder" 2>/dev/null; rm -rf "$d"' EXIT
  for _ in $(seq 50); do [ -s "$d/other" ] && break; sleep 0.1; done
  other=$(cat "$d/other" 2>/dev/null)
  [ -c "$other" ] || fail "no second pty to try: '$other'"
  cat >"$d/inner2.sh" <<INNER
"$CAGE" --no-cwd --mechanism landlock --allow-degraded pid -- sh -c 'echo via-stderr >/dev/stderr; echo via-stdout >/dev/stdout
  if echo x >"$other" 2>/dev/null || cat "$other" </dev/null 2>/dev/null; then echo other-pty-open; fi; tty'
INNER
  out=$(script -qec "bash $d/inner2.sh" /dev/null </dev/null | tr -d '\r')
  grep -qx "via-stderr" <<<"$out" && grep -qx "via-stdout" <<<"$out" || fail "landlock: reopening the terminal: $out"
  grep -q "other-pty-open" <<<"$out" && fail "landlock: another pty of the user ($other) was opened: $out"
  grep -qx "/dev/pts/[0-9]*" <<<"$out" || fail "landlock: tty inside: $out"
else
  echo "note: the Landlock-only mechanism does not start on this kernel: its half not run"
fi
# Twin: no terminal, no console.
out=$("$CAGE" --no-cwd -- sh -c 'tty; ls /dev/console 2>&1' </dev/null 2>&1)
grep -q "not a tty" <<<"$out" && grep -q "No such file" <<<"$out" || fail "without a terminal: $out"
echo "terminal: ok"
