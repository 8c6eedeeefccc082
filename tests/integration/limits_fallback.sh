#!/usr/bin/env bash
# With no usable cgroup (the unprivileged user here; for root, cgroups hidden by a private tmpfs over
# /sys/fs/cgroup) a limit is never silently dropped: a warning on stderr, a limits_not_enforced event,
# the result lists it, --dry-run and --check show it, RLIMIT_AS / RLIMIT_NPROC are set where they
# can bind, and --strict-limits refuses (exit 125) naming the limit.
set -u
. "$(dirname "$0")/limits_lib.bash"
# hidden CMD...: runs CMD where cage finds no cgroup.
if is_root; then
  unshare -m true 2>/dev/null || { echo "skip: cannot make a private mount namespace to hide cgroups"; exit 77; }
  hidden() { unshare -m sh -c 'mount -t tmpfs none /sys/fs/cgroup && exec "$@"' sh "$@"; }
else
  hidden() { "$@"; }
  if cgroup_usable memory 32M; then echo "skip: this user has a usable cgroup; nothing to fall back from"; exit 77; fi
fi

hidden "$CAGE" --memory 32M --pids 64 --cpu 0.5 --result "$work/r.json" --audit "$work/a.log" \
  -- sh -c 'ulimit -v' >"$work/out" 2>"$work/err" || fail "run with fallback limits failed: $(cat "$work/err")"
valid_result "$work/r.json"; valid_audit "$work/a.log"
for l in "--memory 32M" "--pids 64" "--cpu 0.5"; do
  grep -q -- "cage: warning: $l is not enforced by a cgroup" "$work/err" || fail "no warning for $l: $(cat "$work/err")"
  events "$work/a.log" limits_not_enforced | grep -q -- "\"limit\":\"$l\"" || fail "no limits_not_enforced event for $l"
  json "$work/r.json" 'd["limits"]["not_enforced"]' | grep -q -- "\"$l\"" || fail "result does not list $l"
done
# RLIMIT_AS approximates --memory: 32M = 32768 KiB as the shell sees it.
[ "$(cat "$work/out")" = 32768 ] || fail "RLIMIT_AS not set to 32M (ulimit -v says $(cat "$work/out"))"
events "$work/a.log" limits_not_enforced | grep -q '"fallback":"RLIMIT_AS"' || fail "fallback not named"
if is_root; then
  events "$work/a.log" limits_not_enforced | grep -- '--pids' | grep -q 'does not bind root' ||
    fail "root's --pids must say RLIMIT_NPROC does not bind root"
else
  events "$work/a.log" limits_not_enforced | grep -q '"fallback":"RLIMIT_NPROC"' || fail "RLIMIT_NPROC fallback not named"
fi
# --dry-run and --check say the same, without running anything.
hidden "$CAGE" --memory 32M --dry-run -- true | grep -q "WARNING: --memory 32M not enforced by a cgroup (RLIMIT_AS instead)" ||
  fail "--dry-run hides the unenforced limit"
hidden "$CAGE" --check >"$work/check" 2>&1
grep -q "cgroup_limits: .*--memory only approximated by RLIMIT_AS.*--cpu NOT enforced" "$work/check" ||
  fail "--check does not report unenforced limits: $(cat "$work/check")"
# The denial twin: --strict-limits refuses instead.
if hidden "$CAGE" --memory 32M --strict-limits --json-errors -- true 2>"$work/err"; then fail "--strict-limits ran anyway"; fi
tr -d ' \n' <"$work/err" | grep -q '"class":"spawn_sandbox_unavailable".*"input":"--memory32M"' ||
  fail "--strict-limits refusal unclear: $(cat "$work/err")"
# An rlimit the user gave wins over the approximation.
hidden "$CAGE" --memory 32M --rlimit as=67108864 -- sh -c 'ulimit -v' >"$work/out" 2>/dev/null
[ "$(cat "$work/out")" = 65536 ] || fail "--rlimit as was overridden by the fallback"
echo PASS
