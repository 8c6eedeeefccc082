#!/usr/bin/env bash
# The Landlock-only mechanism refuses, each by name, what it cannot enforce until the loss is accepted
# with --allow-degraded (pid isolation), and refuses outright what no acceptance can give (--hide,
# --tmpfs, a --ro beneath a --rw, --hostname); --dry-run names the mechanism.
. "$(dirname "$0")/landlock_only.bash"
# Pid isolation is lost without namespaces: refused until accepted, naming the element.
if "${L[@]}" --ro "$d/ro" -- true 2>"$d/err"; then fail "ran without accepting the loss of pid isolation"; fi
grep -q "pid" "$d/err" && grep -q "allow-degraded" "$d/err" || fail "refusal does not name the element: $(cat "$d/err")"
"${L[@]}" --allow-degraded pid --ro "$d/ro" -- true 2>/dev/null; rc=$?
[ $rc -eq 0 ] || fail "accepted run failed ($rc)"
# --hide and --tmpfs are refused the same way.
if "${L[@]}" --allow-degraded pid --ro "$d" --hide "$d/secret" -- true 2>"$d/err"; then fail "--hide ran"; fi
grep -q "hide" "$d/err" || fail "hide refusal unclear"
"${L[@]}" --allow-degraded pid --dry-run -- true | grep -q "mechanism landlock " || fail "dry-run does not show the mechanism"

# Elements Landlock cannot enforce are refused, each by name: a --ro beneath a --rw, --hostname.
mkdir -p "$d/rw/sub"
if "${L[@]}" --allow-degraded pid --rw "$d/rw" --ro "$d/rw/sub" -- true 2>"$d/err"; then fail "nested --ro ran"; fi
grep -q "nested-ro" "$d/err" || fail "nested --ro refusal unclear: $(cat "$d/err")"
if "${L[@]}" --allow-degraded pid --hostname box -- true 2>"$d/err"; then fail "--hostname ran"; fi
grep -q "hostname" "$d/err" || fail "--hostname refusal unclear: $(cat "$d/err")"
nothing_left
echo "landlock_only_refusals: ok"
