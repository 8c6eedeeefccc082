#!/usr/bin/env bash
# Attack: escape the mount view through a file descriptor inherited from the caller: fd 9 opened on
# the host's / and fd 8 on an ungranted directory before cage runs (`exec 9</`), then used inside
# via /proc/self/fd/9/... or openat.
# Policy: default view. Expected: only fds 0-2 cross into the workload. Twin: stdin and stdout do.
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/secret" && echo secret-content >"$work/secret/file"
exec 9</ 8<"$work/secret" 7<"$work/secret/file"
rc=0
out=$(echo piped-in | "$CAGE" ${mech[@]+"${mech[@]}"} -- sh -c 'cat; ls /proc/self/fd/; ls /proc/self/fd/9/ /proc/self/fd/8/ 2>&1; cat /proc/self/fd/7 <&- 2>&1; cat <&7 2>&1' 2>&1) || rc=$?
exec 9<&- 8<&- 7<&-
grep -q piped-in <<<"$out" && pass "twin: stdin and stdout cross" || fail "twin: stdin did not cross: $out"
grep -q -e secret-content -e '^file$' -e '^etc$' -e '^root$' <<<"$out" &&
  fail "an inherited fd leads to host files: $out" || pass "inherited fds 7, 8, 9 lead nowhere"
finish
