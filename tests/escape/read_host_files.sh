#!/usr/bin/env bash
# Attack: read host files the policy never granted: /etc/shadow, a secret planted in $HOME, a secret
# in a directory next to the grant, and the same files through /proc/<pid>/root of a host process
# and of cage's init.
# Policy: --ro $work/granted (plus the default view). Expected: the granted file reads; every other
# read fails (absent or EACCES), as root and as the unprivileged user.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/granted" "$work/secret"
echo granted-content >"$work/granted/file"
echo secret-content >"$work/secret/file"
home_secret="$HOME/.cage-escape-secret.$$"
if echo home-secret >"$home_secret" 2>/dev/null; then at_exit "rm -f '$home_secret'"; else home_secret=""; fi

cage_run --ro "$work/granted" -- cat "$work/granted/file"
expect_rc 0 "twin: the granted file reads"
[ "$out" = granted-content ] || fail "twin: granted file read back '$out'"

try_read() {  # PATH: must not read (any non-zero exit, and no secret in the output)
  cage_run --ro "$work/granted" -- cat "$1"
  if [ "$rc" -eq 0 ] || grep -q -e secret-content -e home-secret -e 'root:' <<<"$out"; then
    fail "read $1 inside cage: exit $rc, output: $out"
  else
    pass "cannot read $1 ($(tail -1 <<<"$err"))"
  fi
}
try_read /etc/shadow
try_read /etc/gshadow
try_read "$work/secret/file"
[ -n "$home_secret" ] && try_read "$home_secret"
# A host process's root (the test shell itself) and cage's own init's root.
try_read "/proc/$$/root$work/secret/file"
try_read "/proc/$$/root/etc/shadow"
try_read "/proc/1/root$work/secret/file"
try_read "/proc/1/root/etc/shadow"
# /etc/passwd inside lists only root, the caller and nobody: no other host account.
cage_run -- cat /etc/passwd
expect_rc 0 "twin: /etc/passwd (curated) reads"
other=$(grep -v -e '^root:' -e "^$(id -un):" -e '^nobody:' <<<"$out")
if landlock_only; then  # /etc is the host's without a mount namespace (documented)
  pass "Landlock-only: /etc/passwd is the host's ($(wc -l <<<"$other") other accounts)"
else
  [ -z "$other" ] || fail "host accounts leak through /etc/passwd: $other"
fi
finish
