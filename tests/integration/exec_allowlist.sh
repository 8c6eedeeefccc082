#!/usr/bin/env bash
# --exec and [exec] run (issue 22, point 2): with an allowlist the command runs what is listed
# (execve by cage-probe, which is static and reports the errno) and nothing else: an unlisted system
# binary, a copy of a listed one in a --rw grant, and a script whose #! interpreter is unlisted are
# refused with EACCES, each next to its allowed twin. Under namespaces a written file cannot be run
# through the dynamic loader either (noexec mount: "failed to map segment"). Refusals of cage itself
# (a missing path, a path in a writable grant, the loader as the command, a command line outside the
# pinned shape) exit 125 naming the input before anything starts; --dry-run and --print-profile show
# the allowlist. Both mechanisms where the Landlock-only one starts.
. "$(dirname "$0")/../escape/lib.bash"
probe=$CAGE_PROBE
mkdir -p "$work/rw" "$work/scripts"
cp /usr/bin/id "$work/rw/myid"
printf '#!/bin/sh\necho script-ran\n' >"$work/scripts/s.sh"
chmod 755 "$work/rw" "$work/scripts" "$work/rw/myid" "$work/scripts/s.sh"
sh_real=$(readlink -f /bin/sh)
loader=$(readlink -f /lib64/ld-linux-x86-64.so.2 2>/dev/null || true)
uid=$(id -u)

mechs=(namespaces)
landlock_mechanism && mechs+=(landlock)
[ ${#mechs[@]} -gt 0 ] || { finish_early=1; echo "skip: neither mechanism can enforce --exec here as this user"; }
[ "${finish_early:-0}" = 1 ] && { [ "$failures" -eq 0 ] && exit 77; finish; }
# The runs below that are not per mechanism use the first one that enforces --exec.
main=(--mechanism "${mechs[0]}")
[ "${mechs[0]}" = landlock ] && main+=(--allow-degraded pid,exec-written)
for m in "${mechs[@]}"; do
  opts=(--mechanism "$m" --ro "$probe_dir")
  [ "$m" = landlock ] && opts+=(--allow-degraded pid,exec-written)
  cage_run "${opts[@]}" --exec /usr/bin/id -- "$probe" exec /usr/bin/id -u
  [ "$rc" -eq 0 ] && [ "$out" = "$uid" ] && pass "$m: a listed binary runs" || fail "$m: listed /usr/bin/id: exit $rc, '$out' $err"
  cage_run "${opts[@]}" --exec /usr/bin/id -- "$probe" exec /usr/bin/whoami
  expect_rc 13 "$m: an unlisted system binary is refused (EACCES)"
  cage_run "${opts[@]}" -- "$probe" exec /usr/bin/whoami
  expect_rc 0 "$m: twin: without --exec the same binary runs"
  cage_run "${opts[@]}" --rw "$work/rw" --exec /usr/bin/id -- "$probe" exec "$work/rw/myid" -u
  expect_rc 13 "$m: a copy of a listed binary in a --rw grant is refused (EACCES)"
  cage_run "${opts[@]}" --rw "$work/rw" -- "$probe" exec "$work/rw/myid" -u
  [ "$rc" -eq 0 ] && [ "$out" = "$uid" ] && pass "$m: twin: the copy runs without --exec" || fail "$m: copy twin: exit $rc $err"
  cage_run "${opts[@]}" --ro "$work/scripts" --exec "$work/scripts/s.sh" -- "$probe" exec "$work/scripts/s.sh"
  expect_rc 13 "$m: a listed script whose interpreter is not listed is refused (EACCES)"
  cage_run "${opts[@]}" --ro "$work/scripts" --exec "$work/scripts/s.sh" --exec "$sh_real" -- "$probe" exec "$work/scripts/s.sh"
  [ "$rc" -eq 0 ] && [ "$out" = script-ran ] && pass "$m: twin: with its interpreter listed it runs" ||
    fail "$m: script twin: exit $rc, '$out' $err"
  # The command is added by itself; what it then runs is not.
  cage_run "${opts[@]}" --exec /usr/bin/id -- sh -c 'id -u && whoami'
  [ "$rc" -ne 0 ] && [ "$out" = "$uid" ] && grep -q 'whoami: Permission denied' <<<"$err" &&
    pass "$m: the command (sh) is added, an unlisted program it starts is not" || fail "$m: sh -c: exit $rc, '$out' $err"
done

# The loader's way around Landlock's execute right: under namespaces a --rw grant is noexec, so a
# written file cannot be mapped executable (ld.so FILE). System files stay runnable that way
# (documented in cage(1), EXEC ALLOWLIST).
if [ -n "$loader" ] && [ "${mechs[0]}" = namespaces ]; then
  cage_run "${main[@]}" --rw "$work/rw" --exec /usr/bin/id -- sh -c "$loader $work/rw/myid -u"
  [ "$rc" -ne 0 ] && grep -q 'failed to map segment' <<<"$err" &&
    pass "namespaces: ld.so cannot run a file written in a --rw grant (noexec)" || fail "ld.so on --rw: exit $rc, '$out' $err"
  cage_run --rw "$work/rw" -- sh -c "$loader $work/rw/myid -u"
  [ "$rc" -eq 0 ] && [ "$out" = "$uid" ] && pass "twin: without --exec the loader runs it" || fail "ld.so twin: exit $rc $err"
  cage_run --exec /usr/bin/id -- "$loader" /usr/bin/id
  expect_rc 125 "the dynamic loader as the command is refused"
  grep -q "invalid_policy: COMMAND $loader" <<<"$err" || fail "loader refusal names the command: $err"
fi

# cage's own refusals: exit 125, the input named, nothing run.
cage_run "${main[@]}" --exec "$work/none" -- true
expect_rc 125 "a missing --exec path is refused"
grep -q "invalid_policy: --exec $work/none: no such file" <<<"$err" || fail "missing path message: $err"
cage_run "${main[@]}" --rw "$work/rw" --exec "$work/rw/myid" -- true
expect_rc 125 "an --exec path in a --rw grant is refused"
grep -q "lies in a writable grant" <<<"$err" || fail "writable message: $err"
cage_run --exec '/usr/lib/jvm/*/bin' -- true
expect_rc 125 "a glob is refused"

# [exec] run: the command line must match the pinned shape.
cat >"$work/pin.toml" <<'EOF'
[exec]
allow = ["/usr/bin/id"]
run = ["echo", "clone", "{url}"]
EOF
cage_run "${main[@]}" --profile "$work/pin.toml" -- echo clone https://example.com/r.git
[ "$rc" -eq 0 ] && [ "$out" = "clone https://example.com/r.git" ] && pass "a matching command line runs" ||
  fail "pinned match: exit $rc, '$out' $err"
cage_run "${main[@]}" --profile "$work/pin.toml" -- echo clone file:///etc/passwd
expect_rc 125 "a command line outside the pinned shape is refused"
[ -z "$out" ] && grep -q "usage_error: COMMAND argument 2 'file:///etc/passwd': does not match {url}" <<<"$err" ||
  fail "pinned mismatch message: '$out' $err"
cage_run "${main[@]}" --profile "$work/pin.toml" -- echo clone https://example.com/r.git --upload-pack=x
expect_rc 125 "an extra argument is refused"

# --dry-run and --print-profile say what may run.
cage_run "${main[@]}" --dry-run --profile "$work/pin.toml" -- echo clone https://example.com/r.git
grep -q '^may exec:    /usr/bin/id  # .*exec.allow' <<<"$out" && grep -q '# the command (echo), added' <<<"$out" &&
  grep -q '^pinned:      echo clone {url}' <<<"$out" && pass "--dry-run lists the allowlist and the pinned shape" ||
  fail "dry-run: $out $err"
cage_run "${main[@]}" --dry-run --verbose --rw "$work/rw" --exec /usr/bin/id -- true
if [ "${mechs[0]}" = namespaces ]; then
  grep -q "bind_rw  $work/rw (noexec)" <<<"$out" && pass "--dry-run --verbose shows the noexec mount" || fail "verbose: $out"
else
  grep -q "^degraded: exec-written:" <<<"$out" && pass "--dry-run --verbose lists the accepted loss" || fail "verbose: $out"
fi
cage_run --print-profile --profile "$work/pin.toml" --exec /usr/bin/whoami
printf '%s\n' "$out" >"$work/printed.toml"
grep -q '^\[exec\]' <<<"$out" && grep -q "allow = \\[ '/usr/bin/id', '/usr/bin/whoami' \\]" <<<"$out" &&
  grep -q "run = \\[ 'echo', 'clone', '{url}' \\]" <<<"$out" && pass "--print-profile prints [exec]" || fail "print-profile: $out $err"
cage_run "${main[@]}" --profile "$work/printed.toml" --ro "$probe_dir" -- echo clone https://example.com/x
expect_rc 0 "the printed profile loads and its pinned shape still matches"
# Landlock-only has no noexec mounts: an allowed directory with a writable grant beneath it is
# refused (a file written there could be run directly); its twin without the grant beneath runs.
if landlock_mechanism; then
  mkdir -p "$work/tree/out" && chmod -R 755 "$work/tree"
  cage_run --mechanism landlock --allow-degraded pid,exec-written --ro "$work/tree" --rw "$work/tree/out" \
    --exec "$work/tree" -- true
  expect_rc 125 "landlock: --exec DIR with a --rw beneath it is refused"
  grep -q "invalid_policy: --exec $work/tree: the writable $work/tree/out" <<<"$err" || fail "refusal: $err"
  cage_run --mechanism landlock --allow-degraded pid,exec-written --ro "$work/tree" --rw "$work/tree/out" \
    --exec /usr/bin/true -- true
  expect_rc 0 "landlock: twin: the same grants with a narrower --exec run"
fi
finish
