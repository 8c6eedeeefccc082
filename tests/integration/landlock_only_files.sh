#!/usr/bin/env bash
# Files under the Landlock-only mechanism: granted reads and writes work, ungranted ones fail and the
# host is unchanged, HOME and TMPDIR are private, and a mode change (outside Landlock) is checked per call.
. "$(dirname "$0")/landlock_only.bash"
# Reads: granted works, ungranted fails.
[ "$("${A[@]}" -- cat "$d/ro/f")" = data ] || fail "granted read failed"
if "${A[@]}" -- cat "$d/secret" >/dev/null 2>&1; then fail "read an ungranted file"; fi
# Writes: --rw works, --ro and elsewhere fail, host unchanged.
"${A[@]}" -- sh -c "echo ok > $d/rw/x" || fail "allowed write failed"
[ "$(cat "$d/rw/x")" = ok ] || fail "allowed write lost"
if "${A[@]}" -- sh -c "echo x > $d/ro/y" 2>/dev/null; then fail "wrote into a --ro grant"; fi
if "${A[@]}" -- sh -c "echo x > $d/out/y" 2>/dev/null; then fail "wrote outside the grants"; fi
[ ! -e "$d/ro/y" ] && [ ! -e "$d/out/y" ] || fail "denied write reached the host"
# HOME and TMPDIR are private, writable, and gone afterwards.
"${A[@]}" -- sh -c 'echo h > "$HOME/h" && echo t > "$TMPDIR/t" && case "$HOME" in /tmp/cage-private.*) ;; *) exit 9;; esac' \
  || fail "private HOME/TMPDIR unusable"
# chmod is outside Landlock: checked by cage per call (tests/escape/metadata.sh), refused here for a --ro file.
chmod 644 "$d/ro/f"
if "${A[@]}" -- chmod 666 "$d/ro/f" 2>/dev/null; then fail "chmod of a --ro file worked"; fi
[ "$(stat -c %a "$d/ro/f")" = 644 ] || fail "--ro file's mode changed"
"${L[@]}" --allow-degraded pid,metadata --rw "$d/rw" -- chmod 600 "$d/rw/x" || fail "twin: chmod with metadata accepted failed"
[ "$(stat -c %a "$d/rw/x")" = 600 ] || fail "twin: chmod did not land"
nothing_left
echo "landlock_only_files: ok"
