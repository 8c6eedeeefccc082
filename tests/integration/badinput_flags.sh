#!/usr/bin/env bash
# Bad input: every flag with wrong types, empty, huge, non-UTF-8 and control-character values, paths
# that do not exist, are sockets, devices or fifos, or are relative with "..". Expected each time:
# exit 125, an error on stderr naming the input, the command never started, nothing left behind.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir "$work/dir" && mkfifo "$work/fifo"
"$py" -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$work/sock"
huge=$(head -c 70000 /dev/zero | tr '\0' a)
bad() {  # NEEDLE FLAG...: cage FLAG... -- touch started must exit 125 and mention NEEDLE
  local needle=$1; shift
  rm -f "$work/dir/started"
  cage_run "$@" --rw "$work/dir" -- touch "$work/dir/started"
  local shown="$*"; shown=${shown:0:60}
  if [ "$rc" -ne 125 ]; then fail "$shown: exit $rc, want 125 ($err)"
  elif [ -e "$work/dir/started" ]; then fail "$shown: the command ran"
  elif ! grep -aqF -- "$needle" <<<"$err"; then fail "$shown: error does not name '$needle': $err"
  else pass "$shown: 125, $(head -1 <<<"$err" | head -c 120)"; fi
}
# (--tmpfs of a missing path makes a private empty directory, --hide of one is a no-op: both valid.)
for flag in --ro --rw --tmpfs --hide --chdir; do
  bad "$flag" "$flag" ""
  bad "$flag" "$flag" "$work/$huge"
  case $flag in --tmpfs | --hide) continue ;; esac
  bad "$flag" "$flag" "$work/no-such-$$"
  bad "$flag" "$flag" "$work/dir/../../no-such-$$/../x"
  bad "$flag" "$flag" $'\x01\x1b[31m'
  bad "$flag" "$flag" $'\xff\xfe'
done
for flag in --ro --rw; do
  bad "$flag" "$flag" /dev/sda
  bad "$flag" "$flag" /dev/null
done
bad --tmpfs --tmpfs "$work/fifo"
bad --tmpfs --tmpfs "$work/sock"
bad --chdir --chdir "$work/fifo"
bad --timeout --timeout ""
bad --timeout --timeout abc
bad --timeout --timeout -5s
bad --timeout --timeout 99999999999999999999999h
bad --rlimit --rlimit ""
bad --rlimit --rlimit nofile
bad --rlimit --rlimit nofile=abc
bad --rlimit --rlimit nosuch=1
bad --rlimit --rlimit nofile=99999999999999999999999999
bad --seccomp --seccomp ""
bad --seccomp --seccomp strict
bad --hostname --hostname ""
bad --hostname --hostname "$huge"
bad --hostname --hostname $'a\nb'
bad --setenv --setenv ""
bad --setenv --setenv "=x"
bad --setenv --setenv $'A\x01=1'
bad --env --env ""
bad --unsetenv --unsetenv ""
bad --net --net ""
bad --net --net "host:notaport"
bad --net --net "host:70000"
bad --net --net $'\xff:443'
bad --no-such --no-such
# A value forgotten before "--": the option is named as missing its value (it was a grant of a path
# called "--", with the command run without its "--"). Twin: a path spelt ./-- is a path.
for flag in --rw --ro --timeout --net; do
  cage_run "$flag" -- touch "$work/dir/started"
  [ "$rc" -eq 125 ] && grep -qF -- "$flag: needs a value" <<<"$err" && [ ! -e "$work/dir/started" ] &&
    pass "$flag -- CMD: needs a value" || fail "$flag -- CMD: exit $rc; $err"
done
mkdir "$work/dashes" && (cd "$work/dashes" && mkdir -- -- && cd -- -- && : )
(cd "$work/dashes" && cage_run --rw ./-- -- touch ./--/made && [ "$rc" -eq 0 ] && [ -e ./--/made ]) &&
  pass "--rw ./--: a directory called --" || fail "--rw ./--: exit $rc; $err"
rm -rf "$work/dashes"
# A path behind a directory the caller cannot search is said to be unreachable, not missing (a user
# granting a file in another user's 0700 home looked for a typo). Twin: a path that is really missing.
if ! is_root && [ -d /root ] && ! [ -x /root ]; then
  bad "--ro /root/x" --ro /root/x
  grep -q 'not searchable by you' <<<"$err" && ! grep -q 'no such file' <<<"$err" &&
    pass "--ro /root/x: unreachable, not missing" || fail "--ro /root/x: $err"
fi
bad "--ro $work/no-such" --ro "$work/no-such"
grep -q 'no such file or directory' <<<"$err" && pass "a missing path is missing" || fail "missing path: $err"
[ "$(ls -A "$work/dir")" = "" ] && pass "nothing left behind" || fail "left behind: $(ls -A "$work/dir")"
finish
