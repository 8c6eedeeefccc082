#!/usr/bin/env bash
# Attack (pending: a design trade-off for the lead, not fixed on branch attack5): a directory of the
# curated /etc that is bound read-only instead of copied (etc_view.cc, copy_is_bind) is the host's
# directory, live: a file the host adds during the run appears inside, whatever its mode, where the
# snapshot copy showed only what was world-readable at start. As root the workload is uid 0, the
# owner of a root file: a 0600 file (a key, a token) that an administrator or a package writes into
# /etc/fonts, /etc/xdg, ... while a long sandbox runs is readable inside. As the user, a file only the
# user may read (0400; likewise its group's 0640) is shown, which the curated view never shows.
# (The directories bound before this change, /etc/alternatives, /etc/ssl/certs, /etc/java-*, and any
# directory of more than 64 entries, were live already.)
# Policy: default view; the curated directory is a tmpfs over the first of /etc/fonts, /etc/xdg, ...
# in a private mount namespace (as etc_bind.sh), with eight world-readable files so that it is bound.
# The workload waits on a fifo in --rw, the host writes `secret` (0600 root / 0400 user), the workload
# reads it. Expected: not there (the copy's snapshot). Twin: the eight files read.
# Found on main (root and user): the workload printed the secret; 49a34b6 (copy): no such file.
. "$(dirname "$0")/../etc_cover.bash"
cover
for i in 1 2 3 4 5 6 7 8; do echo "font $i" >"$dir/f$i"; chmod 644 "$dir/f$i"; done
mkdir "$work/rw" && mkfifo "$work/rw/ready" "$work/rw/go" && chmod -R 777 "$work/rw"
exec 3<>"$work/rw/ready"  # read-write: opening never blocks
"$CAGE" ${mech[@]+"${mech[@]}"} --rw "$work/rw" -- sh -c \
  "cat $dir/f1 $dir/f8; echo ready >$work/rw/ready; read x <$work/rw/go; cat $dir/secret 2>&1" \
  </dev/null >"$work/.out" 2>"$work/.err" &
cage_pid=$!
if ! read -r -t 60 -u 3 line; then
  fail "the workload never said ready: $(cat "$work/.err")"
  kill "$cage_pid"; wait "$cage_pid"; finish
fi
(umask 077; echo HOST-SECRET >"$dir/secret"; is_root && [ "${CAGE_ETC_USERNS:-0}" != 1 ] || chmod 0400 "$dir/secret")
echo go >"$work/rw/go"
wait "$cage_pid"
out=$(cat "$work/.out")
[ "$(sed -n 1,2p <<<"$out" | tr '\n' ' ')" = "font 1 font 8 " ] && pass "twin: the files of $dir read inside" ||
  fail "twin: $out $(cat "$work/.err")"
grep -q HOST-SECRET <<<"$out" && fail "a file the host wrote into $dir during the run was read inside" ||
  pass "a file the host wrote into $dir during the run is not in the view: $(sed -n 3p <<<"$out")"
finish
