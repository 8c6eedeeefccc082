#!/usr/bin/env bash
# Attack: write outside --rw: into a --ro grant, $HOME, /usr, /, /etc, /tmp, and the host's /tmp.
# Policy: --ro $work/ro --rw $work/rw. Expected: the --rw write lands on the host; every other write
# fails or lands in cage's private tmpfs (never on the host).
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/ro" "$work/rw"
echo original >"$work/ro/file"
mode=$(stat -c %a "$work/ro/file")
pol=(--ro "$work/ro" --rw "$work/rw" --ro "$probe_dir")

cage_run "${pol[@]}" -- "$CAGE_PROBE" write "$work/rw/new"
expect_rc 0 "twin: write into --rw"
[ "$(cat "$work/rw/new" 2>/dev/null)" = probe ] || fail "twin: --rw write did not reach the host"

for target in "$work/ro/file" "$work/ro/new" /usr/cage-escape /cage-escape /etc/cage-escape /etc/hosts \
              /usr/bin/cage-escape /proc/cage-escape /dev/cage-escape; do
  cage_run "${pol[@]}" -- "$CAGE_PROBE" write "$target"
  [ "$rc" -ne 0 ] && pass "cannot write $target ($(tail -1 <<<"$err"))" || fail "wrote $target inside cage"
done
[ "$(cat "$work/ro/file")" = original ] || fail "--ro file changed on the host"
[ -e "$work/ro/new" ] && fail "--ro dir got a new file on the host"
# $HOME, /tmp (so the parent of the grants too) are private tmpfs: writes may succeed but never reach the host.
marker=cage-escape-$$
cage_run "${pol[@]}" -- sh -c "echo x >\"\$HOME/$marker\"; echo x >/tmp/$marker; echo x >/var/tmp/$marker; echo x > /run/$marker; echo x >$work/$marker"
for f in "$HOME/$marker" "/tmp/$marker" "/var/tmp/$marker" "/run/$marker" "$work/$marker"; do
  if [ -e "$f" ]; then fail "a write inside cage reached the host: $f"; rm -f "$f"; else pass "$f stays private"; fi
done
# Changing the mode or owner of a --ro file, or truncating it, fails too.
cage_run "${pol[@]}" -- sh -c "chmod 777 '$work/ro/file' || exit 3; : >'$work/ro/file'"
[ "$rc" -ne 0 ] && pass "chmod/truncate of a --ro file fails" || fail "chmod/truncate of a --ro file worked"
[ "$(stat -c %a "$work/ro/file")" = "$mode" ] && [ "$(cat "$work/ro/file")" = original ] || fail "--ro file's mode or content changed"
finish
