#!/usr/bin/env bash
# Private filesystems have sizes (issue 22, point 5): a --tmpfs PATH:size=SIZE and --tmpfs-size (the
# private /tmp, /var/tmp, /run, $HOME and /dev/shm) give ENOSPC past the size and take what fits; the
# default is 1/8 of RAM; a run that fails on a full one is disk_quota_exceeded in the result, its
# twin within the size completed; the profile keys round-trip through --print-profile; the
# Landlock-only mechanism, which has no private tmpfs, refuses a size unless the loss is accepted.
set -u
. "$(dirname "$0")/limits_lib.bash"
run() { timeout 60 "$CAGE" "$@"; }
fill() { echo "dd if=/dev/zero of=$1/f bs=1M count=$2 2>&1"; }  # MiB into DIR

# An explicit size: 12M written into 8M fails with ENOSPC, 4M fits.
run --result "$work/over.json" --tmpfs /scratch:size=8M -- sh -c "$(fill /scratch 12)" >"$work/over.out" 2>"$work/over.err"
rc=$?
grep -q "No space left on device" "$work/over.out" || fail "no ENOSPC past the size: $(cat "$work/over.out")"
[ $rc -eq 1 ] || fail "over: exit $rc"
valid_result "$work/over.json"
[ "$(json "$work/over.json" 'd["class"]')" = disk_quota_exceeded ] || fail "over: class $(cat "$work/over.json")"
[ "$(json "$work/over.json" '[t["used_bytes"] for t in d["tmpfs"] if t["path"]=="/scratch"][0]')" = 8388608 ] ||
  fail "over: /scratch usage $(json "$work/over.json" 'd["tmpfs"]')"
grep -q "private filesystem full: /scratch (size 8M)" "$work/over.err" || fail "over: note $(cat "$work/over.err")"
run --result "$work/under.json" --tmpfs /scratch:size=8M -- sh -c "$(fill /scratch 4)" >"$work/under.out" 2>&1 ||
  fail "under: $(cat "$work/under.out")"
[ "$(json "$work/under.json" 'd["class"]')" = completed ] || fail "under: class $(cat "$work/under.json")"
# A full filesystem the command copes with (exit 0) stays completed; the usage still shows it full.
run --result "$work/coped.json" --tmpfs /scratch:size=8M -- sh -c "{ $(fill /scratch 12); } >/dev/null; true" ||
  fail "coped: exit $?"
[ "$(json "$work/coped.json" 'd["class"]')" = completed ] || fail "coped: class $(cat "$work/coped.json")"
[ "$(json "$work/coped.json" '[t["full"] for t in d["tmpfs"] if t["path"]=="/scratch"][0]')" = true ] || fail "coped: not full"

# --tmpfs-size: every private tmpfs of the default view, $HOME and /dev/shm among them.
for dir in /tmp /var/tmp /run '$HOME' /dev/shm; do
  run --tmpfs-size 8M -- sh -c "$(fill "$dir" 12)" >"$work/d.out" 2>&1 && fail "$dir: 12M fit in 8M"
  grep -q "No space left on device" "$work/d.out" || fail "$dir: $(cat "$work/d.out")"
  run --tmpfs-size 8M -- sh -c "$(fill "$dir" 4)" >"$work/d.out" 2>&1 || fail "$dir: 4M did not fit: $(cat "$work/d.out")"
done
echo; echo "ok: explicit sizes and --tmpfs-size"

# The default: 1/8 of RAM, in whole MiB (df reports 1K blocks).
want_kib=$(awk '/^MemTotal:/ { print int($2 / 8 / 1024) * 1024 }' /proc/meminfo)
got_kib=$(run -- df -k /tmp | awk 'NR == 2 { print $2 }')
[ "$got_kib" = "$want_kib" ] || fail "default /tmp size ${got_kib}K, expected ${want_kib}K (1/8 of RAM)"

# Profile keys, --dry-run and --print-profile.
printf '[limits]\ntmpfs_size = "16M"\n[fs]\ntmpfs = ["/scratch:size=8M"]\n' >"$work/p.toml"
run --profile "$work/p.toml" --dry-run -- true >"$work/dry.txt" || fail "dry-run with the profile"
grep -q "/tmp 16M" "$work/dry.txt" && grep -q "/scratch (8M)" "$work/dry.txt" || fail "dry-run sizes: $(cat "$work/dry.txt")"
run --profile "$work/p.toml" --print-profile -- true >"$work/printed.toml" || fail "print-profile"
grep -Eq "tmpfs_size = [\"']16M[\"']" "$work/printed.toml" && grep -q '/scratch:size=8M' "$work/printed.toml" ||
  fail "print-profile: $(cat "$work/printed.toml")"
run --profile "$work/printed.toml" -- sh -c "df -k /tmp /scratch" >"$work/df.txt" || fail "printed profile does not run"
[ "$(awk 'NR == 2 { print $2 }' "$work/df.txt")" = 16384 ] && [ "$(awk 'NR == 3 { print $2 }' "$work/df.txt")" = 8192 ] ||
  fail "printed profile sizes: $(cat "$work/df.txt")"
echo "ok: default, profile keys, --dry-run, --print-profile"

# Landlock-only: no private tmpfs to size; refused, or accepted as the tmpfs loss.
ll=(--mechanism landlock --allow-degraded pid)
if run "${ll[@]}" -- true 2>"$work/ll.err"; then
  run "${ll[@]}" --tmpfs-size 8M -- true 2>"$work/ll.err" && fail "landlock: --tmpfs-size silently dropped"
  grep -q "spawn_sandbox_unavailable: .*tmpfs: .*--tmpfs-size has no private tmpfs" "$work/ll.err" ||
    fail "landlock refusal: $(cat "$work/ll.err")"
  run "${ll[@]}" --allow-degraded tmpfs --tmpfs-size 8M -- true 2>"$work/ll.err" ||
    fail "landlock with the loss accepted: $(cat "$work/ll.err")"
  echo "ok: landlock-only refuses a size unless tmpfs is an accepted loss"
else
  echo "note: the Landlock-only mechanism is unavailable here: $(head -1 "$work/ll.err")"
fi
echo PASS
