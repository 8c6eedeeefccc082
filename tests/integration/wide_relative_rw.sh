#!/usr/bin/env bash
# A relative read-write grant that lands on $HOME, an ancestor of it, the root or a system directory
# is refused with a remedy (issue 20, point 2: `cd ~ && cage --profile npm` made all of $HOME
# writable), next to its twins: the same grant from a project directory writes there, the same
# directory named absolutely is the caller's explicit choice, and a read-only grant of it runs.
set -u
: "${CAGE:?}"
work=$(mktemp -d); chmod 755 "$work"; trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
home=$work/home; mkdir -p "$home/proj"; chmod -R 777 "$home"
# from DIR ARGS...: cage ARGS run from DIR with HOME=$home; sets rc, err
from() { local dir=$1; shift; rc=0; (cd "$dir" && HOME="$home" "$CAGE" -q "$@" >"$work/out" 2>"$work/err") || rc=$?; err=$(cat "$work/err"); }
refused() { [ "$rc" -eq 125 ] && grep -q "relative path resolves to $2" <<<"$err" && grep -q "name it absolutely" <<<"$err" || fail "$1: exit $rc, err '$err'"; }

from "$home/proj" -- true
if [ "$rc" -ne 0 ]; then
  grep -q spawn_sandbox_unavailable <<<"$err" && { echo "skip: $err"; exit 77; }
  echo "FAIL: the sandbox does not start: $err" >&2; exit 1
fi

from "$home" --rw . -- sh -c 'echo x > written'
refused "--rw . from \$HOME" '\$HOME'
[ ! -e "$home/written" ] || fail "--rw . from \$HOME wrote to \$HOME"
from "$home/proj" --rw .. -- true
refused "--rw .. from a project in \$HOME" '\$HOME'
from "$home/proj" --rw . -- sh -c 'echo x > written'
[ "$rc" -eq 0 ] && [ -f "$home/proj/written" ] || fail "--rw . from a project: exit $rc, err '$err'"
from "$home" --rw "$home" -- sh -c 'echo x > named'
[ "$rc" -eq 0 ] && [ -f "$home/named" ] || fail "--rw \$HOME named absolutely: exit $rc, err '$err'"
from "$home" --ro . -- true
[ "$rc" -eq 0 ] || fail "--ro . from \$HOME: exit $rc, err '$err'"
from "$work" --rw ./home -- true
refused "--rw ./home (\$HOME itself)" '\$HOME'

# a profile's "." is its own directory: a profile in $HOME granting "." is refused, one in a project runs
printf '[fs]\nrw = ["."]\n' >"$home/cage.toml"; cp "$home/cage.toml" "$home/proj/cage.toml"
from "$home/proj" --profile "$home/cage.toml" -- true
refused "a profile in \$HOME granting ." '\$HOME'
from "$home/proj" --profile "$home/proj/cage.toml" -- true
[ "$rc" -eq 0 ] || fail "a profile in a project granting .: exit $rc, err '$err'"
# the built-in npm profile grants "." of the working directory
from "$home" --profile npm -- true
refused "--profile npm from \$HOME" '\$HOME'
from "$home/proj" --profile npm -- true
[ "$rc" -eq 0 ] || fail "--profile npm from a project: exit $rc, err '$err'"

# the root and system directories
from / --rw . -- true
refused "--rw . from /" 'the root'
from /usr --rw . -- true
refused "--rw . from /usr" 'the system directory /usr'
from /usr/share --rw .. -- true
refused "--rw .. from /usr/share" 'the system directory /usr'
from /usr --ro . -- true
[ "$rc" -eq 0 ] || fail "--ro . from /usr: exit $rc, err '$err'"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)" >&2; exit 1; fi
echo ok
