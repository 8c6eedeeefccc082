#!/usr/bin/env bash
# --uid (issue 22, point 8): the workload is nobody (65534) inside its user namespace, its passwd entry
# says so, and what it writes into a --rw grant is still owned by the caller on the host. Landlock
# alone has no user namespace: another id is refused (exit 125, nothing started), the caller's own id
# accepted.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir "$work/out"
me=$(id -u)
cage_run -- id -u
[ "$out" = "$me" ] && pass "without --uid: the caller's id ($me)" || fail "id without --uid: $out $err"
cage_run --uid nobody --rw "$work/out" -- sh -c 'id -u; id -g; id -un; echo x > "$0/f"; stat -c %u "$0/f"' "$work/out"
expect_rc 0 "--uid nobody"
[ "$out" = "$(printf '65534\n65534\nnobody\n65534')" ] && pass "inside: 65534 (nobody), owning its file" ||
  fail "inside: $out"
[ "$(stat -c %u "$work/out/f")" = "$me" ] && pass "on the host the file is the caller's ($me)" ||
  fail "host owner $(stat -c %u "$work/out/f")"
cage_run --uid 1234:99 -- sh -c 'id -u; id -g'
[ "$out" = "$(printf '1234\n99')" ] && pass "--uid 1234:99" || fail "1234:99: $out $err"
cage_run --uid 0 --rw "$work/out" -- touch "$work/out/root"
[ "$rc" -eq 125 ] && [ ! -e "$work/out/root" ] && grep -q "root inside" <<<"$err" && pass "--uid 0 is refused" ||
  fail "--uid 0: $rc $err"
if landlock_mechanism; then
  cage_run --mechanism landlock --allow-degraded pid --uid nobody --rw "$work/out" -- touch "$work/out/ll"
  [ "$rc" -eq 125 ] && [ ! -e "$work/out/ll" ] && grep -q "spawn_sandbox_unavailable: --uid nobody" <<<"$err" &&
    pass "Landlock alone refuses another id" || fail "landlock --uid nobody: $rc $err"
  own=(--uid "$me:$(id -g)")
  is_root && own=()  # root's own id is 0, refused everywhere: the twin is the run without --uid
  cage_run --mechanism landlock --allow-degraded pid ${own[@]+"${own[@]}"} --rw "$work/out" -- sh -c 'touch "$0/ll"; id -u' "$work/out"
  [ "$rc" -eq 0 ] && [ "$out" = "$me" ] && [ -e "$work/out/ll" ] && pass "Landlock alone accepts the caller's own id" ||
    fail "landlock own id: $rc $err"
else
  echo "note: Landlock-only half skipped (cage refuses that mechanism on this kernel)"
fi
finish
